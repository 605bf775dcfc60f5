#include "config/close_matches.h"

#include <algorithm>
#include <numeric>

namespace sextant {

std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results) {
  const size_t limit = std::max<size_t>(2, word.size() / 5);
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const size_t distance = EditDistance(word, candidates[i]);
    if (distance <= limit) scored.emplace_back(distance, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [distance, index] : scored) {
    if (out.size() >= max_results) break;
    if (std::find(out.begin(), out.end(), candidates[index]) == out.end()) {
      out.push_back(candidates[index]);
    }
  }
  return out;
}

}  // namespace sextant
