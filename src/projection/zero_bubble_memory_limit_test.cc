#include "projection/zero_bubble_memory_limit.h"

#include <gtest/gtest.h>

#include "job/test_job.h"
#include "memory/memory_model.h"
#include "projection/performance_model.h"

namespace sextant {
namespace {

// Llama 3.1 70B, TP 8, PP 4 on 4 nodes of MI300X (192 GB), 8K sequence, 64 micro-batches:
// one micro-batch's activations are GBs per rank, so HBM holds only some of the 64.
Job Llama70B(int64_t hbm_gib) {
  return TestJob("llama3.1_70B")
      .Cluster("MI300X", 4)
      .HbmBytes(hbm_gib << 30)
      .Parallel(8, 4)  // DP 1
      .SequenceParallel()
      .DistributedOptimizer()
      .SequenceLength(8192)
      .MicroBatch(1)
      .GlobalBatch(64)
      .Schedule("zerobubble-heuristic");
}

double PeakFraction(const Job& job, double in_flight) {
  const size_t pp = static_cast<size_t>(job.parallel.pp);
  const MemoryReport r = ProjectMemory(job, InFlightTable(pp, std::vector<double>{in_flight}));
  return static_cast<double>(r.peak_bytes) / static_cast<double>(job.cluster.gpu.hbm_bytes);
}

TEST(ZeroBubbleMemoryLimitTest, LargestInFlightCountBelowTheAtRiskLine) {
  const Job job = Llama70B(192);
  const int limit = ZeroBubbleInFlightLimit(job);
  ASSERT_GT(limit, 1);
  ASSERT_LT(limit, 64);
  EXPECT_LE(PeakFraction(job, limit), kAtRiskFraction);
  EXPECT_GT(PeakFraction(job, limit + 1), kAtRiskFraction);
}

TEST(ZeroBubbleMemoryLimitTest, BoundsAndUnknownCapacity) {
  EXPECT_EQ(ZeroBubbleInFlightLimit(Llama70B(1 << 20)), 64);  // everything fits: m
  EXPECT_EQ(ZeroBubbleInFlightLimit(Llama70B(1)), 1);         // nothing fits: still 1
  EXPECT_EQ(ZeroBubbleInFlightLimit(Llama70B(0)), 0);         // unknown size: no limit
}

TEST(ZeroBubbleMemoryLimitTest, TheHeuristicScheduleKeepsToTheLimit) {
  const Job job = Llama70B(192);
  const int limit = ZeroBubbleInFlightLimit(job);
  const PerformanceReport r = ProjectPerformance(job);
  ASSERT_EQ(r.schedule, "zerobubble-heuristic");
  for (const auto& rank : r.simulation.ranks) {
    EXPECT_LE(rank.peak_inflight_micro_batches, limit) << "rank " << rank.rank;
  }
  // Unlimited (huge HBM) it holds more on the first rank, as GPipe would.
  const PerformanceReport free = ProjectPerformance(Llama70B(1 << 20));
  EXPECT_GT(free.simulation.ranks.front().peak_inflight_micro_batches, limit);
}

}  // namespace
}  // namespace sextant
