#include "projection/run_comparison.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// Two 100 µs steps. Compute kernels 30 µs [10, 40) and 20 µs [110, 130); an all-reduce
// 10 µs [140, 150) with nothing beside it. Window [10, 150) = 140 µs: busy 60, idle 80.
// Per step: iteration 0.1 ms, compute 0.025, exposed communication 0.005, idle 0.04.
TEST(RunComparisonTest, TracesGiveEachComponentPerIteration) {
  const std::string path = KinetoTraceBuilder()
                               .Annotation("ProfilerStep#1", 0, 100)
                               .Launch(1, 1, 1)
                               .Annotation("ProfilerStep#2", 100, 100)
                               .Launch(101, 1, 2)
                               .Launch(102, 1, 3)
                               .Kernel("gemm", 10, 30, 1)
                               .Kernel("gemm", 110, 20, 2)
                               .Kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 140, 10, 3)
                               .WriteTo(TestTempPath("run.json"));
  const std::vector<MeasuredRank> m = MeasureRun({path});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].iterations, 2);
  EXPECT_NEAR(m[0].iteration_ms, 0.1, 1e-9);
  EXPECT_NEAR(m[0].computation_ms, 0.025, 1e-9);
  EXPECT_NEAR(m[0].exposed_comm_ms, 0.005, 1e-9);
  EXPECT_NEAR(m[0].idle_ms, 0.04, 1e-9);

  PerformanceReport projected;
  projected.iteration_time_ms = 0.12;
  projected.breakdown.compute_ms = 0.02;
  projected.breakdown.optimizer_ms = 0.005;
  const std::vector<Table> tables = RunComparisonTables(projected, m);
  ASSERT_EQ(tables.size(), 2u);
  const Table& summary = tables[0];
  ASSERT_EQ(summary.size(), 4u);
  // Iteration: 0.12 projected vs 0.1 measured = +20%; compute (with the optimizer step) 0.025
  // against 0.025 = 0%.
  EXPECT_NEAR(std::get<double>(summary.rows()[0][3]), 20.0, 1e-9);
  EXPECT_NEAR(std::get<double>(summary.rows()[1][3]), 0.0, 1e-9);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sextant
