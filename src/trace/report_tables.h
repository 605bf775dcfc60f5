// Where each table of `trace report` is shown: one entry per table, in page order, naming
// its section of the HTML page (or none: the machine outputs only), whether the page keeps
// only its top rows per rank, and how the console summary shows it. The console and the page
// iterate this list; --json, --csv and --xlsx hold every table whatever it says. A table an
// analysis adds without an entry here fails ReportTablesTest.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

namespace sextant {

struct TablePresentation {
  // Console rows: none, the --top value (capped by `console_cap`), or a fixed count.
  static constexpr size_t kNone = 0;
  static constexpr size_t kTop = std::numeric_limits<size_t>::max();

  std::string_view name;
  std::string_view html_section;  // "" = not on the page
  bool html_long = false;         // the page keeps its top rows per rank
  size_t console_rows = kNone;
  size_t console_cap = kTop;  // with kTop: at most this many
  std::vector<std::string_view> console_hidden;
  size_t console_width = 60;  // widest text cell on the console
  bool html_chart = false;    // drawn on the page from its rows, not shown as a table
};

const std::vector<TablePresentation>& ReportTablePresentations();
const TablePresentation* FindTablePresentation(std::string_view name);

}  // namespace sextant
