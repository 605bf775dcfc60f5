#include "hardware/name_match.h"

#include <algorithm>
#include <cctype>

#include "util/edit_distance.h"

namespace sextant {
namespace {

std::string Fold(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

size_t NameDistance(std::string_view a, std::string_view b) {
  return EditDistance(Fold(a), Fold(b));
}

std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results) {
  const std::string folded = Fold(name);
  const size_t limit = std::max<size_t>(2, folded.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& candidate : candidates) {
    const std::string other = Fold(candidate);
    size_t distance = EditDistance(folded, other);
    const bool contains = !folded.empty() && (other.find(folded) != std::string::npos ||
                                              folded.find(other) != std::string::npos);
    if (distance <= limit || contains) scored.emplace_back(contains ? 0 : distance, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [distance, candidate] : scored) {
    if (out.size() >= max_results) break;
    if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
  }
  return out;
}

}  // namespace sextant
