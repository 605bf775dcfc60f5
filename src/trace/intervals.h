// Unions and differences of half-open time intervals [begin, end) in nanoseconds: the
// arithmetic behind "busy", "exposed" and "idle" GPU time.
#pragma once

#include <cstdint>
#include <vector>

namespace sextant {

struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
};

// Sorts and merges overlapping or touching intervals; empty ones are dropped.
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);
// Total length of merged intervals.
int64_t TotalLength(const std::vector<Interval>& merged);
// Parts of merged `a` not covered by merged `b` (both from MergeIntervals).
std::vector<Interval> SubtractIntervals(const std::vector<Interval>& a,
                                        const std::vector<Interval>& b);
// Union of two merged lists.
std::vector<Interval> UnionIntervals(const std::vector<Interval>& a,
                                     const std::vector<Interval>& b);

// An interval that belongs to a group (a kernel and the op that launched it).
struct GroupedInterval {
  uint32_t group = 0;
  Interval span;
};
// Per group (0 .. groups - 1), the length of the union of its intervals: the busy time of an
// op's kernels as TraceLens's GPUEventAnalyser measures it. That is their summed length unless
// two of a group's intervals overlap (a kernel launched with programmatic dependent launch
// starts before its predecessor ends; two streams); only such groups are sorted and merged.
std::vector<int64_t> UnionLengthByGroup(const std::vector<GroupedInterval>& items, size_t groups);
// The same for each group that has items, in increasing group order, with the items' summed
// recorded lengths (end - begin): sized by the items, not by the number of groups.
struct GroupLength {
  uint32_t group = 0;
  int64_t union_ns = 0;
  int64_t summed_ns = 0;
};
std::vector<GroupLength> UnionLengthOfEachGroup(const std::vector<GroupedInterval>& items);

}  // namespace sextant
