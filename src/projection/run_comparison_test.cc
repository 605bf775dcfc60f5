#include "projection/run_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "job/test_job.h"
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

// A copy of one trace under another name, with or without its rank, measures exactly the same
// and is said to be counted twice; two ranks a nanosecond apart are two ranks.
TEST(RunComparisonTest, WarnsOfOneRanklessTraceGivenTwice) {
  const Job job = TestJob("llama3.1_8B").Cluster("H100", 1).Parallel(1, 1).GlobalBatch(8);
  PerformanceReport projected;
  projected.breakdown.compute_ms = 30;
  MeasuredRank a;
  a.file = "rank_a.json";
  a.iterations = 2;
  a.iteration_ms = 40;
  a.computation_ms = 30;
  a.exposed_comm_ms = 2;
  a.idle_ms = 8;
  a.collective_ms = {{"allreduce", 3}};
  MeasuredRank copy = a;
  copy.file = "copy_of_a.json";
  MeasuredRank b = a;
  b.file = "rank_b.json";
  b.computation_ms = 30.000001;
  auto twice = [](const std::vector<std::string>& warnings) {
    return std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
      return w.find("one trace given twice?") != std::string::npos;
    });
  };
  const std::vector<std::string> with_copy = ComparisonWarnings(job, projected, {a, b, copy});
  EXPECT_EQ(twice(with_copy), 1);
  EXPECT_NE(with_copy.front().find("copy_of_a.json measures exactly what rank_a.json does"),
            std::string::npos)
      << with_copy.front();
  EXPECT_EQ(twice(ComparisonWarnings(job, projected, {a, b})), 0);
  // A rank's trace and a copy of it without its distributedInfo: the same.
  MeasuredRank ranked = a;
  ranked.rank = 0;
  ranked.world_size = 2;
  EXPECT_EQ(twice(ComparisonWarnings(job, projected, {ranked, copy})), 1);
}

}  // namespace
}  // namespace sextant
