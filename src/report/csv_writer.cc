#include "report/csv_writer.h"

#include <filesystem>

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

void WriteCsvDirectory(const std::vector<const Table*>& tables, const std::string& dir,
                       const std::vector<std::string>& inputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) ThrowUserError(SourceLocation{dir}, "", "cannot create directory: " + ec.message());
  for (const Table* table : tables) {
    WriteFileAtomically((std::filesystem::path(dir) / (table->name() + ".csv")).string(),
                        RenderCsv(*table), inputs);
  }
}

}  // namespace sextant
