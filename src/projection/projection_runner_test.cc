#include "projection/projection_runner.h"

#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>

#include "job/job_builder.h"
#include "job/test_job.h"
#include "memory/memory_model.h"
#include "projection/performance_model.h"
#include "projection/projection_options.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

// Primus's Llama 4 Scout example on MI300X (configured global batch 8) first holds at 8 nodes,
// where DP 64 rounds the batch up to 64 and the peak sits just under HBM: the advice says
// AT-RISK, not "fits", names the batch it assumed, and says that no node count makes it FIT.
TEST(ProjectionRunnerTest, ScaleAdviceSaysAtRiskAndTheBatchItAssumes) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.config_path =
      CorpusPath("primus/examples/megatron/configs/MI300X/llama4_17B16E-BF16-pretrain.yaml");
  request.primus_path = CorpusPath("primus");
  request.use_environment = false;
  const Job job = BuildJob(request);
  ASSERT_TRUE(job.fewest_nodes_chosen);
  const MemoryReport report = RunMemoryProjection(job, ProjectionOptions{});
  ASSERT_EQ(report.verdict, Verdict::kOom);
  const std::string& advice = report.assumptions.at(0);
  EXPECT_EQ(advice.rfind("scale: 1 node(s) do not hold this job; AT-RISK from 8 nodes (", 0), 0u)
      << advice;
  EXPECT_NE(advice.find("; global batch 8 -> 64): --target-nodes 8"), std::string::npos) << advice;
  EXPECT_NE(advice.find("no node count up to 1024 x this one makes it FIT"), std::string::npos)
      << advice;
  EXPECT_EQ(advice.find("fits from"), std::string::npos) << advice;
  EXPECT_EQ(RunMemoryProjection(RescaleToNodes(job, 8), ProjectionOptions{}).verdict,
            Verdict::kAtRisk);
}

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

// At a node count Sextant chose, a job that does not fit is told the fewest nodes at which
// data-parallel sharding makes it fit: Llama 3.1 70B under FSDP holds 16 bytes per parameter
// over DP, ~140 GB per MI300X at DP 8 plus activations, ~70 GB at DP 16. A node count the user
// asked for gets no such advice; an unsharded job that no DP rescues says so.
TEST(ProjectionRunnerTest, AJobThatDoesNotFitTheChosenScaleIsToldTheFewestNodesThatFit) {
  Job job = OneNode("llama3.1_70B");
  job.parallel.fsdp2 = true;
  job.fewest_nodes_chosen = true;
  const MemoryReport one = RunMemoryProjection(job, ProjectionOptions{});
  ASSERT_EQ(one.verdict, Verdict::kOom);
  ASSERT_FALSE(one.assumptions.empty());
  EXPECT_EQ(
      one.assumptions[0].rfind("scale: 1 node(s) do not hold this job; fits from 2 nodes (", 0), 0u)
      << one.assumptions[0];
  const MemoryReport two = RunMemoryProjection(RescaleToNodes(job, 2), ProjectionOptions{});
  EXPECT_NE(two.verdict, Verdict::kOom);
  EXPECT_NE(one.assumptions[0].find(
                fmt::format("({:.2f} GiB peak", static_cast<double>(two.peak_bytes) / (1 << 30))),
            std::string::npos)
      << one.assumptions[0];
  EXPECT_NE(
      ProjectJobPerformance(job, ProjectionOptions{}).assumptions[0].find("; fits from 2 nodes"),
      std::string::npos);
  job.fewest_nodes_chosen = false;
  for (const std::string& a : RunMemoryProjection(job, ProjectionOptions{}).assumptions) {
    EXPECT_EQ(a.find("fits from"), std::string::npos) << a;
  }
  Job unsharded = OneNode("llama3.1_70B");
  unsharded.fewest_nodes_chosen = true;
  EXPECT_NE(RunMemoryProjection(unsharded, ProjectionOptions{})
                .assumptions[0]
                .find("no node count up to 1024 x this one fits"),
            std::string::npos);
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

// The scaling table's row at the job's own node count says OOM with the peak the headline
// gives: the in-flight micro-batches of the schedule the step ran (DualPipeV keeps more than
// 1F1B's formula), not a formula's. Llama 3.1 70B at PP 4 with TP 1 on one MI300X node does
// not fit at any schedule.
TEST(ProjectionRunnerTest, ScalingRowsTakeTheSimulatedSchedulesMemory) {
  const Job job = TestJob("llama3.1_70B")
                      .Cluster("MI300X", 1)
                      .Parallel(1, 4, 1)
                      .Dp(2)
                      .SequenceLength(8192)
                      .MicroBatch(1)
                      .GlobalBatch(32);
  for (const char* schedule : {"dualpipev", "1f1b"}) {
    ProjectionOptions o;
    o.schedule = schedule;
    MemoryReport memory;
    const PerformanceReport perf = ProjectJobPerformance(job, o, &memory);
    ASSERT_EQ(memory.verdict, Verdict::kOom) << schedule;
    const std::string oom =
        fmt::format("OOM: {:.1f} GiB peak", static_cast<double>(memory.peak_bytes) / (1 << 30));
    bool found = false;
    for (const ScalingPoint& p : perf.scaling) {
      if (p.nodes != 1) continue;
      found = true;
      EXPECT_NE(p.note.find(oom), std::string::npos) << schedule << ": " << p.note;
    }
    EXPECT_TRUE(found) << schedule;
  }
}

}  // namespace
}  // namespace sextant
