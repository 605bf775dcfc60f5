// Aligned plain-text rendering of a Table for the terminal.
#pragma once

#include <string>

#include "report/table.h"

namespace sextant {

// Title line, header row, dashes, then rows; numbers right-aligned, text left-aligned.
// Cells longer than `max_cell_width` are cut with "..." (0 = never); where two different
// texts of a column would then print alike, they keep part of their end instead. A
// table of one row wider than `max_line_width` characters (0 = any width) is printed as one
// "column  value" line per column instead.
inline constexpr size_t kConsoleLineWidth = 120;
std::string RenderConsoleTable(const Table& table, size_t max_cell_width = 60,
                               size_t max_line_width = kConsoleLineWidth);

}  // namespace sextant
