#include "report/console_table.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <variant>

namespace sextant {
namespace {

// The start of `text` up to `bytes`, moved back so that no UTF-8 character is split.
size_t CharBoundaryAtOrBefore(std::string_view text, size_t bytes) {
  while (bytes > 0 && bytes < text.size() &&
         (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) {
    --bytes;
  }
  return bytes;
}

// Cells wider than `max_width` keep their start and `tail_share` of the rest of the room
// from their end, around "..." (at the end when the share is 0).
std::string Shorten(const std::string& text, size_t max_width, double tail_share = 0) {
  if (max_width == 0 || text.size() <= max_width) return text;
  if (max_width <= 3) return text.substr(0, CharBoundaryAtOrBefore(text, max_width));
  const size_t keep = max_width - 3;
  const auto tail = static_cast<size_t>(static_cast<double>(keep) * tail_share);
  const size_t head = CharBoundaryAtOrBefore(text, keep - tail);
  size_t tail_start = text.size() - tail;
  while (tail_start < text.size() &&
         (static_cast<unsigned char>(text[tail_start]) & 0xC0) == 0x80) {
    ++tail_start;
  }
  return text.substr(0, head) + "..." + text.substr(std::min(tail_start, text.size()));
}

// Shortens one column's cells; where different texts would print the same, those cells keep
// more and more of their end (the tile shape or dtype at the end of a kernel name is often
// what tells two apart), until they print differently (if they can).
std::vector<std::string> ShortenColumn(const std::vector<std::string>& full, size_t max_width) {
  std::vector<std::string> shown;
  std::map<std::string, std::vector<size_t>> cells_by_shown;
  for (size_t i = 0; i < full.size(); ++i) {
    shown.push_back(Shorten(full[i], max_width));
    if (shown.back() != full[i]) cells_by_shown[shown.back()].push_back(i);
  }
  for (const auto& entry : cells_by_shown) {
    // Named, not a structured binding: lambdas below use them (clang rejects capturing those).
    const std::string& text = entry.first;
    const std::vector<size_t>& cells = entry.second;
    auto differ = [&](const std::vector<std::string>& candidate) {
      std::map<std::string, const std::string*> origin;
      for (size_t k = 0; k < cells.size(); ++k) {
        auto [it, added] = origin.emplace(candidate[k], &full[cells[k]]);
        if (!added && *it->second != full[cells[k]]) return false;
      }
      return true;
    };
    std::vector<std::string> same(cells.size(), text);
    if (differ(same)) continue;  // one text repeated, not a clash
    for (double share : {1.0 / 3, 0.5, 2.0 / 3, 5.0 / 6}) {
      std::vector<std::string> tried;
      for (size_t i : cells) tried.push_back(Shorten(full[i], max_width, share));
      if (!differ(tried)) continue;
      for (size_t k = 0; k < cells.size(); ++k) shown[cells[k]] = tried[k];
      break;
    }
  }
  return shown;
}

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
