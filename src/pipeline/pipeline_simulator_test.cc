#include "pipeline/pipeline_simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/schedule_generators.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

PipelineSimulation Simulate(ScheduleKind kind, int pp, int vpp, int m, double f, double b,
                            double w) {
  const PipelineCosts costs = UniformCosts(pp * vpp, f, b, w);
  return SimulatePipeline(GenerateSchedule(kind, {pp, vpp, m}, &costs), costs);
}

std::vector<int> PeakChunks(const PipelineSimulation& sim) {
  std::vector<int> peaks;
  for (const RankSimulation& rank : sim.ranks) peaks.push_back(rank.peak_inflight_chunks);
  return peaks;
}

// Reference step times of Primus's schedule generators and simulator with uniform costs and
// no P2P time (research/primus-projection.md section 3.7; primus/core/pipeline_parallel/
// scheduler/algorithms/). Costs per chunk: VPP-1 schedules F=1 and backward 2 (B=W=1 when
// split); VPP-2 schedules F=0.5 and backward 1 (B=W=0.5). Activation: one unit per chunk.
struct ReferenceCase {
  ScheduleKind kind;
  int pp;
  int vpp;
  int m;
  double step;
  double max_bubble;  // as rounded in the reference table
  std::vector<int> peak_units;
};

class ReferenceStepTimeTest : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(ReferenceStepTimeTest, ReproducesPrimusReferenceTable) {
  const ReferenceCase& c = GetParam();
  const bool split = SplitsBackward(c.kind);
  const double f = 1.0 / c.vpp;
  const double b = split ? 1.0 / c.vpp : 2.0 / c.vpp;
  const double w = split ? 1.0 / c.vpp : 0.0;
  const PipelineSimulation sim = Simulate(c.kind, c.pp, c.vpp, c.m, f, b, w);
  EXPECT_DOUBLE_EQ(sim.step_time_s, c.step);
  if (c.max_bubble >= 0) {
    EXPECT_NEAR(sim.max_bubble_ratio, c.max_bubble, 0.0005);
  }
  if (!c.peak_units.empty()) {
    EXPECT_THAT(PeakChunks(sim), ElementsAreArray(c.peak_units));
  }
}

std::vector<int> Repeat(int value, int times) { return std::vector<int>(times, value); }

INSTANTIATE_TEST_SUITE_P(
    Primus, ReferenceStepTimeTest,
    ::testing::Values(
        ReferenceCase{ScheduleKind::k1F1B, 4, 1, 8, 33.0, 0.273, {4, 3, 2, 1}},
        ReferenceCase{ScheduleKind::kZeroBubbleH1, 4, 1, 8, 27.0, 0.111, Repeat(4, 4)},
        ReferenceCase{ScheduleKind::kZeroBubbleHeuristic, 4, 1, 8, 27.0, 0.111, Repeat(8, 4)},
        ReferenceCase{ScheduleKind::kInterleaved1F1B, 4, 2, 8, 28.5, 0.158, {11, 9, 7, 5}},
        ReferenceCase{ScheduleKind::kZbvFormatted, 4, 2, 8, 25.5, 0.059, Repeat(8, 4)},
        ReferenceCase{ScheduleKind::kZbvGreedyHalf, 4, 2, 8, 26.5, 0.094, Repeat(6, 4)},
        ReferenceCase{ScheduleKind::kZbvGreedyMin, 4, 2, 8, 29.5, 0.186, Repeat(4, 4)},
        ReferenceCase{ScheduleKind::k1F1B, 8, 1, 32, 117.0, 0.179, {8, 7, 6, 5, 4, 3, 2, 1}},
        ReferenceCase{ScheduleKind::kZeroBubbleH1, 8, 1, 32, 103.0, 0.068, Repeat(8, 8)},
        ReferenceCase{ScheduleKind::kInterleaved1F1B,
                      8,
                      2,
                      32,
                      106.5,
                      0.099,
                      {23, 21, 19, 17, 15, 13, 11, 9}},
        ReferenceCase{ScheduleKind::kZbvFormatted, 8, 2, 32, 99.5, 0.035, Repeat(16, 8)},
        ReferenceCase{ScheduleKind::kZbvGreedyHalf, 8, 2, 32, 104.5, 0.081, Repeat(10, 8)},
        ReferenceCase{ScheduleKind::kZbvGreedyMin, 8, 2, 32, 109.0, 0.119, Repeat(8, 8)},
        ReferenceCase{ScheduleKind::k1F1B, 4, 1, 16, 57.0, -1, {}},
        ReferenceCase{ScheduleKind::kZeroBubbleH1, 4, 1, 16, 51.0, -1, {}},
        ReferenceCase{ScheduleKind::kInterleaved1F1B, 4, 2, 16, 52.5, -1, {}},
        ReferenceCase{ScheduleKind::kZbvFormatted, 4, 2, 16, 49.5, -1, {}},
        ReferenceCase{ScheduleKind::kZbvGreedyHalf, 4, 2, 16, 50.5, -1, {}},
        ReferenceCase{ScheduleKind::kZbvGreedyMin, 4, 2, 16, 53.5, -1, {}}));

// Narayanan et al. 2021 (arXiv 2104.04473) section 2.2: with uniform costs the bubble is
// (PP-1)/m of the ideal time for 1F1B and GPipe and (PP-1)/(VPP*m) for interleaved 1F1B.
struct AnalyticCase {
  ScheduleKind kind;
  int pp;
  int vpp;
  int m;
};

class AnalyticBubbleTest : public ::testing::TestWithParam<AnalyticCase> {};

TEST_P(AnalyticBubbleTest, BubbleOverIdealMatchesClosedForm) {
  const AnalyticCase& c = GetParam();
  const PipelineSimulation sim = Simulate(c.kind, c.pp, c.vpp, c.m, 0.75, 1.5, 0);
  const PipelineShape shape{c.pp, c.vpp, c.m};
  for (const RankSimulation& rank : sim.ranks) {
    EXPECT_NEAR(rank.bubble_s / rank.busy_s, AnalyticBubbleFraction(c.kind, shape), 1e-12)
        << "rank " << rank.rank;
  }
  // (m*VPP + PP - 1) chunk steps of F + B each.
  EXPECT_NEAR(sim.step_time_s, (c.m * c.vpp + c.pp - 1) * 2.25, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Narayanan2021, AnalyticBubbleTest,
                         ::testing::Values(AnalyticCase{ScheduleKind::k1F1B, 2, 1, 3},
                                           AnalyticCase{ScheduleKind::k1F1B, 4, 1, 8},
                                           AnalyticCase{ScheduleKind::k1F1B, 16, 1, 64},
                                           AnalyticCase{ScheduleKind::kGPipe, 4, 1, 8},
                                           AnalyticCase{ScheduleKind::kInterleaved1F1B, 2, 2, 4},
                                           AnalyticCase{ScheduleKind::kInterleaved1F1B, 4, 2, 8},
                                           AnalyticCase{ScheduleKind::kInterleaved1F1B, 4, 4, 16},
                                           AnalyticCase{ScheduleKind::kInterleaved1F1B, 8, 2, 32}));

// Zero-bubble closed forms (Qi et al. 2024; sail-sg/zero-bubble README, DualPipe README):
//   ZB-H1: m(F+B+W) + (p-1)(F + B - W)
//   ZB-H2: m(F+B+W) + (p-1)(F + B - 2W), which cannot beat the last stage's start, so the
//          step is never below m(F+B+W) + (p-1)F (the (p-1)F lead-in of the last rank).
struct ZeroBubbleCase {
  int pp;
  double f, b, w;
};

class ZeroBubbleFormulaTest : public ::testing::TestWithParam<ZeroBubbleCase> {};

TEST_P(ZeroBubbleFormulaTest, StepTimesMatchClosedForms) {
  const ZeroBubbleCase& c = GetParam();
  const int m = 3 * c.pp;
  const PipelineCosts costs = UniformCosts(c.pp, c.f, c.b, c.w);
  const double work = m * (c.f + c.b + c.w);
  const auto h1 = SimulatePipeline(MakeZeroBubbleH1Schedule({c.pp, 1, m}), costs);
  EXPECT_NEAR(h1.step_time_s, work + (c.pp - 1) * (c.f + c.b - c.w), 1e-9);
  const auto h2 = SimulatePipeline(MakeZeroBubbleH2Schedule({c.pp, 1, m}, &costs), costs);
  EXPECT_NEAR(h2.step_time_s, work + (c.pp - 1) * std::max(c.f, c.f + c.b - 2 * c.w), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(QiEtAl2024, ZeroBubbleFormulaTest,
                         ::testing::Values(ZeroBubbleCase{4, 1, 1.5, 0.5},
                                           ZeroBubbleCase{8, 1, 1.5, 0.5},
                                           ZeroBubbleCase{4, 1, 2, 1}, ZeroBubbleCase{8, 1, 2, 1},
                                           ZeroBubbleCase{4, 1, 1, 1}, ZeroBubbleCase{8, 2, 1, 1}));

// ZB-H1 with F=2, B=2, W=1, p=4, m=8 by hand: bubble 3 * (2 + 2 - 1) = 9 on 8 * 5 = 40 of work.
TEST(PipelineSimulatorTest, ZeroBubbleH1MatchesItsBubbleFormula) {
  const PipelineSimulation sim = Simulate(ScheduleKind::kZeroBubbleH1, 4, 1, 8, 2, 2, 1);
  EXPECT_DOUBLE_EQ(sim.step_time_s, 49.0);
  EXPECT_DOUBLE_EQ(sim.ranks[0].bubble_s, 9.0);
}

// Hand-worked 1F1B, PP 2, two micro-batches, F=1, BW=2, 0.5 s per transfer on the stream of
// its own (overlapped): critical path F0 r0 [0,1] -> +0.5 -> F0 r1 [1.5,2.5] -> BW0 r1
// [2.5,4.5] -> F1 r1 [4.5,5.5] -> BW1 r1 [5.5,7.5] -> +0.5 -> BW1 r0 [8,10]. Rank 1 is done
// when its last gradient has left, at 8.
TEST(PipelineSimulatorTest, ChargesTransferTimeBetweenRanks) {
  PipelineCosts costs = UniformCosts(2, 1, 2, 0);
  costs.p2p_s = {0.5};
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({2, 1, 2}), costs);
  EXPECT_DOUBLE_EQ(sim.step_time_s, 10.0);
  const auto& r0 = sim.ranks[0].timeline;
  // rank 0: F0, send, F1, send, recv(grad 0), BW0, recv(grad 1), BW1.
  ASSERT_EQ(r0.size(), 8u);
  EXPECT_EQ(r0[5].kind, TimelineEventKind::kBackwardCombined);
  EXPECT_DOUBLE_EQ(r0[5].start_s, 5.0);
  EXPECT_EQ(r0[7].kind, TimelineEventKind::kBackwardCombined);
  EXPECT_DOUBLE_EQ(r0[7].start_s, 8.0);
  EXPECT_DOUBLE_EQ(sim.ranks[0].busy_s, 6.0);
  EXPECT_DOUBLE_EQ(sim.ranks[0].bubble_s, 4.0);
  EXPECT_DOUBLE_EQ(sim.ranks[1].end_s, 8.0);
}

// The step-only mode keeps no events but the same numbers: the hand-checked 10 s step and
// rank 1's 8 s end of the case above (its last send included), bubbles and memory peaks.
TEST(PipelineSimulatorTest, StepOnlyModeGivesTheSameNumbersWithoutTimelines) {
  PipelineCosts costs = UniformCosts(2, 1, 2, 0, 1 << 20);
  costs.p2p_s = {0.5};
  const Schedule schedule = MakeOneFOneBSchedule({2, 1, 2});
  const PipelineSimulation full = SimulatePipeline(schedule, costs);
  const PipelineSimulation step = SimulatePipeline(schedule, costs, SimulationDetail::kStepOnly);
  EXPECT_DOUBLE_EQ(step.step_time_s, 10.0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(step.ranks[r].timeline.empty());
    EXPECT_FALSE(full.ranks[r].timeline.empty());
    EXPECT_DOUBLE_EQ(step.ranks[r].end_s, full.ranks[r].end_s);
    EXPECT_DOUBLE_EQ(step.ranks[r].bubble_s, full.ranks[r].bubble_s);
    EXPECT_EQ(step.ranks[r].peak_activation_bytes, full.ranks[r].peak_activation_bytes);
  }
  EXPECT_DOUBLE_EQ(step.ranks[1].end_s, 8.0);
}

// Same case with blocking transfers: each send holds its rank for 0.5 s.
// rank 0: F0 [0,1] send [1,1.5] F1 [1.5,2.5] send [2.5,3]; rank 1: F0 [1.5,2.5] BW0 [2.5,4.5]
// send [4.5,5] F1 [5,6] BW1 [6,8] send [8,8.5]; rank 0: BW0 [5,7] BW1 [8.5,10.5].
TEST(PipelineSimulatorTest, BlockingTransfersDelayTheSender) {
  PipelineCosts costs = UniformCosts(2, 1, 2, 0);
  costs.p2p_s = {0.5};
  costs.p2p_overlaps_compute = false;
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({2, 1, 2}), costs);
  EXPECT_DOUBLE_EQ(sim.step_time_s, 10.5);
  EXPECT_DOUBLE_EQ(sim.ranks[1].end_s, 8.5);
  EXPECT_NEAR(sim.ranks[0].bubble_ratio, 4.5 / 10.5, 1e-12);
}

// Per-boundary transfer times: only the boundary between stages 1 and 2 (an inter-node link)
// costs 1 s. 1F1B PP 3, m 1: F 0..1, 1..2, +1 -> 3..4, BW 4..6, +1 -> 7..9, 9..11.
TEST(PipelineSimulatorTest, TransferTimesPerBoundary) {
  PipelineCosts costs = UniformCosts(3, 1, 2, 0);
  costs.p2p_s = {0.0, 1.0};
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({3, 1, 1}), costs);
  EXPECT_DOUBLE_EQ(sim.step_time_s, 11.0);
}

// V-shape placement: the turn from stage PP-1 to PP stays on one rank and is free.
TEST(PipelineSimulatorTest, VShapeTurnHasNoTransfer) {
  PipelineCosts costs = UniformCosts(4, 0.5, 0.5, 0.5);
  costs.p2p_s = {0.25};
  const PipelineSimulation sim = SimulatePipeline(MakeZbvFormattedSchedule({2, 2, 3}), costs);
  for (const TimelineEvent& e : sim.ranks[1].timeline) {
    if (e.kind == TimelineEventKind::kSend) {
      EXPECT_NE(e.peer_rank, 1);
    }
  }
  // rank 1 holds stages 1 and 2: it sends activations only to rank 0 (stage 2 -> 3).
  int sends_to_rank0 = 0;
  for (const TimelineEvent& e : sim.ranks[1].timeline) {
    if (e.kind == TimelineEventKind::kSend && e.carries_activation) ++sends_to_rank0;
  }
  EXPECT_EQ(sends_to_rank0, 3);
}

// Recompute runs before the backward: PP 1, two micro-batches, F=1, BW=2, recompute 0.5.
TEST(PipelineSimulatorTest, RecomputeLengthensBackward) {
  PipelineCosts costs = UniformCosts(1, 1, 2, 0);
  costs.stages[0].recompute_s = 0.5;
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({1, 1, 2}), costs);
  EXPECT_DOUBLE_EQ(sim.step_time_s, 7.0);
  EXPECT_DOUBLE_EQ(sim.ranks[0].bubble_s, 0.0);
}

// 1F1B PP 2, three micro-batches: rank 0 holds 2 micro-batches at its peak (1 warm-up + 1),
// rank 1 holds 1. Stage 0 keeps 100 bytes per micro-batch, stage 1 keeps 10.
TEST(PipelineSimulatorTest, PeakActivationBytesPerRank) {
  PipelineCosts costs = UniformCosts(2, 1, 2, 0);
  costs.stages[0].activation_bytes = 100;
  costs.stages[1].activation_bytes = 10;
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({2, 1, 3}), costs);
  EXPECT_EQ(sim.ranks[0].peak_activation_bytes, 200);
  EXPECT_EQ(sim.ranks[1].peak_activation_bytes, 10);
  EXPECT_EQ(sim.ranks[0].peak_inflight_micro_batches, 2);
  EXPECT_EQ(sim.max_peak_activation_bytes, 200);
}

// Interleaved PP 2 VPP 2, m 4: rank 0 warms up with (2-0-1)*2 + (2-1)*2 = 4 chunk forwards
// (micro-batches 0 and 1 through both chunks), then runs F(2, chunk 0) -> 5 chunks alive;
// BW(0, chunk 1) frees one; F(3, chunk 0) -> 5 chunks again, now of 4 micro-batches (0..3).
TEST(PipelineSimulatorTest, InflightMicroBatchesCountDistinctMicroBatches) {
  const PipelineSimulation sim = Simulate(ScheduleKind::kInterleaved1F1B, 2, 2, 4, 1, 2, 0);
  EXPECT_EQ(sim.ranks[0].peak_inflight_chunks, 5);
  EXPECT_EQ(sim.ranks[0].peak_inflight_micro_batches, 4);
}

TEST(PipelineSimulatorTest, DetectsDeadlockInsteadOfHanging) {
  Schedule schedule;
  schedule.kind = ScheduleKind::k1F1B;
  schedule.shape = {2, 1, 2};
  // rank 1 wants micro-batch 1 first, but rank 0 sends it only after backward 0, which needs
  // rank 1's backward 0.
  schedule.ops_per_rank = {
      {{OpKind::kForward, 0, 0},
       {OpKind::kBackwardCombined, 0, 0},
       {OpKind::kForward, 1, 0},
       {OpKind::kBackwardCombined, 1, 0}},
      {{OpKind::kForward, 1, 0},
       {OpKind::kForward, 0, 0},
       {OpKind::kBackwardCombined, 0, 0},
       {OpKind::kBackwardCombined, 1, 0}},
  };
  try {
    SimulatePipeline(schedule, UniformCosts(2, 1, 2, 0));
    FAIL() << "expected a deadlock error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("deadlocks"));
    EXPECT_THAT(e.what(), HasSubstr("rank 1 at op 0 (F micro-batch 1 chunk 0)"));
    EXPECT_THAT(e.what(), HasSubstr("rank 0 at op 1 (BW micro-batch 0 chunk 0)"));
  }
}

TEST(PipelineSimulatorTest, RejectsBackwardBeforeItsForwardOnTheSameRank) {
  Schedule schedule;
  schedule.shape = {1, 1, 1};
  schedule.ops_per_rank = {{{OpKind::kBackwardCombined, 0, 0}, {OpKind::kForward, 0, 0}}};
  EXPECT_THROW(
      {
        try {
          SimulatePipeline(schedule, UniformCosts(1, 1, 2, 0));
        } catch (const UserError& e) {
          EXPECT_THAT(e.what(), HasSubstr("comes before its forward"));
          throw;
        }
      },
      UserError);
}

TEST(PipelineSimulatorTest, RejectsIncompleteOrDuplicatedOps) {
  Schedule missing;
  missing.shape = {1, 1, 2};
  missing.ops_per_rank = {{{OpKind::kForward, 0, 0}, {OpKind::kBackwardCombined, 0, 0}}};
  EXPECT_THROW(SimulatePipeline(missing, UniformCosts(1, 1, 2, 0)), UserError);
  Schedule twice = missing;
  twice.ops_per_rank[0].push_back({OpKind::kForward, 0, 0});
  EXPECT_THROW(SimulatePipeline(twice, UniformCosts(1, 1, 2, 0)), UserError);
  Schedule mixed;
  mixed.shape = {1, 1, 1};
  mixed.ops_per_rank = {{{OpKind::kForward, 0, 0},
                         {OpKind::kBackwardInput, 0, 0},
                         {OpKind::kBackwardCombined, 0, 0}}};
  EXPECT_THROW(SimulatePipeline(mixed, UniformCosts(1, 1, 2, 0)), UserError);
}

TEST(PipelineSimulatorTest, RejectsBadCosts) {
  const Schedule schedule = MakeOneFOneBSchedule({2, 1, 2});
  EXPECT_THROW(SimulatePipeline(schedule, UniformCosts(3, 1, 2, 0)), UserError);
  PipelineCosts negative = UniformCosts(2, -1, 2, 0);
  EXPECT_THROW(SimulatePipeline(schedule, negative), UserError);
  PipelineCosts bad_p2p = UniformCosts(2, 1, 2, 0);
  bad_p2p.p2p_s = {0.1, 0.2, 0.3};
  EXPECT_THROW(SimulatePipeline(schedule, bad_p2p), UserError);
}

TEST(PipelineSimulatorTest, TimelineRecordsEveryOpOnce) {
  const PipelineSimulation sim = Simulate(ScheduleKind::kZbvFormatted, 4, 2, 8, 1, 1, 1);
  for (const RankSimulation& rank : sim.ranks) {
    int f = 0, b = 0, w = 0;
    double last_compute_end = 0;
    for (const TimelineEvent& e : rank.timeline) {
      if (e.kind == TimelineEventKind::kSend || e.kind == TimelineEventKind::kRecv) continue;
      EXPECT_GE(e.start_s, last_compute_end);  // compute never overlaps on one rank
      last_compute_end = e.end_s;
      f += e.kind == TimelineEventKind::kForward;
      b += e.kind == TimelineEventKind::kBackwardInput;
      w += e.kind == TimelineEventKind::kBackwardWeight;
    }
    EXPECT_EQ(f, 16);
    EXPECT_EQ(b, 16);
    EXPECT_EQ(w, 16);
  }
}

TEST(PipelineSimulatorTest, AnalyticFormulaValues) {
  EXPECT_DOUBLE_EQ(AnalyticBubbleFraction(ScheduleKind::k1F1B, {4, 1, 8}), 3.0 / 8);
  EXPECT_DOUBLE_EQ(AnalyticBubbleFraction(ScheduleKind::kInterleaved1F1B, {4, 2, 8}), 3.0 / 16);
}

}  // namespace
}  // namespace sextant
