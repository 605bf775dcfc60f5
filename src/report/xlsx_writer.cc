#include "report/xlsx_writer.h"

#include <set>

#include <xlsxwriter.h>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

// Excel forbids []:*?/\ in sheet names and limits them to 31 characters.
std::string SheetName(const std::string& name, std::set<std::string>& used) {
  std::string clean;
  for (char ch : name) clean += std::string("[]:*?/\\").find(ch) == std::string::npos ? ch : '_';
  if (clean.empty()) clean = "sheet";
  clean = clean.substr(0, 31);
  std::string candidate = clean;
  for (int n = 2; used.count(candidate); ++n) {
    std::string suffix = "_" + std::to_string(n);
    candidate = clean.substr(0, 31 - suffix.size()) + suffix;
  }
  used.insert(candidate);
  return candidate;
}

}  // namespace

void WriteXlsx(const std::vector<const Table*>& tables, const std::string& path,
               const std::vector<std::string>& inputs) {
  // libxlsxwriter writes the file by name when the workbook is closed: give it the temporary.
  AtomicFile file(path, inputs);
  lxw_workbook* workbook = workbook_new(file.temp_path().c_str());
  if (!workbook) ThrowUserError(SourceLocation{path}, "", "cannot create workbook");
  lxw_format* bold = workbook_add_format(workbook);
  format_set_bold(bold);
  std::set<std::string> used;
  for (const Table* table : tables) {
    lxw_worksheet* sheet = workbook_add_worksheet(workbook, SheetName(table->name(), used).c_str());
    const auto& columns = table->columns();
    for (size_t c = 0; c < columns.size(); ++c) {
      worksheet_write_string(sheet, 0, static_cast<lxw_col_t>(c), columns[c].header.c_str(), bold);
    }
    lxw_row_t r = 1;
    for (const auto& row : table->rows()) {
      for (size_t c = 0; c < row.size(); ++c) {
        auto col = static_cast<lxw_col_t>(c);
        if (const auto* i = std::get_if<int64_t>(&row[c])) {
          worksheet_write_number(sheet, r, col, static_cast<double>(*i), nullptr);
        } else if (const auto* d = std::get_if<double>(&row[c])) {
          if (*d == *d) worksheet_write_number(sheet, r, col, *d, nullptr);
        } else if (const auto* s = std::get_if<std::string>(&row[c])) {
          // Excel caps a cell at 32,767 characters.
          worksheet_write_string(sheet, r, col, s->substr(0, 32767).c_str(), nullptr);
        }
      }
      ++r;
    }
  }
  lxw_error err = workbook_close(workbook);
  if (err != LXW_NO_ERROR) {
    ThrowUserError(SourceLocation{path}, "",
                   std::string("cannot write workbook: ") + lxw_strerror(err));
  }
  file.Commit();
}

}  // namespace sextant
