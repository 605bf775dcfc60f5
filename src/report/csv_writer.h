// CSV (RFC 4180) rendering of Tables: one file per table.
#pragma once

#include <string>
#include <vector>

#include "report/table.h"

namespace sextant {

// Header row of column keys, then rows; reals at full precision; quotes where needed.
std::string RenderCsv(const Table& table);
// The tables of one folder of a CSV output: `subdir` "" is the output directory itself,
// "rank0" a folder inside it.
struct CsvFolder {
  std::string subdir;
  std::vector<const Table*> tables;
};

// Writes `<dir>/<subdir>/<table.name()>.csv` for each table of each folder, creating `dir`
// (not its parent) and the folders if needed. All or nothing: every file is first written
// into a temporary directory (a hidden sibling of a new `dir`, or hidden inside an existing
// one) and only moved into place once all are complete; on failure the temporary directory is
// removed and `dir` is as it was. Throws UserError if the directory or a file cannot be
// written, or a file is one of `inputs`.
// Returns what `dir` holds that this output did not write, as paths relative to it: .csv
// files (also inside the folders written) and folders of .csv files ("rank3/"), left by an
// earlier run. They are left alone; the caller says they are not part of this output.
std::vector<std::string> WriteCsvFolders(const std::vector<CsvFolder>& folders,
                                         const std::string& dir,
                                         const std::vector<std::string>& inputs = {});
// WriteCsvFolders with the tables directly in `dir`.
std::vector<std::string> WriteCsvDirectory(const std::vector<const Table*>& tables,
                                           const std::string& dir,
                                           const std::vector<std::string>& inputs = {});
// One warning line for what WriteCsvFolders returned ("" when nothing is left over).
std::string LeftoverCsvWarning(const std::string& dir, const std::vector<std::string>& names);

}  // namespace sextant
