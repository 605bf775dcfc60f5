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

std::vector<int64_t> UnionLengthByGroup(const std::vector<GroupedInterval>& items, size_t groups) {
  std::vector<int64_t> length(groups, 0);
  std::vector<int64_t> last_begin(groups, INT64_MIN), max_end(groups, INT64_MIN);
  std::vector<uint8_t> overlapping(groups, 0);
  bool any = false;
  for (const GroupedInterval& item : items) {
    const uint32_t g = item.group;
    length[g] += std::max<int64_t>(0, item.span.end - item.span.begin);
    // Out of order: an overlap with an earlier item may be hidden, so merge to be sure.
    if (item.span.begin < max_end[g] || item.span.begin < last_begin[g]) {
      overlapping[g] = 1;
      any = true;
    }
    last_begin[g] = item.span.begin;
    max_end[g] = std::max(max_end[g], item.span.end);
  }
  if (!any) return length;
  std::vector<GroupedInterval> rest;
  for (const GroupedInterval& item : items) {
    if (overlapping[item.group]) rest.push_back(item);
  }
  std::sort(rest.begin(), rest.end(), [](const GroupedInterval& a, const GroupedInterval& b) {
    return a.group != b.group ? a.group < b.group : a.span.begin < b.span.begin;
  });
  for (size_t i = 0; i < rest.size();) {
    const uint32_t g = rest[i].group;
    int64_t total = 0, begin = rest[i].span.begin, end = rest[i].span.end;
    for (; i < rest.size() && rest[i].group == g; ++i) {
      if (rest[i].span.begin > end) {
        total += std::max<int64_t>(0, end - begin);
        begin = rest[i].span.begin;
      }
      end = std::max(end, rest[i].span.end);
    }
    length[g] = total + std::max<int64_t>(0, end - begin);
  }
  return length;
}

}  // namespace sextant
