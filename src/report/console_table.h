// Aligned plain-text rendering of a Table for the terminal.
#pragma once

#include <string>

#include "report/table.h"

namespace sextant {

// Title line, header row, dashes, then rows; numbers right-aligned, text left-aligned.
// Cells longer than `max_cell_width` are shortened with "..." (0 = never).
std::string RenderConsoleTable(const Table& table, size_t max_cell_width = 60);

}  // namespace sextant
