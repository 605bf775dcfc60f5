#include "projection/trace_step_phases.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "job/test_job.h"
#include "trace/trace_test_util.h"
#include "util/error.h"

namespace sextant {
namespace {

// One training step of rank 1 of 2 (times in µs). ProfilerStep#5 [0, 100) on the main thread:
// the forward's aten::mm launches a 20 µs GEMM at [10, 30); autograd's thread (tid 2) runs
// MmBackward0, launching a 40 µs GEMM at [40, 80) and a reduce-scatter [70, 90) on another
// stream (10 µs of it beside the GEMM, 10 exposed); the optimizer step launches 5 µs at
// [90, 95). GPU window [10, 95) = 85: computation 20 + 40 + 5 = 65, exposed comm 10, idle 10.
KinetoTraceBuilder OneStep(bool with_rank = true) {
  KinetoTraceBuilder b;
  if (with_rank)
    b.TopLevel("distributedInfo", R"({"backend": "nccl", "rank": 1, "world_size": 2})");
  return b.Annotation("ProfilerStep#5", 0, 100)
      .CpuOp("aten::mm", 1, 4)
      .Launch(2, 1, 1)
      .CpuOp("autograd::engine::evaluate_function: MmBackward0", 31, 20, "", /*tid=*/2)
      .Launch(32, 1, 2, /*tid=*/2)
      .Launch(41, 1, 3, /*tid=*/2)
      .Annotation("Optimizer.step#AdamW.step", 85, 10)
      .Launch(86, 1, 4)
      .Kernel("fwd_gemm", 10, 20, 1)
      .Kernel("bwd_gemm", 40, 40, 2)
      .Kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", 70, 20, 3, /*stream=*/9)
      .Kernel("adam_kernel", 90, 5, 4);
}

// Read back, and the file removed (the temporary directory is shared).
std::vector<ProfiledFile> Read(const KinetoTraceBuilder& builder, const std::string& name) {
  const std::string path = TestTempPath(name);
  std::vector<ProfiledFile> files = ReadProfiledFiles({builder.WriteTo(path)});
  std::filesystem::remove(path);
  return files;
}

TEST(TraceStepPhasesTest, SplitsAStepIntoForwardBackwardOptimizerAndCommunication) {
  const MeasuredStep m = MeasureStepPhases(Read(OneStep(), "one_step.json"));
  EXPECT_EQ(m.ranks, 1);
  EXPECT_EQ(m.world_size, 2);
  EXPECT_EQ(m.iterations, 1);
  EXPECT_EQ(m.micro_batches, 1);
  EXPECT_NEAR(m.step_s, 100e-6, 1e-12);
  EXPECT_NEAR(m.forward_s, 20e-6, 1e-12);
  EXPECT_NEAR(m.backward_s, 40e-6, 1e-12);
  EXPECT_NEAR(m.optimizer_s, 5e-6, 1e-12);
  EXPECT_NEAR(m.communication_s, 20e-6, 1e-12);
  EXPECT_NEAR(m.exposed_communication_s, 10e-6, 1e-12);
  EXPECT_NEAR(m.other_s, 10e-6, 1e-12);
}

TEST(TraceStepPhasesTest, CountsOneMicroBatchPerBackwardPass) {
  // Gradient accumulation: forward, backward, forward, backward, then the optimizer.
  const std::string trace = KinetoTraceBuilder()
                                .Annotation("ProfilerStep#1", 0, 100)
                                .Launch(1, 1, 1)
                                .CpuOp("autograd::engine::evaluate_function: A", 10, 10, "", 2)
                                .Launch(11, 1, 2, 2)
                                .Launch(21, 1, 3)
                                .CpuOp("autograd::engine::evaluate_function: B", 30, 10, "", 2)
                                .Launch(31, 1, 4, 2)
                                .Annotation("Optimizer.step#SGD.step", 50, 10)
                                .Launch(51, 1, 5)
                                .Kernel("f1", 5, 5, 1)
                                .Kernel("b1", 12, 5, 2)
                                .Kernel("f2", 22, 5, 3)
                                .Kernel("b2", 32, 5, 4)
                                .Kernel("sgd", 52, 5, 5)
                                .WriteTo(TestTempPath("two_micro_batches.json"));
  const MeasuredStep m = MeasureStepPhases(ReadProfiledFiles({trace}));
  std::filesystem::remove(trace);
  EXPECT_EQ(m.micro_batches, 2);
  EXPECT_EQ(m.world_size, 1);  // no distributedInfo: the ranks read
  EXPECT_NEAR(m.forward_s, 10e-6, 1e-12);
  EXPECT_NEAR(m.backward_s, 10e-6, 1e-12);
}

TEST(TraceStepPhasesTest, ATraceWithoutBackwardIsRefusedNamingTheFile) {
  const std::string trace = KinetoTraceBuilder()
                                .Annotation("ProfilerStep#1", 0, 100)
                                .Launch(1, 1, 1)
                                .Kernel("inference_gemm", 5, 5, 1)
                                .WriteTo(TestTempPath("no_backward.json"));
  try {
    MeasureStepPhases(ReadProfiledFiles({trace}));
    FAIL() << "a trace without a backward was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no_backward.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backward"), std::string::npos) << e.what();
  }
  std::filesystem::remove(trace);
}

// A step without a distributedInfo rank, its backward GEMM `backward_us` long.
KinetoTraceBuilder RanklessStep(double backward_us) {
  return KinetoTraceBuilder()
      .Annotation("ProfilerStep#5", 0, 100)
      .CpuOp("aten::mm", 1, 4)
      .Launch(2, 1, 1)
      .CpuOp("autograd::engine::evaluate_function: MmBackward0", 31, 20, "", /*tid=*/2)
      .Launch(32, 1, 2, /*tid=*/2)
      .Kernel("fwd_gemm", 10, 20, 1)
      .Kernel("bwd_gemm", 40, backward_us, 2);
}

// Traces are told apart by what they measure: a copy of one under another name, with its rank
// or without it, would be averaged as a second rank, and is refused naming both files; two
// ranks that differ by a nanosecond are two ranks.
TEST(TraceStepPhasesTest, ACopyOfARanklessTraceIsRefused) {
  const std::string a = RanklessStep(40).WriteTo(TestTempPath("rank_a.json"));
  const std::string copy = RanklessStep(40).WriteTo(TestTempPath("rank_a_copy.json"));
  const std::string b = RanklessStep(40.001).WriteTo(TestTempPath("rank_b.json"));
  try {
    MeasureStepPhases(ReadProfiledFiles({a, copy}));
    FAIL() << "a copy of one trace was averaged as a second rank";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("rank_a_copy.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("measures exactly what"), std::string::npos) << e.what();
  }
  EXPECT_EQ(MeasureStepPhases(ReadProfiledFiles({a, b})).ranks, 2);
  // A rank's trace (rank 1 of 2) and the same step without its distributedInfo.
  const std::string ranked = OneStep().WriteTo(TestTempPath("rank_1.json"));
  const std::string unranked = OneStep(false).WriteTo(TestTempPath("rank_1_copy.json"));
  try {
    MeasureStepPhases(ReadProfiledFiles({ranked, unranked}));
    FAIL() << "a rankless copy of a rank's trace was averaged as a second rank";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("rank_1_copy.json: measures exactly what"),
              std::string::npos)
        << e.what();
  }
  for (const std::string& f : {a, copy, b, ranked, unranked}) std::filesystem::remove(f);
}

PieceTiming Piece(double f, double b, double w, double forward_comm) {
  PieceTiming p;
  p.forward_s = f;
  p.backward_input_s = b;
  p.backward_weight_s = w;
  p.forward_comm_s = forward_comm;
  p.tp_comm_s = forward_comm;
  return p;
}

TEST(TraceStepPhasesTest, AnchorScalesEachPhaseToWhatWasMeasured) {
  // Modelled per micro-batch: two layers of F 10 (2 of it TP communication), B 8, W 6; the
  // embedding F 1; the output F 3, B 2, W 2. Computation: forward 2 x 8 + 1 + 3 = 20,
  // backward 2 x 14 + 4 = 32. Optimizer 4; data-parallel communication 5 before overlap.
  ModelTimings t;
  t.layers = {Piece(10, 8, 6, 2), Piece(10, 8, 6, 2)};
  t.embedding = Piece(1, 0, 0, 0);
  t.output = Piece(3, 2, 2, 0);
  t.optimizer_step_s = 4;
  DataParallelCost dp;
  dp.total_s = 5;
  // Measured per iteration of 2 micro-batches: forward 60 (30 each: x 1.5), backward 128
  // (64 each: x 2), optimizer 2 (x 0.5), exposed communication 20, of which the layers' own
  // TP communication is 2 x 2 per micro-batch = 8: 12 data-parallel = 2.4 x the model's 5.
  MeasuredStep m;
  m.micro_batches = 2;
  m.world_size = 8;
  m.forward_s = 60;
  m.backward_s = 128;
  m.optimizer_s = 2;
  m.exposed_communication_s = 20;
  m.other_s = 7;
  const Job job = TestJob("llama3.1_8B").Cluster("H100", 1).Dp(8).MicroBatch(1).GlobalBatch(16);
  const StepAnchor a = AnchorOnStep(m, job, t, dp);
  EXPECT_DOUBLE_EQ(a.forward_scale, 1.5);
  EXPECT_DOUBLE_EQ(a.backward_scale, 2.0);
  EXPECT_DOUBLE_EQ(a.optimizer_scale, 0.5);
  EXPECT_TRUE(a.dp_anchored);
  EXPECT_DOUBLE_EQ(a.dp_exposed_per_modelled, 2.4);
  EXPECT_DOUBLE_EQ(a.other_s, 7);

  ApplyStepAnchor(a, &t);
  // The computation is scaled, the communication inside the pieces is not: 8 x 1.5 + 2.
  EXPECT_DOUBLE_EQ(t.layers[0].forward_s, 14);
  EXPECT_DOUBLE_EQ(t.layers[0].backward_input_s, 16);
  EXPECT_DOUBLE_EQ(t.layers[0].backward_weight_s, 12);
  EXPECT_DOUBLE_EQ(t.output.forward_s, 4.5);
  EXPECT_DOUBLE_EQ(t.optimizer_step_s, 2);
}

TEST(TraceStepPhasesTest, WithoutDataParallelismTheExposedCommunicationIsTheLayers) {
  // The pieces of the test above, traced on one data-parallel rank: the 20 exposed per
  // iteration is the layers' TP communication, modelled 2 x 2 per micro-batch x 2 = 8: x 2.5.
  ModelTimings t;
  t.layers = {Piece(10, 8, 6, 2), Piece(10, 8, 6, 2)};
  t.embedding = Piece(1, 0, 0, 0);
  t.output = Piece(3, 2, 2, 0);
  MeasuredStep m;
  m.micro_batches = 2;
  m.world_size = 2;
  m.forward_s = 60;
  m.backward_s = 128;
  m.exposed_communication_s = 20;
  const Job job = TestJob("llama3.1_8B").Cluster("H100", 1).Parallel(2).MicroBatch(1);
  const StepAnchor a = AnchorOnStep(m, job, t, DataParallelCost{});
  EXPECT_FALSE(a.dp_anchored);
  EXPECT_DOUBLE_EQ(a.layer_comm_scale, 2.5);
  ApplyStepAnchor(a, &t);
  EXPECT_DOUBLE_EQ(t.layers[0].forward_s, 8 * 1.5 + 2 * 2.5);
  EXPECT_DOUBLE_EQ(t.layers[0].tp_comm_s, 5);
}

TEST(TraceStepPhasesTest, ATraceOfAnotherModelIsRefused) {
  // Measured forward 0.1 per micro-batch against the model's 1: a tenth, not a training step
  // of this model.
  ModelTimings t;
  t.layers = {Piece(1, 1, 1, 0)};
  MeasuredStep m;
  m.micro_batches = 1;
  m.forward_s = 0.1;
  m.backward_s = 2;
  m.files = {"other_model.json"};
  const Job job = TestJob("llama3.1_8B").Cluster("H100", 1).Dp(8);
  try {
    AnchorOnStep(m, job, t, DataParallelCost{});
    FAIL() << "a forward a tenth of the model's was taken";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not of this model"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("other_model.json"), std::string::npos) << e.what();
  }
}

TEST(TraceStepPhasesTest, TracedJobRunsTheTracedWorldAndRefusesPipelines) {
  MeasuredStep m;
  m.world_size = 2;
  m.micro_batches = 3;
  Job job = TestJob("llama3.1_8B")
                .Cluster("H100", 8)
                .Parallel(1, 1, 1)
                .Dp(64)
                .MicroBatch(2)
                .GlobalBatch(1024);
  const Job traced = TracedJob(m, job);
  EXPECT_EQ(traced.parallel.dp, 2);
  EXPECT_EQ(traced.cluster.num_nodes, 1);
  EXPECT_EQ(traced.cluster.gpus_per_node, 2);  // two GPUs of one node, as traced
  EXPECT_EQ(traced.training.global_batch_size, 2 * 2 * 3);

  Job pipelined = TestJob("llama3.1_8B").Cluster("H100", 8).Parallel(1, 2, 1).Dp(32);
  EXPECT_THROW(TracedJob(m, pipelined), UserError);
  Job tp4 = TestJob("llama3.1_8B").Cluster("H100", 8).Parallel(4, 1, 1).Dp(16);
  EXPECT_THROW(TracedJob(m, tp4), UserError);  // 2 ranks cannot hold TP 4
}

}  // namespace
}  // namespace sextant
