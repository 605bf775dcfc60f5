#include "util/close_matches.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <utility>

namespace sextant {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
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

size_t BoundedEditDistance(std::string_view a, std::string_view b, size_t max_distance) {
  if (a.size() > b.size()) std::swap(a, b);
  const size_t over = max_distance + 1;
  if (b.size() - a.size() > max_distance) return over;
  // Row i holds the distances of a[0, i) to b[0, j) for j within max_distance of i; cells
  // outside the band are `over` (their distance is at least |i - j| > max_distance).
  std::vector<size_t> row(b.size() + 1, over);
  for (size_t j = 0; j <= std::min(b.size(), max_distance); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i > max_distance ? i - max_distance : 1;
    const size_t hi = std::min(b.size(), i + max_distance);
    size_t diagonal = row[lo - 1];
    row[lo - 1] = lo == 1 ? std::min(i, over) : over;
    size_t best = row[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      const size_t above = row[j];
      row[j] =
          std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1), over});
      diagonal = above;
      best = std::min(best, row[j]);
    }
    if (best >= over) return over;
  }
  return row[b.size()];
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::string FoldName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results) {
  const std::string folded = FoldName(name);
  if (folded.size() > kMaxSuggestedNameLength) return {};
  // Names are short; a typo of a long name may cost more edits than one of a short name.
  const size_t limit = std::max<size_t>(2, folded.size() / 3);
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, candidate index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string other = FoldName(candidates[i]);
    const bool contains =
        !folded.empty() && !other.empty() &&
        (other.find(folded) != std::string::npos || folded.find(other) != std::string::npos);
    const size_t distance = contains ? 0 : BoundedEditDistance(folded, other, limit);
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

std::string DidYouMean(const std::vector<std::string>& close) {
  if (close.empty()) return "";
  std::string out = "; did you mean ";
  for (size_t i = 0; i < close.size(); ++i) out += (i ? ", " : "") + close[i];
  return out + "?";
}

}  // namespace sextant
