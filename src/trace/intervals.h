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

}  // namespace sextant
