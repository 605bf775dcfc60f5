#include "hardware/name_match.h"

#include <algorithm>
#include <cctype>

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

size_t Levenshtein(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

size_t NameDistance(std::string_view a, std::string_view b) {
  return Levenshtein(Fold(a), Fold(b));
}

std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results) {
  const std::string folded = Fold(name);
  const size_t limit = std::max<size_t>(2, folded.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& candidate : candidates) {
    const std::string other = Fold(candidate);
    size_t distance = Levenshtein(folded, other);
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
