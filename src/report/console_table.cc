#include "report/console_table.h"

#include <algorithm>
#include <variant>

namespace sextant {
namespace {

std::string Shorten(std::string text, size_t max_width) {
  if (max_width == 0 || text.size() <= max_width) return text;
  if (max_width <= 3) return text.substr(0, max_width);
  return text.substr(0, max_width - 3) + "...";
}

bool IsNumber(const Cell& cell) {
  return std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
}

}  // namespace

std::string RenderConsoleTable(const Table& table, size_t max_cell_width) {
  const auto& columns = table.columns();
  std::vector<std::vector<std::string>> text(table.size());
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].header.size();
  for (size_t r = 0; r < table.size(); ++r) {
    const auto& row = table.rows()[r];
    for (size_t c = 0; c < columns.size(); ++c) {
      text[r].push_back(Shorten(FormatCell(row[c], columns[c].precision), max_cell_width));
      width[c] = std::max(width[c], text[r].back().size());
    }
  }
  std::string out;
  if (!table.title().empty()) out += table.title() + "\n";
  auto pad = [&](const std::string& s, size_t w, bool right) {
    std::string fill(w > s.size() ? w - s.size() : 0, ' ');
    return right ? fill + s : s + fill;
  };
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += "  ";
    out += pad(columns[c].header, width[c], false);
  }
  out += "\n";
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
