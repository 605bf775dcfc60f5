#include "trace/intervals.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(IntervalsTest, UnionAndDifference) {
  auto a = MergeIntervals({{0, 10}, {5, 15}, {20, 30}, {30, 31}, {40, 40}});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(TotalLength(a), 26);
  auto b = MergeIntervals({{8, 22}, {25, 26}});
  auto d = SubtractIntervals(a, b);  // [0,8) [22,25) [26,31)
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(TotalLength(d), 8 + 3 + 5);
  EXPECT_EQ(TotalLength(UnionIntervals(a, b)), 31);
}

}  // namespace
}  // namespace sextant
