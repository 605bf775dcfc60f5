#include "report/console_table.h"

#include <algorithm>
#include <variant>

#include "report/cell_shortening.h"

namespace sextant {
namespace {

bool IsNumber(const Cell& cell) {
  return std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
}

// One row of many columns reads better as a list of (column, value) lines than as a line
// far wider than a terminal.
std::string RenderOneRowVertically(const Table& table, size_t max_cell_width) {
  Table vertical(table.name(), table.title(), {{"field", "", 0}, {"value", "", 0}});
  const auto& row = table.rows().front();
  for (size_t c = 0; c < table.columns().size(); ++c) {
    const Column& column = table.columns()[c];
    vertical.AddRow({column.header, FormatCell(row[c], column.precision)});
  }
  for (const auto& note : table.notes()) vertical.AddNote(note);
  std::string text = RenderConsoleTable(vertical, max_cell_width, 0);
  // No header line for a list of fields: drop the blank header and its dashes.
  size_t header = table.title().empty() ? 0 : text.find('\n') + 1;
  size_t after_dashes = text.find('\n', text.find('\n', header) + 1) + 1;
  return text.substr(0, header) + text.substr(after_dashes);
}

}  // namespace

std::string RenderConsoleTable(const Table& table, size_t max_cell_width, size_t max_line_width) {
  const auto& columns = table.columns();
  std::vector<std::vector<std::string>> text(table.size(),
                                             std::vector<std::string>(columns.size()));
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    width[c] = columns[c].header.size();
    std::vector<std::string> full;
    for (const auto& row : table.rows()) full.push_back(FormatCell(row[c], columns[c].precision));
    std::vector<std::string> shown = ShortenColumn(full, max_cell_width);
    for (size_t r = 0; r < table.size(); ++r) {
      width[c] = std::max(width[c], shown[r].size());
      text[r][c] = std::move(shown[r]);
    }
  }
  if (max_line_width > 0 && table.size() == 1 && columns.size() > 2) {
    size_t line = 0;
    for (size_t c = 0; c < columns.size(); ++c) line += width[c] + (c ? 2 : 0);
    if (line > max_line_width) return RenderOneRowVertically(table, max_cell_width);
  }
  std::string out;
  if (!table.title().empty()) out += table.title() + "\n";
  auto pad = [&](const std::string& s, size_t w, bool right) {
    std::string fill(w > s.size() ? w - s.size() : 0, ' ');
    return right ? fill + s : s + fill;
  };
  std::string header;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) header += "  ";
    header += pad(columns[c].header, width[c], false);
  }
  while (!header.empty() && header.back() == ' ') header.pop_back();  // as the rows below
  out += header + "\n";
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += "  ";
    out += std::string(width[c], '-');
  }
  out += "\n";
  for (size_t r = 0; r < table.size(); ++r) {
    std::string line;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) line += "  ";
      line += pad(text[r][c], width[c], IsNumber(table.rows()[r][c]));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  for (const auto& note : table.notes()) out += "  note: " + note + "\n";
  return out;
}

}  // namespace sextant
