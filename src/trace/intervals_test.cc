#include "trace/intervals.h"

#include <gtest/gtest.h>

#include <vector>

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

// The same intervals in start order, as two sorted runs, and shuffled: one union, [0, 12)
// and [20, 31).
TEST(IntervalsTest, MergesWhateverTheOrder) {
  const std::vector<Interval> expected = {{0, 12}, {20, 31}};
  auto same = [&](std::vector<Interval> in) {
    const std::vector<Interval> out = MergeIntervals(std::move(in));
    ASSERT_EQ(out.size(), expected.size());
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].begin, expected[i].begin);
      EXPECT_EQ(out[i].end, expected[i].end);
    }
  };
  same({{0, 5}, {3, 12}, {20, 25}, {24, 31}});
  same({{3, 12}, {24, 31}, {0, 5}, {20, 25}});  // two runs
  same({{24, 31}, {0, 5}, {20, 25}, {3, 12}});  // shuffled
  same({{20, 25}, {24, 31}, {0, 5}, {3, 12}});  // two runs, the second before the first
}

TEST(IntervalsTest, UnionLengthPerGroupMergesOnlyOverlappingGroups) {
  // Group 0: [0, 10) and [20, 25): 15, as summed. Group 1: [0, 4) then [2, 30) (a kernel
  // launched with programmatic dependent launch starts before its predecessor ends): the
  // union [0, 30) is 30, not 4 + 28. Group 2: out of order, [50, 60) before [40, 55): 20.
  // Group 3 has nothing.
  const std::vector<GroupedInterval> items = {{0, {0, 10}}, {1, {0, 4}},   {0, {20, 25}},
                                              {1, {2, 30}}, {2, {50, 60}}, {2, {40, 55}}};
  const std::vector<int64_t> length = UnionLengthByGroup(items, 4);
  ASSERT_EQ(length.size(), 4u);
  EXPECT_EQ(length[0], 15);
  EXPECT_EQ(length[1], 30);
  EXPECT_EQ(length[2], 20);
  EXPECT_EQ(length[3], 0);
}

TEST(IntervalsTest, UnionLengthOfEachGroupListsGroupsWithItemsInOrder) {
  // Group 5: [0, 4) and [2, 30): union 30, summed 32. Group 1: [10, 20): 10 both ways.
  const std::vector<GroupedInterval> items = {{5, {0, 4}}, {1, {10, 20}}, {5, {2, 30}}};
  const std::vector<GroupLength> lengths = UnionLengthOfEachGroup(items);
  ASSERT_EQ(lengths.size(), 2u);
  EXPECT_EQ(lengths[0].group, 1u);
  EXPECT_EQ(lengths[0].union_ns, 10);
  EXPECT_EQ(lengths[0].summed_ns, 10);
  EXPECT_EQ(lengths[1].group, 5u);
  EXPECT_EQ(lengths[1].union_ns, 30);
  EXPECT_EQ(lengths[1].summed_ns, 32);
  EXPECT_TRUE(UnionLengthOfEachGroup({}).empty());
}

}  // namespace
}  // namespace sextant
