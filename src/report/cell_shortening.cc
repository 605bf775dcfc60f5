#include "report/cell_shortening.h"

#include <algorithm>
#include <map>
#include <string_view>

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

}  // namespace

std::string ShortenCell(const std::string& text, size_t max_width, double tail_share) {
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

std::vector<std::string> ShortenColumn(const std::vector<std::string>& full, size_t max_width) {
  std::vector<std::string> shown;
  std::map<std::string, std::vector<size_t>> cells_by_shown;
  for (size_t i = 0; i < full.size(); ++i) {
    shown.push_back(ShortenCell(full[i], max_width));
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
      for (size_t i : cells) tried.push_back(ShortenCell(full[i], max_width, share));
      if (!differ(tried)) continue;
      for (size_t k = 0; k < cells.size(); ++k) shown[cells[k]] = tried[k];
      break;
    }
  }
  return shown;
}

}  // namespace sextant
