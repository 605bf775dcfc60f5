#include "projection/projection_runner.h"

#include <gtest/gtest.h>

#include <sstream>

#include "job/test_job.h"
#include "memory/memory_model.h"
#include "projection/performance_model.h"
#include "projection/projection_options.h"

namespace sextant {
namespace {

// One MI300X node, DP 8, micro-batch 1 of 4096 tokens, one micro-batch per rank.
TestJob OneNode(const std::string& model) {
  return TestJob(model)
      .Cluster("MI300X", 1)
      .Parallel(1, 1, 1)
      .Dp(8)
      .SequenceLength(4096)
      .MicroBatch(1)
      .GlobalBatch(8);
}

// Llama 3.1 70B unsharded on eight MI300X (TP 1, no distributed optimizer): 70 B parameters
// at 16 bytes each (bf16 weights, fp32 grads, master and moments) is ~1 TiB per GPU, far
// beyond 192 GB, and the step time printed must say the job cannot start.
TEST(ProjectionRunnerTest, StepTimeOfAJobThatDoesNotFitSaysSo) {
  const Job job = OneNode("llama3.1_70B");
  const PerformanceReport perf = ProjectJobPerformance(job, ProjectionOptions{});
  ASSERT_FALSE(perf.assumptions.empty());
  EXPECT_EQ(perf.assumptions[0].rfind("memory: this job needs ", 0), 0u) << perf.assumptions[0];
  EXPECT_NE(perf.assumptions[0].find("of 192.00 GiB HBM (OOM"), std::string::npos)
      << perf.assumptions[0];

  // The 8B model fits the same node: no such line.
  const Job small = OneNode("llama3.1_8B").DistributedOptimizer();
  for (const std::string& a : ProjectJobPerformance(small, ProjectionOptions{}).assumptions) {
    EXPECT_EQ(a.rfind("memory:", 0), std::string::npos) << a;
  }
}

// `projection both` prints the job's own notes once, under the memory report.
TEST(ProjectionRunnerTest, BothPrintsTheJobsNotesOnce) {
  Job job = OneNode("llama3.1_8B").DistributedOptimizer();
  job.notes.push_back("a note of the job");
  std::ostringstream out;
  RunBothProjections(job, ProjectionOptions{}, out);
  const std::string text = out.str();
  const size_t first = text.find("a note of the job");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("a note of the job", first + 1), std::string::npos);
}

// The zero-bubble heuristic orders its passes by the layers' real costs: `projection memory`
// reports the in-flight activations `projection both` simulates, not those of unit costs.
TEST(ProjectionRunnerTest, MemoryOfACostDrivenScheduleIsTheOneTheStepRuns) {
  const Job job = TestJob("llama3.1_70B")
                      .Cluster("MI300X", 4)
                      .Parallel(8, 4, 1)
                      .SequenceLength(8192)
                      .MicroBatch(1)
                      .GlobalBatch(32);
  for (const char* schedule : {"zerobubble-heuristic", "zb-h2", "1f1b"}) {
    ProjectionOptions o;
    o.schedule = schedule;
    MemoryReport both;
    ProjectJobPerformance(job, o, &both);
    const MemoryReport alone = RunMemoryProjection(job, o);
    EXPECT_EQ(alone.peak_bytes, both.peak_bytes) << schedule;
  }
}

}  // namespace
}  // namespace sextant
