// CSV (RFC 4180) rendering of Tables: one file per table.
#pragma once

#include <string>
#include <vector>

#include "report/table.h"

namespace sextant {

// Header row of column keys, then rows; reals at full precision; quotes where needed.
std::string RenderCsv(const Table& table);
// Writes `<dir>/<table.name()>.csv` for each table, creating `dir` if needed.
// Throws UserError if the directory or a file cannot be written, or a file is one of `inputs`.
void WriteCsvDirectory(const std::vector<const Table*>& tables, const std::string& dir,
                       const std::vector<std::string>& inputs = {});

}  // namespace sextant
