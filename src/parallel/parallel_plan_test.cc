#include "parallel/parallel_plan.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(ParallelPlanTest, DescribesSizesInOneLine) {
  ParallelPlan p;
  p.tp = 2;
  p.pp = 4;
  p.vpp = 2;
  p.dp = 8;
  p.ep = 8;
  EXPECT_EQ(DescribeParallelSizes(p), "TP 2 PP 4 VPP 2 CP 1 EP 8 ETP 1 DP 8");
}

TEST(ParallelPlanTest, OneStageHasNoPipelineSchedule) {
  // Megatron runs PP 1 through forward_backward_no_pipelining whatever schedule is set.
  EXPECT_EQ(DescribeSchedule("1f1b", 1), "no pipeline");
  EXPECT_EQ(DescribeSchedule("interleaved", 1), "no pipeline");
  EXPECT_EQ(DescribeSchedule("dualpipev", 16), "schedule dualpipev");
}

}  // namespace
}  // namespace sextant
