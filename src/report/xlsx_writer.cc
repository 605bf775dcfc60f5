#include "report/xlsx_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include <fcntl.h>
#include <unistd.h>
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

// libxlsxwriter reports a failed close on stderr itself ("[ERROR][./src/packager.c:...]")
// before returning its code; the caller's one line says the same with the file's name. The
// library's lines go to /dev/null while it closes (only this thread writes then).
class QuietStderr {
 public:
  QuietStderr() {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ >= 0 && null >= 0) dup2(null, STDERR_FILENO);
    if (null >= 0) close(null);
  }
  ~QuietStderr() {
    std::fflush(stderr);
    if (saved_ >= 0) {
      dup2(saved_, STDERR_FILENO);
      close(saved_);
    }
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace

void WriteXlsx(const std::vector<const Table*>& tables, const std::string& path,
               const std::vector<std::string>& inputs) {
  // libxlsxwriter writes the file by name when the workbook is closed: give it the temporary.
  AtomicFile file(path, inputs);
  RefuseOtherFormatName(path, ".xlsx");
  // Each row goes to the library's temporary file as soon as the next one starts, rather than
  // into the workbook's memory, where a cell takes over 100 bytes (strings are then written in
  // their cells, not shared): a table of a row per device event costs no memory of its own.
  lxw_workbook_options options = {};
  options.constant_memory = LXW_TRUE;
  lxw_workbook* workbook = workbook_new_opt(file.temp_path().c_str(), &options);
  if (!workbook) ThrowUserError(SourceLocation{path}, "", "cannot create workbook");
  lxw_format* bold = workbook_add_format(workbook);
  format_set_bold(bold);
  // One number format per count of decimals a column shows ("0.000" for 3), so the sheet
  // reads like the console while the cells keep full precision.
  std::map<int, lxw_format*> decimals_format;
  auto number_format = [&](int decimals) -> lxw_format* {
    if (decimals <= 0) return nullptr;
    lxw_format*& f = decimals_format[decimals];
    if (f == nullptr) {
      f = workbook_add_format(workbook);
      format_set_num_format(f, ("0." + std::string(static_cast<size_t>(decimals), '0')).c_str());
    }
    return f;
  };
  std::set<std::string> used;
  for (const Table* table : tables) {
    lxw_worksheet* sheet = workbook_add_worksheet(workbook, SheetName(table->name(), used).c_str());
    const auto& columns = table->columns();
    std::vector<size_t> width(columns.size(), 0);
    for (size_t c = 0; c < columns.size(); ++c) {
      worksheet_write_string(sheet, 0, static_cast<lxw_col_t>(c), columns[c].header.c_str(), bold);
      width[c] = columns[c].header.size();
    }
    // Excel's last row is 1,048,576; a longer table keeps its first rows (the CSV has all).
    constexpr size_t kMaxRows = 1'048'575;
    lxw_row_t r = 1;
    for (const auto& row : table->rows()) {
      if (r > kMaxRows) break;
      for (size_t c = 0; c < row.size(); ++c) {
        auto col = static_cast<lxw_col_t>(c);
        if (const auto* i = std::get_if<int64_t>(&row[c])) {
          worksheet_write_number(sheet, r, col, static_cast<double>(*i), nullptr);
          if (r <= 1000) width[c] = std::max(width[c], std::to_string(*i).size());
        } else if (const auto* d = std::get_if<double>(&row[c])) {
          if (*d == *d)
            worksheet_write_number(sheet, r, col, *d, number_format(columns[c].precision));
          if (r <= 1000) width[c] = std::max<size_t>(width[c], 12);
        } else if (const auto* s = std::get_if<std::string>(&row[c])) {
          // Excel caps a cell at 32,767 characters.
          worksheet_write_string(sheet, r, col, s->substr(0, 32767).c_str(), nullptr);
          if (r <= 1000) width[c] = std::max(width[c], s->size());
        }
      }
      ++r;
    }
    // The header stays in view and filters every column; widths fit the text, within limits.
    worksheet_freeze_panes(sheet, 1, 0);
    if (!columns.empty()) {
      worksheet_autofilter(sheet, 0, 0, r - 1, static_cast<lxw_col_t>(columns.size() - 1));
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      const double chars = static_cast<double>(std::clamp<size_t>(width[c] + 2, 8, 60));
      worksheet_set_column(sheet, static_cast<lxw_col_t>(c), static_cast<lxw_col_t>(c), chars,
                           nullptr);
    }
  }
  lxw_error err = LXW_NO_ERROR;
  int system_error = 0;
  {
    const QuietStderr quiet;
    errno = 0;
    err = workbook_close(workbook);
    system_error = errno;  // the cause behind a zip error (a full disk: ENOSPC)
  }
  if (err != LXW_NO_ERROR) {
    ThrowUserError(SourceLocation{path}, "",
                   std::string("cannot write workbook: ") + lxw_strerror(err) +
                       (system_error != 0 ? std::string(" (") + std::strerror(system_error) + ")"
                                          : std::string()));
  }
  file.Commit();
}

}  // namespace sextant
