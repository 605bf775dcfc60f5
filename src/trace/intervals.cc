#include "trace/intervals.h"

#include <algorithm>

namespace sextant {

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
  std::vector<Interval> merged;
  for (const Interval& iv : intervals) {
    if (iv.end <= iv.begin) continue;
    if (!merged.empty() && iv.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, iv.end);
    } else {
      merged.push_back(iv);
    }
  }
  return merged;
}

int64_t TotalLength(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& iv : merged) total += iv.end - iv.begin;
  return total;
}

std::vector<Interval> SubtractIntervals(const std::vector<Interval>& a,
                                        const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& iv : a) {
    int64_t begin = iv.begin;
    while (j < b.size() && b[j].end <= begin) ++j;
    size_t k = j;
    while (k < b.size() && b[k].begin < iv.end) {
      if (b[k].begin > begin) out.push_back({begin, b[k].begin});
      begin = std::max(begin, b[k].end);
      if (begin >= iv.end) break;
      ++k;
    }
    if (begin < iv.end) out.push_back({begin, iv.end});
  }
  return out;
}

std::vector<Interval> UnionIntervals(const std::vector<Interval>& a,
                                     const std::vector<Interval>& b) {
  std::vector<Interval> all(a);
  all.insert(all.end(), b.begin(), b.end());
  return MergeIntervals(std::move(all));
}

}  // namespace sextant
