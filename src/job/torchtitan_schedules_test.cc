#include "job/torchtitan_schedules.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

// get_schedule_class compares names without case; the search writes back the first class of a
// kind and never one Sextant only approximates.
TEST(TorchTitanSchedules, NamesAndKindsBothWays) {
  const TorchTitanSchedule* zb = FindTorchTitanSchedule("interleavedzerobubble");
  ASSERT_NE(zb, nullptr);
  EXPECT_EQ(zb->name, "InterleavedZeroBubble");
  EXPECT_TRUE(zb->approximate);
  // Its stages are looped over the ranks as Interleaved1F1B's (stage_index_to_group_rank
  // style "loop"), not placed in a V as ZBVZeroBubble's.
  EXPECT_EQ(zb->simulated, ScheduleKind::kInterleaved1F1B);
  EXPECT_TRUE(zb->multi_stage);
  EXPECT_EQ(FindTorchTitanSchedule("Bogus"), nullptr);
  EXPECT_FALSE(FindTorchTitanSchedule("GPipe")->multi_stage);
  EXPECT_EQ(TorchTitanScheduleFor(ScheduleKind::kInterleaved1F1B)->name, "Interleaved1F1B");
  EXPECT_EQ(TorchTitanScheduleFor(ScheduleKind::kZbvFormatted)->name, "ZBVZeroBubble");
  EXPECT_EQ(TorchTitanScheduleFor(ScheduleKind::kZeroBubbleH2), nullptr);
}

}  // namespace
}  // namespace sextant
