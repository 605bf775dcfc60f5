#include "report/csv_writer.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

std::string Quote(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string RenderCsv(const Table& table) {
  std::string out;
  const auto& columns = table.columns();
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    out += Quote(columns[c].key);
  }
  out += '\n';
  for (const auto& row : table.rows()) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out += ',';
      out += Quote(FormatCellExact(row[c]));
    }
    out += '\n';
  }
  return out;
}

std::vector<std::string> WriteCsvDirectory(const std::vector<const Table*>& tables,
                                           const std::string& dir,
                                           const std::vector<std::string>& inputs) {
  std::error_code ec;
  // The directory itself is made, not a chain of them: a mistyped parent is refused, as --html
  // and --xlsx refuse a file in a missing directory.
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    ThrowUserError(SourceLocation{dir}, "",
                   fmt::format("its directory {} does not exist", parent.string()));
  }
  std::filesystem::create_directory(dir, ec);
  if (ec) ThrowUserError(SourceLocation{dir}, "", "cannot create directory: " + ec.message());
  std::set<std::string> written;
  for (const Table* table : tables) {
    const std::string name = table->name() + ".csv";
    WriteFileAtomically((std::filesystem::path(dir) / name).string(), RenderCsv(*table), inputs);
    written.insert(name);
  }
  std::vector<std::string> others;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".csv" && written.count(name) == 0) others.push_back(name);
  }
  std::sort(others.begin(), others.end());
  return others;
}

std::string LeftoverCsvWarning(const std::string& dir, const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 5) list += fmt::format(", ... ({} in all)", names.size());
  return fmt::format(
      "{} also holds {} CSV file{} this report did not write ({}): they come from "
      "an earlier run, not from these inputs",
      dir, names.size(), names.size() == 1 ? "" : "s", list);
}

}  // namespace sextant
