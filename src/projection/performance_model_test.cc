#include "projection/performance_model.h"
#include <algorithm>

#include <cmath>

#include <gtest/gtest.h>

#include "cost/efficiency_table.h"
#include "cost/layer_cost.h"
#include "job/test_job.h"
#include "job/torchtitan_schedules.h"
#include "memory/activation_memory.h"
#include "model/flop_count.h"
#include "projection/layer_timing.h"
#include "projection/performance_report.h"
#include "util/error.h"

namespace sextant {
namespace {

Job LlamaJob(const std::string& model, const std::string& gpu, int nodes, int tp, int pp, int vpp,
             int64_t gbs) {
  return TestJob(model)
      .Cluster(gpu, nodes)
      .Parallel(tp, pp, vpp)
      .Dp(nodes * 8 / (tp * pp))
      .SequenceParallel(tp > 1)
      .DistributedOptimizer()
      .SequenceLength(8192)
      .MicroBatch(1)
      .GlobalBatch(gbs)
      .OverlapGradReduceAndParamGather();
}

// With full recomputation a layer keeps only its input between forward and backward, so the
// simulated 1F1B peak on rank 0 (PP 4: four micro-batches in flight) is 4 x (20 layer inputs +
// the embedding stage's token ids).
TEST(PerformanceModelTest, SimulatedActivationsFollowFullRecompute) {
  Job job = LlamaJob("llama3.1_70B", "MI300X", 4, 8, 4, 1, 8);
  job.training.recompute.granularity = RecomputeGranularity::kFull;
  job.training.recompute.method = RecomputeMethod::kUniform;
  job.training.recompute.num_layers = 1;
  const PerformanceReport r = ProjectPerformance(job);
  const int64_t per_micro_batch =
      20 * RecomputedLayerInputBytes(job) + EmbeddingActivationBytes(job);
  EXPECT_EQ(r.simulation.ranks.front().peak_activation_bytes, 4 * per_micro_batch);
}

TEST(PerformanceModelTest, MetricsAreConsistentWithEachOther) {
  const Job job = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 1, 1, 64);
  const PerformanceReport r = ProjectPerformance(job);
  ASSERT_GT(r.iteration_time_ms, 0);
  // tokens/s/GPU x GPUs x iteration = tokens per iteration (GBS x seq).
  EXPECT_NEAR(r.tokens_per_s_per_gpu * r.gpus * r.iteration_time_ms / 1e3, 64.0 * 8192,
              1e-6 * 64 * 8192);
  const double flops = MegatronModelFlops(job.model, {8192, 64, job.model.PaddedVocabSize(1)});
  EXPECT_NEAR(r.model_tflops_per_gpu, flops / (r.iteration_time_ms / 1e3) / 8 / 1e12, 1e-9);
  EXPECT_NEAR(r.mfu, r.model_tflops_per_gpu / job.cluster.gpu.PeakTflops(DType::kBF16), 1e-12);
  // An 8B model on MI300X lands between 15% and 70% MFU for any sane cost model.
  EXPECT_GT(r.mfu, 0.15);
  EXPECT_LT(r.mfu, 0.70);
}

// The report says what the GEMMs ran in and carries the batch it projected.
TEST(PerformanceModelTest, ReportStatesPrecisionAndBatch) {
  Job job = LlamaJob("llama3.1_8B", "MI355X", 1, 1, 1, 1, 64);
  job.training.precision.gemm = DType::kFP8;
  job.training.precision.fp8_current_scaling = true;
  const PerformanceReport r = ProjectPerformance(job);
  EXPECT_EQ(r.gemm_precision, "fp8 (current scaling)");
  EXPECT_EQ(r.micro_batch_size, 1);
  EXPECT_EQ(r.global_batch_size, 64);
  EXPECT_EQ(r.seq_length, 8192);
  const auto stated = std::find(
      r.assumptions.begin(), r.assumptions.end(),
      "precision: transformer-layer GEMMs in fp8 (current scaling); attention and the output "
      "head in bf16");
  EXPECT_NE(stated, r.assumptions.end());
  job.training.precision.gemm = DType::kFP4;
  EXPECT_EQ(ProjectPerformance(job).gemm_precision, "fp4");
}

// MFU stays against the 16-bit peak, as Megatron logs it; a run whose GEMMs are narrower also
// gets MFU against their own peak (MI355X: FP8 2x, FP4 4x the BF16 one), which no real run
// can pass 100% of.
TEST(PerformanceModelTest, NarrowGemmsAlsoReportMfuAgainstTheirOwnPeak) {
  Job job = LlamaJob("llama3.1_8B", "MI355X", 1, 1, 1, 1, 64);
  EXPECT_EQ(ProjectPerformance(job).mfu_at_gemm_precision, 0);
  const GpuSpec& gpu = job.cluster.gpu;
  for (DType gemm : {DType::kFP8, DType::kFP4}) {
    job.training.precision.gemm = gemm;
    const PerformanceReport r = ProjectPerformance(job);
    EXPECT_NEAR(r.mfu_at_gemm_precision, r.model_tflops_per_gpu / gpu.PeakTflops(gemm), 1e-12);
    EXPECT_NEAR(r.mfu_at_gemm_precision / r.mfu,
                gpu.PeakTflops(DType::kBF16) / gpu.PeakTflops(gemm), 1e-12);
    EXPECT_EQ(r.gemm_peak_dtype, DTypeName(gemm));
  }
}

TEST(PerformanceModelTest, BreakdownAddsUpToTheIteration) {
  const Job job = LlamaJob("llama3.1_70B", "H100", 4, 8, 4, 1, 128);
  const PerformanceReport r = ProjectPerformance(job);
  const auto& b = r.breakdown;
  const double sum = b.compute_ms + b.pipeline_bubble_ms + b.tp_comm_ms + b.cp_comm_ms +
                     b.ep_comm_ms + b.dp_comm_exposed_ms + b.optimizer_ms;
  EXPECT_NEAR(sum, r.iteration_time_ms, 1e-6 * r.iteration_time_ms);
  EXPECT_GT(b.tp_comm_ms, 0);
  EXPECT_GT(b.pipeline_bubble_ms, 0);
  // 1F1B with m = 128 micro-batches (DP = 32/(8x4) = 1): the uniform-cost bubble is
  // (PP-1)/(m+PP-1) of the step; the LM head makes the last stage the slowest, and the other
  // ranks wait for it, so the critical bubble is larger but stays well below 10%.
  EXPECT_GE(r.bubble_ratio, 3.0 / (128 + 3) - 1e-3);
  EXPECT_LT(r.bubble_ratio, 0.10);
}

TEST(PerformanceModelTest, InterleavingShrinksTheBubble) {
  const Job plain = LlamaJob("llama3.1_70B", "H100", 4, 8, 4, 1, 16);
  const Job inter = LlamaJob("llama3.1_70B", "H100", 4, 8, 4, 5, 16);
  const PerformanceReport a = ProjectPerformance(plain);
  const PerformanceReport b = ProjectPerformance(inter);
  EXPECT_EQ(b.schedule, "interleaved");
  EXPECT_LT(b.bubble_ratio, a.bubble_ratio);
}

TEST(PerformanceModelTest, ComparesAllSchedulesAndExplainsSkips) {
  const Job job = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 4, 1, 32);
  PerformanceOptions o;
  o.compare_all_schedules = true;
  const PerformanceReport r = ProjectPerformance(job, o);
  int ran = 0;
  for (const auto& s : r.schedules) {
    if (s.ran) {
      ++ran;
      EXPECT_GT(s.iteration_time_ms, 0) << s.schedule;
    } else {
      EXPECT_FALSE(s.skipped_because.empty()) << s.schedule;
    }
  }
  EXPECT_GE(ran, 6);
}

TEST(PerformanceModelTest, ATorchTitanJobComparesOnlyTheSchedulesItCanRun) {
  // torch.distributed.pipelining has GPipe, 1F1B, Interleaved1F1B, ZBVZeroBubble and
  // DualPipeV classes among those Sextant simulates; ZB-H1/H2 and the greedy variants are not.
  Job job = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 4, 1, 32);
  job.framework = "torchtitan";
  PerformanceOptions o;
  o.compare_all_schedules = true;
  for (const auto& s : ProjectPerformance(job, o).schedules) {
    ScheduleKind kind;
    ASSERT_TRUE(LookupScheduleKind(s.schedule, &kind)) << s.schedule;
    if (TorchTitanScheduleFor(kind) == nullptr) {
      EXPECT_FALSE(s.ran) << s.schedule;
      EXPECT_NE(s.skipped_because.find("not a torchtitan schedule class"), std::string::npos)
          << s.schedule;
    }
  }
}

TEST(PerformanceModelTest, OneScheduleAloneAndInTheComparisonAgree) {
  // PP 4 at VPP 1 with ZBV (a V shape: two chunks per rank). The header says VPP 2, and the
  // `all` table's rows carry the same bubble as each schedule projected alone.
  Job zbv = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 4, 1, 64);
  zbv.training.pipeline_schedule = ScheduleKind::kZbvFormatted;
  const PerformanceReport alone = ProjectPerformance(zbv);
  EXPECT_EQ(alone.parallel.vpp, 2);
  const Job plain = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 4, 1, 64);
  const PerformanceReport one_f_one_b = ProjectPerformance(plain);
  PerformanceOptions all;
  all.compare_all_schedules = true;
  const PerformanceReport compared = ProjectPerformance(plain, all);
  bool saw_zbv = false, saw_1f1b = false;
  for (const auto& row : compared.schedules) {
    if (row.schedule == "zbv-formatted") {
      saw_zbv = row.ran;
      EXPECT_DOUBLE_EQ(row.bubble_ratio, alone.bubble_ratio);
      EXPECT_NEAR(row.iteration_time_ms, alone.iteration_time_ms, 1e-9 * alone.iteration_time_ms);
    }
    if (row.schedule == "1f1b") {
      saw_1f1b = row.ran;
      EXPECT_DOUBLE_EQ(row.bubble_ratio, one_f_one_b.bubble_ratio);
    }
  }
  EXPECT_TRUE(saw_zbv);
  EXPECT_TRUE(saw_1f1b);
}

TEST(PerformanceModelTest, InvalidRequestsAreClearErrors) {
  // VPP 3 does not divide 32 layers over PP 4.
  EXPECT_THROW(ProjectPerformance(LlamaJob("llama3.1_8B", "MI300X", 1, 1, 4, 3, 32)), UserError);
  // A one-chunk schedule with VPP 2.
  Job zb = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 4, 2, 32);
  zb.training.pipeline_schedule = ScheduleKind::kZeroBubbleH1;
  EXPECT_THROW(ProjectPerformance(zb), UserError);
  // 3 nodes of 8 GPUs do not split into TP 8 x PP 2.
  EXPECT_THROW(RescaleToNodes(LlamaJob("llama3.1_8B", "MI300X", 2, 8, 2, 1, 64), 3), UserError);
}

TEST(PerformanceModelTest, ScalingTableGrowsDataParallelism) {
  const Job job = LlamaJob("llama3.1_8B", "MI300X", 2, 1, 1, 1, 256);
  PerformanceOptions o;
  o.scaling_nodes = {1, 2, 4, 64};
  const PerformanceReport r = ProjectPerformance(job, o);
  ASSERT_EQ(r.scaling.size(), 4u);
  EXPECT_EQ(r.scaling[0].dp, 8);
  EXPECT_EQ(r.scaling[2].dp, 32);
  EXPECT_LE(r.scaling[2].tokens_per_s_per_gpu, r.scaling[0].tokens_per_s_per_gpu * 1.0001);
  // 512 GPUs cannot split a batch of 256: one micro-batch each (as Primus forces), said.
  EXPECT_EQ(r.scaling[3].dp, 512);
  EXPECT_EQ(r.scaling[3].micro_batches, 1);
  EXPECT_NE(r.scaling[3].note.find("global batch 256 -> 512"), std::string::npos)
      << r.scaling[3].note;
}

// TorchTitan's training.local_batch_size and MaxText's per_device_batch_size fix the batch per
// data-parallel rank: on more nodes the launcher runs more sequences per step, so the scaling
// rows keep the micro-batches per rank and grow the global batch (48 = 6 x DP 8 on one node
// -> 6 x DP 32 = 192 on four), with nothing to round and no note.
TEST(PerformanceModelTest, ScalingKeepsABatchFixedPerDataParallelRank) {
  Job job = LlamaJob("llama3.1_8B", "MI300X", 1, 1, 1, 1, 48);
  job.training.micro_batch_size = 6;
  job.training.sequences_per_data_rank = 6;
  const Job scaled = RescaleToNodes(job, 4);
  EXPECT_EQ(scaled.parallel.dp, 32);
  EXPECT_EQ(scaled.training.global_batch_size, 192);
  EXPECT_TRUE(scaled.warnings.empty());
  PerformanceOptions o;
  o.scaling_nodes = {1, 4};
  const PerformanceReport r = ProjectPerformance(job, o);
  EXPECT_TRUE(r.global_batch_grows_with_dp);
  ASSERT_EQ(r.scaling.size(), 2u);
  EXPECT_EQ(r.scaling[1].micro_batches, 1);
  // Nothing rounded; 6 sequences of 8192 tokens without recompute do not fit an MI300X, which
  // the row says.
  EXPECT_EQ(r.scaling[1].note.find("global batch"), std::string::npos) << r.scaling[1].note;
  EXPECT_EQ(r.scaling[1].note.rfind("OOM: ", 0), 0u) << r.scaling[1].note;
  // A Megatron global batch stays fixed: 48 over DP 32 x 6 rounds to one micro-batch, said.
  job.training.sequences_per_data_rank = 0;
  EXPECT_FALSE(ProjectPerformance(job, o).global_batch_grows_with_dp);
  EXPECT_EQ(RescaleToNodes(job, 4).training.global_batch_size, 192);
  EXPECT_EQ(RescaleToNodes(job, 4).warnings.size(), 1u);
}

// Llama 3.1 8B at s = 4096 on one MI300X node, DP 8, one micro-batch of 1 per GPU.
Job Llama8bOnOneMi300xNode() {
  return TestJob("llama3.1_8B")
      .Cluster("MI300X")
      .Dp(8)
      .SequenceLength(4096)
      .MicroBatch(1)
      .GlobalBatch(8);
}

// Full recompute of some layers re-runs the forward of those layers only. Llama 3.1 8B has 32
// identical layers: recomputing all of them adds Megatron's full-recompute count (one more
// forward of every layer); block recompute of 16 adds half of that extra, not all of it.
TEST(PerformanceModelTest, PartialFullRecomputeCountsOnlyTheRecomputedLayers) {
  Job job = Llama8bOnOneMi300xNode();
  const FlopInputs fi{4096, 8, job.model.PaddedVocabSize(1)};
  const double all = MegatronFullRecomputeFlops(job.model, fi) / MegatronModelFlops(job.model, fi);
  job.training.recompute.granularity = RecomputeGranularity::kFull;
  job.training.recompute.method = RecomputeMethod::kBlock;
  job.training.recompute.num_layers = 32;
  PerformanceReport r = ProjectPerformance(job, {});
  EXPECT_NEAR(r.hardware_tflops_per_gpu / r.model_tflops_per_gpu, all, 1e-9);
  job.training.recompute.num_layers = 16;
  r = ProjectPerformance(job, {});
  EXPECT_NEAR(r.hardware_tflops_per_gpu / r.model_tflops_per_gpu, 1 + (all - 1) / 2, 1e-9);
  EXPECT_GT(all, 1.25);  // the extra forward is about a third of forward + backward
}

// Under LoRA the GPUs skip the frozen weights' gradient GEMMs and run the adapters; hardware
// FLOPs count that, model FLOPs keep Megatron's full-training formula. Llama 3.1 8B, s = 4096,
// TP 1, rank 32 on the four default modules, per layer and micro-batch (FLOPs = 2·M·N·K):
//   G  = forward linear GEMMs 2·4096·4096·(6144 + 4096 + 28672) + 2·4096·14336·4096;
//   A  = causal attention forward 137,472,507,904 (backward 2.5x);
//   ad = adapters' forward 2·4096·32·69,632 (backward 2x);
//   LM = LM head forward 2·4096·128256·4096.
// Full training runs 32·(3G + 3.5A) + 3·LM, LoRA 32·(2G + 3.5A + 3·ad) + 2·LM.
TEST(PerformanceModelTest, LoraHardwareFlopsCountWhatRuns) {
  Job job = Llama8bOnOneMi300xNode();
  job.training.lora.enabled = true;
  const double G = 2.0 * 4096 * 4096 * (6144 + 4096 + 28672) + 2.0 * 4096 * 14336 * 4096;
  const double A = 137472507904.0;
  const double ad = 2.0 * 4096 * 32 * 69632;
  const double lm = 2.0 * 4096 * 128256 * 4096;
  const double ratio =
      (32 * (2 * G + 3.5 * A + 3 * ad) + 2 * lm) / (32 * (3 * G + 3.5 * A) + 3 * lm);
  EXPECT_NEAR(ComputeModelTimings(job).executed_flops_ratio, ratio, 1e-12);
  const PerformanceReport r = ProjectPerformance(job, {});
  EXPECT_NEAR(r.hardware_tflops_per_gpu / r.model_tflops_per_gpu, ratio, 1e-9);
}

// MaxText's dense_matmul (a capacity factor) runs more than the model FLOPs formula counts:
// per MoE layer and sequence (S = 4096, H = 4096, F = 14336, E = 8 experts, top-2, capacity
// C = 1.25 x 4096 x 2 / 8 = 1280, layers/moe.py), the one-hot einsums
//   dispatch [E·C, H] = maskᵀ[E·C, S]·x[S, H]: forward + input gradient, 4·E·C·H·S;
//   combine  [S, H] = mask[S, E·C]·y[E·C, H]: forward + input gradient + the mask's gradient,
//   6·E·C·H·S;
// and the experts run E·C = 10240 slots instead of S·k = 8192 tokens: their SwiGLU GEMMs
// (2·rows·H·2F + 2·rows·F·H forward, twice that backward) on 2048 more rows. Hardware FLOPs
// count both; model FLOPs do not.
TEST(PerformanceModelTest, CapacitySlotHardwareFlopsCountTheEinsumsAndEmptySlots) {
  Job job = TestJob("mixtral_8x7B")
                .Cluster("MI300X")
                .Dp(8)
                .SequenceLength(4096)
                .MicroBatch(1)
                .GlobalBatch(8);
  const double counted = [&] {
    const ModelTimings plain = ComputeModelTimings(job);
    EXPECT_DOUBLE_EQ(plain.executed_flops_ratio, 1.0);
    const LayerCostModel model(job, EfficiencyTable::Default(job.cluster.gpu), nullptr);
    const LayerCost layer = model.TransformerLayer(0), head = model.OutputHead();
    return 32 * (layer.flops_forward + layer.flops_backward) + head.flops_forward +
           head.flops_backward;
  }();
  job.model.moe.capacity_factor = 1.25;
  job.training.moe_expert_compute = MoeExpertCompute::kCapacitySlots;
  const double EC = 8 * 1280.0, S = 4096, H = 4096, F = 14336;
  const double einsums = 10 * EC * H * S;
  const double slots = 3 * (2 * (EC - S * 2) * H * 2 * F + 2 * (EC - S * 2) * F * H);
  const double ratio = (counted + 32 * (einsums + slots)) / counted;
  EXPECT_NEAR(ComputeModelTimings(job).executed_flops_ratio, ratio, 1e-9 * ratio);
  const PerformanceReport r = ProjectPerformance(job, {});
  EXPECT_NEAR(r.hardware_tflops_per_gpu / r.model_tflops_per_gpu, ratio, 1e-9 * ratio);
  EXPECT_GT(ratio, 1.2);
}

// LoRA's default targets name linear_qkv, which an MLA model (DeepSeek-V2-Lite) does not have:
// the assumption lists the adapted modules only.
TEST(PerformanceModelTest, LoraAssumptionListsOnlyModulesTheModelHas) {
  Job job = TestJob("deepseek_v2_lite").Cluster("MI300X").Dp(8).MicroBatch(1).GlobalBatch(8);
  job.training.lora.enabled = true;
  std::string line;
  for (const std::string& a : ComputeModelTimings(job).assumptions) {
    if (a.rfind("LoRA rank", 0) == 0) line = a;
  }
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.find("linear_qkv"), std::string::npos) << line;
  EXPECT_NE(line.find("on linear_proj, linear_fc1, linear_fc2:"), std::string::npos) << line;
}

// Experts run as a loop of per-expert GEMMs take the token counts as host integers; the
// host's launch time for that loop is not modelled, and the assumptions say so. One grouped
// kernel has no such loop and no such line.
TEST(PerformanceModelTest, ExpertGemmLoopSaysItsHostLaunchTimeIsNotModelled) {
  Job job = TestJob("deepseek_v2_lite").Cluster("MI355X").Ep(8).Dp(8).MicroBatch(1).GlobalBatch(8);
  auto line = [](const Job& j) {
    for (const std::string& a : ComputeModelTimings(j).assumptions) {
      if (a.rfind("expert GEMMs:", 0) == 0) return a;
    }
    return std::string();
  };
  job.training.expert_gemm_launch = ExpertGemmLaunch::kStreamLoop;
  EXPECT_NE(line(job).find("launch time is not modelled"), std::string::npos) << line(job);
  job.training.expert_gemm_launch = ExpertGemmLaunch::kGroupedKernel;
  EXPECT_EQ(line(job), "");
}

TEST(PerformanceModelTest, ScalingRowsStartFromTheConfiguredBatch) {
  Job job = LlamaJob("llama3.1_8B", "MI300X", 8, 1, 1, 1, 64);
  job.training.unrounded_global_batch_size = 96;
  const Job one = RescaleToNodes(job, 1);
  EXPECT_EQ(one.training.global_batch_size, 96);
  EXPECT_EQ(one.training.unrounded_global_batch_size, 0);
  EXPECT_TRUE(one.warnings.empty());
  PerformanceOptions o;
  o.scaling_nodes = {1, 8};
  const PerformanceReport r = ProjectPerformance(job, o);
  ASSERT_EQ(r.scaling.size(), 2u);
  EXPECT_EQ(r.scaling[0].micro_batches, 12);
  EXPECT_EQ(r.scaling[0].note, "");
  EXPECT_EQ(r.scaling[1].micro_batches, 1);
  EXPECT_EQ(r.scaling[1].note, "global batch 96 -> 64 (1 micro-batch of 1 x DP 64)");
  // The header of a report whose batch was rounded says which batch its numbers are for.
  EXPECT_EQ(r.configured_global_batch_size, 96);
  EXPECT_NE(RenderPerformanceReport(r).find("| 1 micro-batch | global batch 64 (configured 96)\n"),
            std::string::npos)
      << RenderPerformanceReport(r).substr(0, 200);
}

TEST(PerformanceModelTest, ScalingRoundsTheBatchDownAndLeavesOutLayoutsThatCannotRun) {
  // GBS 96 over MBS 1 x DP 64 (8 nodes): 1.5 micro-batches -> 1, a global batch of 64.
  const Job scaled = RescaleToNodes(LlamaJob("llama3.1_8B", "MI300X", 1, 1, 1, 1, 96), 8);
  EXPECT_EQ(scaled.parallel.dp, 64);
  EXPECT_EQ(scaled.training.global_batch_size, 64);
  ASSERT_EQ(scaled.warnings.size(), 1u);
  EXPECT_EQ(scaled.warnings[0], "global batch 96 -> 64 (1 micro-batch of 1 x DP 64)");
  // TP 8 x PP 2 needs 16 GPUs: one node of 8 is not a row of the table.
  PerformanceOptions o;
  o.scaling_nodes = {1, 2, 4};
  const PerformanceReport r =
      ProjectPerformance(LlamaJob("llama3.1_8B", "MI300X", 2, 8, 2, 1, 64), o);
  ASSERT_EQ(r.scaling.size(), 2u);
  EXPECT_EQ(r.scaling[0].nodes, 2);
  EXPECT_EQ(r.scaling[1].nodes, 4);
  bool said = false;
  for (const auto& a : r.assumptions) said = said || a.find("scaling: 1 node left out") == 0;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace sextant
