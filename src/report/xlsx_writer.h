// Excel workbook with one worksheet per Table (libxlsxwriter), the layout TraceLens users
// know from its perf reports.
#pragma once

#include <string>
#include <vector>

#include "report/table.h"

namespace sextant {

// Sheet names are the table names, cut to Excel's 31-character limit and made unique.
// Throws UserError if the file cannot be written or is one of `inputs`.
void WriteXlsx(const std::vector<const Table*>& tables, const std::string& path,
               const std::vector<std::string>& inputs = {});

}  // namespace sextant
