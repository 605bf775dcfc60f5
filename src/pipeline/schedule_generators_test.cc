#include "pipeline/schedule_generators.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/schedule_comparison.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr OpKind F = OpKind::kForward;
constexpr OpKind B = OpKind::kBackwardInput;
constexpr OpKind W = OpKind::kBackwardWeight;
constexpr OpKind BW = OpKind::kBackwardCombined;

}  // namespace

void PrintTo(const PipelineOp& op, std::ostream* os) {
  *os << OpKindName(op.kind) << "(mb " << op.micro_batch << ", chunk " << op.chunk << ")";
}

namespace {

std::string ErrorOf(ScheduleKind kind, PipelineShape shape) {
  try {
    GenerateSchedule(kind, shape);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Only the V-shape schedules place a rank's two chunks at both ends of the stage chain.
TEST(ScheduleKindTest, PlacementOfEachSchedule) {
  for (ScheduleKind k : AllScheduleKinds()) {
    const bool v = k == ScheduleKind::kZbvFormatted || k == ScheduleKind::kZbvGreedyHalf ||
                   k == ScheduleKind::kZbvGreedyMin || k == ScheduleKind::kDualPipeV;
    EXPECT_EQ(ShapeOf(k), v ? StageShape::kVShape : StageShape::kInterleaved)
        << ScheduleKindName(k);
  }
}

TEST(ScheduleGeneratorsTest, OneFOneBOrder) {
  const Schedule s = MakeOneFOneBSchedule({2, 1, 3});
  EXPECT_THAT(s.ops_per_rank[0],
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{F, 1, 0}, PipelineOp{BW, 0, 0},
                          PipelineOp{F, 2, 0}, PipelineOp{BW, 1, 0}, PipelineOp{BW, 2, 0}));
  EXPECT_THAT(s.ops_per_rank[1],
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{BW, 0, 0}, PipelineOp{F, 1, 0},
                          PipelineOp{BW, 1, 0}, PipelineOp{F, 2, 0}, PipelineOp{BW, 2, 0}));
}

TEST(ScheduleGeneratorsTest, GPipeRunsAllForwardsFirst) {
  const Schedule s = MakeGPipeSchedule({2, 1, 2});
  EXPECT_THAT(s.ops_per_rank[1], ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{F, 1, 0},
                                             PipelineOp{BW, 0, 0}, PipelineOp{BW, 1, 0}));
}

// Megatron's order when micro-batches (3) are not a multiple of PP (2): groups {0,1} and {2};
// rank 0 warms up with (2-0-1)*2 + (2-1)*2 = 4 forwards, rank 1 with 2; backward visits the
// chunks in reverse order of the same table.
TEST(ScheduleGeneratorsTest, InterleavedFollowsMegatronOrderWithPartialLastGroup) {
  const Schedule s = MakeInterleavedSchedule({2, 2, 3});
  EXPECT_THAT(s.ops_per_rank[0],
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{F, 1, 0}, PipelineOp{F, 0, 1},
                          PipelineOp{F, 1, 1}, PipelineOp{F, 2, 0}, PipelineOp{BW, 0, 1},
                          PipelineOp{F, 2, 1}, PipelineOp{BW, 1, 1}, PipelineOp{BW, 0, 0},
                          PipelineOp{BW, 1, 0}, PipelineOp{BW, 2, 1}, PipelineOp{BW, 2, 0}));
  EXPECT_THAT(s.ops_per_rank[1],
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{F, 1, 0}, PipelineOp{F, 0, 1},
                          PipelineOp{BW, 0, 1}, PipelineOp{F, 1, 1}, PipelineOp{BW, 1, 1},
                          PipelineOp{F, 2, 0}, PipelineOp{BW, 0, 0}, PipelineOp{F, 2, 1},
                          PipelineOp{BW, 1, 0}, PipelineOp{BW, 2, 1}, PipelineOp{BW, 2, 0}));
  // And it runs to completion: 3 micro-batches x 2 chunks of F=1 + BW=2 on each rank.
  const PipelineSimulation sim = SimulatePipeline(s, UniformCosts(4, 1, 2, 0));
  EXPECT_DOUBLE_EQ(sim.ranks[0].busy_s, 18.0);
}

// PP 5, VPP 2, 7 micro-batches (groups {0..4} and {5, 6}): rank 0 runs (5-1)*2 + 5 = 13
// warm-up forwards of its 14; the last (micro-batch 6, chunk 1) needs rank 4's forward of
// micro-batch 6 chunk 0, which rank 4 issues only after its backward of micro-batch 0 chunk 0,
// which needs rank 0's first backward: a cycle. Reported as a clear error, not a hang.
TEST(ScheduleGeneratorsTest, InterleavedOrderThatCannotCompleteIsAnError) {
  EXPECT_THAT(ErrorOf(ScheduleKind::kInterleaved1F1B, {5, 2, 7}), HasSubstr("cannot complete"));
  EXPECT_EQ(ErrorOf(ScheduleKind::kInterleaved1F1B, {5, 2, 6}), "");
}

TEST(ScheduleGeneratorsTest, ZeroBubbleH1DelaysWeightGradientsByRank) {
  const Schedule s = MakeZeroBubbleH1Schedule({2, 1, 2});
  // rank 0: one warm-up F, then F B W; cool-down B W.
  EXPECT_THAT(s.ops_per_rank[0],
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{F, 1, 0}, PipelineOp{B, 0, 0},
                          PipelineOp{W, 0, 0}, PipelineOp{B, 1, 0}, PipelineOp{W, 1, 0}));
  // rank 1 holds its weight gradients back one step to fill its cool-down.
  EXPECT_THAT(s.ops_per_rank[1],
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{B, 0, 0}, PipelineOp{F, 1, 0},
                          PipelineOp{B, 1, 0}, PipelineOp{W, 0, 0}, PipelineOp{W, 1, 0}));
}

// ZBV formatted, PP 2, m 3: rank 1 (the turn) warms up with 2*(2-1)-1 = 1 F0, one (F1, F0)
// pair, then (2-1) F1 B1 W1 triple (ZB paper figure, V-shape).
TEST(ScheduleGeneratorsTest, ZbvFormattedWarmup) {
  const Schedule s = MakeZbvFormattedSchedule({2, 2, 3});
  const auto& r1 = s.ops_per_rank[1];
  ASSERT_GE(r1.size(), 6u);
  EXPECT_THAT(std::vector<PipelineOp>(r1.begin(), r1.begin() + 6),
              ElementsAre(PipelineOp{F, 0, 0}, PipelineOp{F, 0, 1}, PipelineOp{F, 1, 0},
                          PipelineOp{F, 1, 1}, PipelineOp{B, 0, 1}, PipelineOp{W, 0, 1}));
  EXPECT_EQ(s.StageOf(1, 1), 2);
  EXPECT_EQ(s.StageOf(0, 1), 3);
  EXPECT_EQ(s.RankOfStage(3), 0);
}

// The greedy schedules and DualPipeV must be complete and run without deadlock for shapes
// beyond the reference table (odd PP, PP not dividing m).
TEST(ScheduleGeneratorsTest, EverySplitScheduleCompletesOnIrregularShapes) {
  for (const PipelineShape& shape :
       {PipelineShape{3, 2, 7}, PipelineShape{5, 2, 11}, PipelineShape{6, 2, 13}}) {
    for (ScheduleKind kind : {ScheduleKind::kZbvFormatted, ScheduleKind::kZbvGreedyHalf,
                              ScheduleKind::kZbvGreedyMin, ScheduleKind::kDualPipeV}) {
      const PipelineCosts costs = UniformCosts(2 * shape.pipeline_ranks, 1, 1, 1);
      const PipelineSimulation sim = SimulatePipeline(GenerateSchedule(kind, shape), costs);
      // Work per rank: 2 chunks x m x (F + B + W) = 6m; the step can never be shorter.
      EXPECT_GE(sim.step_time_s, 6.0 * shape.micro_batches) << ScheduleKindName(kind);
    }
    PipelineShape flat = shape;
    flat.chunks_per_rank = 1;
    for (ScheduleKind kind : {ScheduleKind::kZeroBubbleH1, ScheduleKind::kZeroBubbleH2,
                              ScheduleKind::kZeroBubbleHeuristic}) {
      const PipelineCosts costs = UniformCosts(flat.pipeline_ranks, 1, 1, 1);
      const PipelineSimulation sim = SimulatePipeline(GenerateSchedule(kind, flat), costs);
      EXPECT_GE(sim.step_time_s, 3.0 * flat.micro_batches) << ScheduleKindName(kind);
    }
  }
}

// ZB-H2 keeps at most 2*PP-1 micro-batches in flight and is never slower than ZB-H1.
TEST(ScheduleGeneratorsTest, ZeroBubbleH2UsesMoreMemoryForLessBubble) {
  const PipelineCosts costs = UniformCosts(4, 1, 1.5, 0.5);
  const auto h1 = SimulatePipeline(MakeZeroBubbleH1Schedule({4, 1, 12}), costs);
  const auto h2 = SimulatePipeline(MakeZeroBubbleH2Schedule({4, 1, 12}, &costs), costs);
  EXPECT_LE(h2.step_time_s, h1.step_time_s);
  for (const RankSimulation& rank : h2.ranks) EXPECT_LE(rank.peak_inflight_chunks, 7);
}

// The heuristic's in-flight limit is honoured.
TEST(ScheduleGeneratorsTest, ZeroBubbleHeuristicRespectsInflightLimit) {
  const auto sim = SimulatePipeline(MakeZeroBubbleHeuristicSchedule({4, 1, 8}, nullptr, 3),
                                    UniformCosts(4, 1, 1, 1));
  for (const RankSimulation& rank : sim.ranks) EXPECT_LE(rank.peak_inflight_chunks, 3);
}

TEST(ScheduleGeneratorsTest, DualPipeVMixesSplitAndCombinedBackward) {
  const Schedule s = MakeDualPipeVSchedule({4, 2, 8});
  int combined = 0;
  int split = 0;
  for (const PipelineOp& op : s.ops_per_rank[0]) {
    combined += op.kind == BW;
    split += op.kind == B;
  }
  EXPECT_GT(combined, 0);
  EXPECT_GT(split, 0);
  EXPECT_EQ(combined + split, 16);
}

TEST(ScheduleGeneratorsTest, InvalidRequestsAreClearUserErrors) {
  EXPECT_THAT(ErrorOf(ScheduleKind::kInterleaved1F1B, {4, 1, 8}), HasSubstr("VPP"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kInterleaved1F1B, {4, 2, 3}),
              HasSubstr("at least 4 micro-batches"));
  EXPECT_THAT(ErrorOf(ScheduleKind::k1F1B, {4, 2, 8}), HasSubstr("VPP"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kZbvFormatted, {4, 3, 8}), HasSubstr("VPP"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kZbvFormatted, {4, 2, 6}),
              HasSubstr("at least 7 micro-batches"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kZbvGreedyMin, {4, 1, 8}), HasSubstr("VPP"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kDualPipeV, {4, 2, 7}), HasSubstr("at least 8"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kGPipe, {0, 1, 8}), HasSubstr("at least 1"));
  EXPECT_THAT(ErrorOf(ScheduleKind::k1F1B, {1 << 16, 1, 1 << 16}), HasSubstr("too large"));
  // The budget bounds time and memory, and each generator's cost sets it: 1F1B places 2^21
  // operations (PP 8 x 87,381 micro-batches x 3), ZB-H2's greedy half of that. The
  // message says the most micro-batches the PP x VPP allows and which keys to change.
  EXPECT_THAT(ErrorOf(ScheduleKind::k1F1B, {8, 1, 87382}),
              HasSubstr("at most 87381 micro-batches per iteration at this PP x VPP"));
  EXPECT_THAT(ErrorOf(ScheduleKind::kZeroBubbleH2, {8, 1, 43691}),
              HasSubstr("lower global_batch_size or raise micro_batch_size"));
}

TEST(ScheduleGeneratorsTest, ParsesScheduleNames) {
  EXPECT_EQ(ParseScheduleKind("interleaved_1f1b"), ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(ParseScheduleKind("zbv-greedy-half"), ScheduleKind::kZbvGreedyHalf);
  EXPECT_EQ(ParseScheduleKind("v-min"), ScheduleKind::kZbvGreedyMin);
  for (ScheduleKind kind : AllScheduleKinds()) {
    EXPECT_EQ(ParseScheduleKind(ScheduleKindName(kind)), kind);
  }
  EXPECT_THROW(ParseScheduleKind("2f2b"), UserError);
}

// `all` on the PP 4, m 8 reference: ZBV formatted (25.5) is the fastest; every schedule runs.
TEST(ScheduleComparisonTest, ComparesEveryScheduleAndFindsFastest) {
  ComparisonCosts costs;
  costs.vpp1 = UniformCosts(4, 1, 1, 1);
  costs.vpp_n = UniformCosts(8, 0.5, 0.5, 0.5);
  costs.v_shape = UniformCosts(8, 0.5, 0.5, 0.5);
  const auto rows = CompareSchedules({4, 2, 8}, costs);
  ASSERT_EQ(rows.size(), AllScheduleKinds().size());
  for (const auto& row : rows) EXPECT_TRUE(row.ran) << row.skipped_because;
  const int fastest = FastestSchedule(rows);
  ASSERT_GE(fastest, 0);
  EXPECT_DOUBLE_EQ(rows[static_cast<size_t>(fastest)].simulation.step_time_s, 25.5);
}

TEST(ScheduleComparisonTest, ListsSchedulesThatCannotServeTheShape) {
  ComparisonCosts costs;
  costs.vpp1 = UniformCosts(4, 1, 1, 1);
  costs.v_shape = UniformCosts(8, 0.5, 0.5, 0.5);
  const auto rows = CompareSchedules({4, 1, 6}, costs);  // too few for ZBV, no interleaved
  for (const auto& row : rows) {
    if (row.kind == ScheduleKind::kZbvFormatted) {
      EXPECT_FALSE(row.ran);
      EXPECT_THAT(row.skipped_because, HasSubstr("at least 7"));
    }
    if (row.kind == ScheduleKind::kInterleaved1F1B) {
      EXPECT_FALSE(row.ran);
    }
    if (row.kind == ScheduleKind::k1F1B) {
      EXPECT_TRUE(row.ran);
    }
  }
}

}  // namespace
}  // namespace sextant
