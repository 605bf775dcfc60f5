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
// Returns the names of the other .csv files already in `dir` (an earlier report's tables that
// this one does not have): they are left alone, and the caller says they are not part of it.
std::vector<std::string> WriteCsvDirectory(const std::vector<const Table*>& tables,
                                           const std::string& dir,
                                           const std::vector<std::string>& inputs = {});
// One warning line for what WriteCsvDirectory returned ("" when nothing is left over).
std::string LeftoverCsvWarning(const std::string& dir, const std::vector<std::string>& names);

}  // namespace sextant
