#include "trace/intervals.h"

#include <algorithm>
#include <cstdint>

namespace sextant {

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  // GPU activities come sorted by start (BuildLinks), and the union of two merged lists is
  // two sorted runs: checked before sorting, and two runs merged in place.
  auto by_begin = [](const Interval& x, const Interval& y) { return x.begin < y.begin; };
  const auto unsorted = std::is_sorted_until(intervals.begin(), intervals.end(), by_begin);
  if (unsorted != intervals.end()) {
    if (std::is_sorted(unsorted, intervals.end(), by_begin)) {
      std::inplace_merge(intervals.begin(), unsorted, intervals.end(), by_begin);
    } else {
      std::sort(intervals.begin(), intervals.end(), by_begin);
    }
  }
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

std::vector<GroupLength> UnionLengthOfEachGroup(const std::vector<GroupedInterval>& items) {
  // Items by group, in input order within a group: (group, index) in one sortable key, so
  // that the working memory follows the items, not the groups (an op tree has far more ops
  // than kernels launched, and memory first touched is costly).
  std::vector<uint64_t> by_group(items.size());
  for (size_t i = 0; i < items.size(); ++i) by_group[i] = (uint64_t{items[i].group} << 32) | i;
  if (!std::is_sorted(by_group.begin(), by_group.end()))
    std::sort(by_group.begin(), by_group.end());
  // One row per group, sized first: growing the rows would touch twice their memory.
  size_t groups = by_group.empty() ? 0 : 1;
  for (size_t i = 1; i < by_group.size(); ++i)
    groups += (by_group[i] >> 32) != (by_group[i - 1] >> 32);
  std::vector<GroupLength> out;
  out.reserve(groups);
  std::vector<Interval> spans;
  for (size_t first = 0; first < by_group.size();) {
    const auto g = static_cast<uint32_t>(by_group[first] >> 32);
    size_t end = first;
    int64_t sum = 0, recorded = 0, last_begin = INT64_MIN, max_end = INT64_MIN;
    bool overlapping = false;
    for (; end < by_group.size() && (by_group[end] >> 32) == g; ++end) {
      const Interval& span = items[static_cast<uint32_t>(by_group[end])].span;
      sum += std::max<int64_t>(0, span.end - span.begin);
      recorded += span.end - span.begin;
      // Out of order: an overlap with an earlier item may be hidden, so merge to be sure.
      overlapping = overlapping || span.begin < max_end || span.begin < last_begin;
      last_begin = span.begin;
      max_end = std::max(max_end, span.end);
    }
    if (!overlapping) {
      out.push_back({g, sum, recorded});
    } else {
      spans.clear();
      for (size_t k = first; k < end; ++k)
        spans.push_back(items[static_cast<uint32_t>(by_group[k])].span);
      std::sort(spans.begin(), spans.end(),
                [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
      int64_t total = 0, begin = spans[0].begin, stop = spans[0].end;
      for (const Interval& span : spans) {
        if (span.begin > stop) {
          total += std::max<int64_t>(0, stop - begin);
          begin = span.begin;
        }
        stop = std::max(stop, span.end);
      }
      out.push_back({g, total + std::max<int64_t>(0, stop - begin), recorded});
    }
    first = end;
  }
  return out;
}

std::vector<int64_t> UnionLengthByGroup(const std::vector<GroupedInterval>& items, size_t groups) {
  std::vector<int64_t> length(groups, 0);
  for (const GroupLength& g : UnionLengthOfEachGroup(items)) length[g.group] = g.union_ns;
  return length;
}

}  // namespace sextant
