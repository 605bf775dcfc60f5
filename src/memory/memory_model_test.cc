#include "memory/memory_model.h"
#include <algorithm>

#include <cmath>

#include <gtest/gtest.h>

#include "job/test_job.h"
#include "memory/activation_memory.h"
#include "memory/model_state_memory.h"
#include "parallel/sharding.h"
#include "util/units.h"

namespace sextant {
namespace {

// A GPT-3 style layer (MHA, 2-matrix GeLU MLP, LayerNorm, biases) as in Megatron's tests.
Job GptJob(int64_t layers, int64_t hidden, int64_t heads, int64_t ffn, int tp, int pp, int dp,
           bool dist_opt) {
  ModelSpec m;
  m.name = "gpt-test";
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.ffn_hidden_size = ffn;
  m.num_attention_heads = heads;
  m.num_query_groups = heads;
  m.kv_channels = hidden / heads;
  m.vocab_size = 51200;
  m.swiglu = false;
  m.untie_embeddings_and_output_weights = false;
  m.normalization = NormType::kLayerNorm;
  m.add_bias_linear = true;
  GpuSpec gpu;
  gpu.name = "test-gpu";
  gpu.hbm_bytes = 80 * kGiB;
  return TestJob(m)
      .Cluster(gpu)
      .Parallel(tp, pp)
      .Dp(dp)
      .DistributedOptimizer(dist_opt)
      .SequenceParallel(tp > 1)
      .SequenceLength(2048)
      .MicroBatch(1)
      .GlobalBatch(64 * dp);
}

// Megatron-LM megatron/training/theoretical_memory_usage.py,
// compute_weight_and_optimizer_memory (research/projection-anchors.md §8), written out here
// independently of the sharding engine.
double MegatronWeightAndOptimizerBytes(const Job& job) {
  const ModelSpec& m = job.model;
  const double L = m.num_layers, h = m.hidden_size, n = m.num_attention_heads,
               g = m.num_query_groups, d = m.kv_channels, f = m.ffn_hidden_size;
  const double gated = m.swiglu ? 1.5 : 1.0;
  const double V = m.PaddedVocabSize(job.parallel.tp);
  const double t = job.parallel.tp, p = job.parallel.pp;
  const double transformer =
      2 * L * h * h * ((1 + g / n) * (d * n / h) + (f / h) * gated + 2 / h + 1 / (L * h));
  const double embedding = h * V;
  double most_loaded = (transformer / p + embedding) / t;
  if (m.untie_embeddings_and_output_weights && p == 1) most_loaded += embedding / t;
  const double bytes_per_param =
      job.parallel.distributed_optimizer ? 6 + 12.0 / job.parallel.dp : 18;
  return most_loaded * bytes_per_param;
}

struct MegatronCase {
  int64_t layers, hidden, heads, ffn;
  int tp, pp, dp;
  bool dist_opt, untied;
};

class MegatronWeightsTest : public ::testing::TestWithParam<MegatronCase> {};

TEST_P(MegatronWeightsTest, FirstStageMatchesTheoreticalMemoryWithinHalfPercent) {
  const MegatronCase c = GetParam();
  Job job = GptJob(c.layers, c.hidden, c.heads, c.ffn, c.tp, c.pp, c.dp, c.dist_opt);
  job.model.untie_embeddings_and_output_weights = c.untied;
  // Megatron's formula has no bias terms; compare like with like.
  job.model.add_bias_linear = false;
  const MemoryReport r = ProjectMemory(job);
  const StageMemory& s0 = r.stages.at(0);
  const double ours = double(s0.params_bytes + s0.grads_bytes + s0.optimizer_bytes);
  const double megatron = MegatronWeightAndOptimizerBytes(job);
  EXPECT_NEAR(ours / megatron, 1.0, 0.005) << "ours " << ours << " megatron " << megatron;
}

INSTANTIATE_TEST_SUITE_P(
    DenseConfigs, MegatronWeightsTest,
    ::testing::Values(MegatronCase{24, 2304, 24, 9216, 1, 1, 8, false, false},    // GPT 1.7B
                      MegatronCase{40, 5120, 40, 20480, 8, 1, 4, true, false},    // GPT 13B
                      MegatronCase{96, 12288, 96, 49152, 8, 8, 2, true, false},   // GPT-3 175B
                      MegatronCase{80, 8192, 64, 28672, 4, 4, 16, false, true},   // 70B-like
                      MegatronCase{32, 4096, 32, 16384, 2, 2, 32, true, true}));  // 7B-like

// Llama 3.1 8B under MaxText on one MI355X node, FSDP over its 8 GPUs.
Job ShardedMaxTextJob() {
  Job job = TestJob("llama3.1_8B")
                .Cluster("MI355X", 1)
                .Dp(8)
                .SequenceLength(2048)
                .MicroBatch(1)
                .GlobalBatch(8);
  job.parallel.fsdp2 = true;
  job.framework = "maxtext";
  return job;
}

// JAX preallocates XLA_PYTHON_CLIENT_MEM_FRACTION of HBM: a step must fit in that part
// (288 GiB x 0.25 = 72 GiB on an MI355X); PyTorch stacks keep the whole HBM.
TEST(MemoryReportWording, JaxStepsMustFitInThePreallocatedFraction) {
  Job job = ShardedMaxTextJob();
  const MemoryReport whole = ProjectMemory(job, {});
  EXPECT_EQ(whole.capacity_bytes, whole.hbm_bytes);
  job.training.xla_memory_fraction = 0.25;
  const MemoryReport quarter = ProjectMemory(job, {});
  EXPECT_EQ(quarter.hbm_bytes, int64_t{288} << 30);
  EXPECT_EQ(quarter.capacity_bytes, int64_t{72} << 30);
  EXPECT_EQ(quarter.peak_bytes, whole.peak_bytes);
  EXPECT_TRUE(
      std::any_of(quarter.assumptions.begin(), quarter.assumptions.end(), [](const std::string& a) {
        return a.find("XLA_PYTHON_CLIENT_MEM_FRACTION=0.25") != std::string::npos;
      }));
  job.framework = "torchtitan";
  EXPECT_EQ(ProjectMemory(job, {}).capacity_bytes, int64_t{288} << 30);
}

// Mixtral 8x7B under FSDP2 with EP 8 on one MI355X node, and the same job over two nodes
// (DP 16, so every expert shard lives on two ranks).
Job ShardedMixtralOneNode() {
  Job job = TestJob("mixtral_8x7B")
                .Cluster("MI355X", 1)
                .Dp(8)
                .Ep(8)
                .SequenceLength(2048)
                .MicroBatch(1)
                .GlobalBatch(8);
  job.parallel.fsdp2 = true;
  return job;
}
void SpreadOverTwoNodes(Job& job) {
  job.cluster.num_nodes = 2;
  job.parallel.dp = 16;
  job.training.global_batch_size = 16;
}

// Under FSDP with expert parallelism the weights row's count is of the rank's layers after EP:
// its note says the dense part shards over the FSDP group and the experts only over expert DP
// (world / EP), so "1/8" is not read as applying to the experts too.
TEST(MemoryReportWording, ShardedMoeWeightsSayHowExpertsSplit) {
  Job job = ShardedMixtralOneNode();
  EXPECT_EQ(ProjectMemory(job, {}).weights_note, " (1/8 dense, experts by EP)");
  SpreadOverTwoNodes(job);
  EXPECT_EQ(ProjectMemory(job, {}).weights_note, " (1/16 dense, experts 1/2 + EP)");
}

// FSDP gathers a layer's parameters before using it: the dense part (attention, norms, router)
// always, the routed experts only where expert data parallelism shards them. A Mixtral 8x7B
// layer (hand count): attention 4096x4096 (q, o) + 4096x1024 (k, v) = 41,943,040, two norms
// 8,192, router 4096x8 = 32,768, so 41,984,000 dense; experts 8 x 3 x 4096 x 14336 =
// 1,409,286,144, 1/8 of them per EP rank = 176,160,768. Two layers in bf16 plus one layer's
// fp32 gradient: 8 bytes per gathered parameter.
int64_t GatheredLayerBytes(const MemoryReport& report) {
  for (const NamedBytes& b : report.stages.at(0).buffers) {
    if (b.name.find("gathered layers") != std::string::npos) return b.bytes;
  }
  return -1;
}

TEST(MemoryModelFsdp, GathersTheLocalExpertsOnlyWhereExpertDataParallelismShardsThem) {
  Job job = ShardedMixtralOneNode();
  // EP 8 over the 8 data-parallel ranks: each holds its expert whole, nothing of it gathered.
  EXPECT_EQ(GatheredLayerBytes(ProjectMemory(job, {})), int64_t{41'984'000} * 8);
  // 16 ranks: every expert shard lives on 2 of them, and the gather rebuilds this rank's.
  SpreadOverTwoNodes(job);
  EXPECT_EQ(GatheredLayerBytes(ProjectMemory(job, {})), (int64_t{41'984'000} + 176'160'768) * 8);
}

// A MaxText job is described in JAX terms: optax updates bf16 parameters without a master
// copy, and XLA has no caching allocator whose reserve the report would add.
TEST(MemoryReportWording, MaxTextJobsAreDescribedAsJaxRunsThem) {
  Job job = ShardedMaxTextJob();
  job.training.precision.main_params = job.training.precision.params;
  const MemoryReport r = ProjectMemory(job, {});
  // FSDP shards everything; JAX updates the parameters in their own dtype.
  EXPECT_EQ(r.optimizer_state, "moments of the shard (no master copy beyond the weights)");
  EXPECT_EQ(r.weights_note, " (1/8: FSDP)");
  EXPECT_TRUE(std::any_of(r.assumptions.begin(), r.assumptions.end(), [](const std::string& a) {
    return a.rfind("JAX/XLA: no PyTorch caching allocator", 0) == 0;
  }));
  for (const auto& b : r.stages[0].buffers) EXPECT_NE(b.name, "FSDP2 gathered layers");
  job.framework = "torchtitan";
  job.training.precision.main_params = DType::kFP32;
  const MemoryReport titan = ProjectMemory(job, {});
  // FSDP2's fp32 shard is the master copy the optimizer updates.
  EXPECT_EQ(titan.weights_shard, "fp32 shard");
  EXPECT_EQ(titan.weights_note, " (1/8: FSDP2)");
  EXPECT_EQ(titan.grads_state, "fp32 gradient shard, reduce-scattered");
  EXPECT_EQ(titan.optimizer_state, "moments of the shard (the weights row is the master copy)");
  job.parallel.fsdp2 = false;
  EXPECT_EQ(ProjectMemory(job, {}).optimizer_state, "master weights + moments");
}

// Korthikanti et al. 2022 Table 2 / Megatron compute_activation_memory: with sequence
// parallelism and selective recompute one layer stores s·b·h·(18 + 4·f/h)/t bytes.
TEST(ActivationMemoryTest, ReproducesMegatronSelectiveRecomputeLayerExactly) {
  Job job = GptJob(24, 2048, 16, 8192, 4, 1, 1, false);
  job.training.recompute.granularity = RecomputeGranularity::kSelective;
  job.training.flash_attention = false;
  job.training.hidden_dropout = 0.1;
  job.training.attention_dropout = 0.1;
  const double s = 2048, b = 1, h = 2048, f = 8192, t = 4;
  const double expected = s * b * h * (18 + 4 * f / h) / t;
  EXPECT_EQ(LayerActivationBytes(job, 0).Total(), static_cast<int64_t>(expected));
  // f = 4h gives the paper's 34·s·b·h/t.
  EXPECT_EQ(expected, 34 * s * b * h / t);
}

// The paper's setting for its Table 2 rows: TP 2 without sequence parallelism, materialised
// attention, dropout on.
Job KorthikantiTensorParallelJob() {
  Job job = GptJob(24, 2048, 16, 8192, 2, 1, 1, false);
  job.parallel.sequence_parallel = false;
  job.training.flash_attention = false;
  job.training.hidden_dropout = 0.1;
  job.training.attention_dropout = 0.1;
  return job;
}

// Korthikanti Table 2, "tensor parallel" row without SP or recompute:
// s·b·h·(10 + 24/t + 5·a·s/(h·t)).
TEST(ActivationMemoryTest, ReproducesKorthikantiTensorParallelRow) {
  Job job = KorthikantiTensorParallelJob();
  const double s = 2048, h = 2048, a = 16, t = 2;
  const double expected = s * h * (10 + 24 / t + 5 * a * s / (h * t));
  EXPECT_EQ(LayerActivationBytes(job, 0).Total(), static_cast<int64_t>(expected));
}

// The same row for a job that trains in fp32 (Megatron with neither --bf16 nor --fp16): each
// 16-bit tensor of the paper's derivation takes 4 bytes, the 1-byte dropout masks stay. Of the
// replicated 10: 8 bytes of tensors + 2 masks -> 16 + 2; the sharded 24 -> 48; per score
// softmax 2 + mask 1 + dropout output 2 -> 4 + 1 + 4.
TEST(ActivationMemoryTest, Fp32JobsStoreFourByteActivations) {
  Job job = KorthikantiTensorParallelJob();
  job.training.precision.params = DType::kFP32;
  job.training.precision.gemm = DType::kFP32;
  const double s = 2048, h = 2048, a = 16, t = 2;
  const double expected = s * h * (18 + 48 / t + 9 * a * s / (h * t));
  EXPECT_EQ(LayerActivationBytes(job, 0).Total(), static_cast<int64_t>(expected));
  // The checkpointed layer input of full recompute: 4·s·b·h.
  EXPECT_EQ(RecomputedLayerInputBytes(job), static_cast<int64_t>(4 * s * h));
}

TEST(ActivationMemoryTest, FirstStageTotalMatchesMegatronWithSelectiveRecompute) {
  // PP 4 with 64 micro-batches: stage 0 holds 4 micro-batches of L/4 layers = L layers.
  Job job = GptJob(32, 4096, 32, 16384, 8, 4, 2, true);
  job.training.recompute.granularity = RecomputeGranularity::kSelective;
  job.training.flash_attention = false;
  job.training.hidden_dropout = 0.1;
  job.training.attention_dropout = 0.1;
  job.training.global_batch_size = 128;
  const MemoryReport r = ProjectMemory(job);
  const double s = 2048, b = 1, h = 4096, f = 16384, t = 8, p = 4, L = 32;
  const double megatron = (s * b * h * (18 + 4 * f / h) * L + 8 * s * b * p + s * b * h * p) / t;
  // Megatron divides the int64 token ids by t as well; they are replicated on every TP rank,
  // so ours is larger by 8·s·b·p·(1 - 1/t) bytes — well under 0.01%.
  EXPECT_NEAR(r.stages[0].activations_bytes / megatron, 1.0, 1e-4);
  EXPECT_EQ(r.stages[0].activations_bytes -
                static_cast<int64_t>(s * b * h * (18 + 4 * f / h) * L / t + s * b * h * p / t),
            static_cast<int64_t>(8 * s * b * p));
}

// research/primus-projection.md §8.1 #1: Primus never divides parameters by TP.
TEST(PrimusDifferencesTest, TensorParallelDividesWeights) {
  Job tp1 = GptJob(32, 4096, 32, 16384, 1, 1, 8, false);
  Job tp8 = GptJob(32, 4096, 32, 16384, 8, 1, 1, false);
  const double p1 = ProjectMemory(tp1).stages[0].params;
  const double p8 = ProjectMemory(tp8).stages[0].params;
  EXPECT_NEAR(p1 / p8, 8.0, 0.05);
}

// §8.1 #2: Primus drops CP in some paths. Activations per GPU halve with CP 2.
TEST(PrimusDifferencesTest, ContextParallelSplitsActivations) {
  Job cp1 = GptJob(32, 4096, 32, 16384, 1, 1, 8, false);
  Job cp2 = cp1;
  cp2.parallel.cp = 2;
  cp2.parallel.dp = 4;
  EXPECT_EQ(LayerActivationBytes(cp1, 0).Total(), 2 * LayerActivationBytes(cp2, 0).Total());
}

// §8.1 #5: Primus applies rank 0's in-flight count to every rank. Ours: rank r holds pp - r.
TEST(PrimusDifferencesTest, InFlightActivationsDependOnRank) {
  Job job = GptJob(32, 4096, 32, 16384, 1, 4, 2, false);
  const MemoryReport r = ProjectMemory(job);
  EXPECT_EQ(r.stages[0].in_flight_micro_batches, 4);
  EXPECT_EQ(r.stages[3].in_flight_micro_batches, 1);
  EXPECT_GT(r.stages[0].activations_bytes, 3 * r.stages[3].activations_bytes / 2);
}

// §8.1 #6: Primus uses a constant 100352 vocabulary and counts an LM head even when tied.
TEST(PrimusDifferencesTest, RealPaddedVocabularyAndTiedHead) {
  Job job = GptJob(4, 1024, 16, 4096, 2, 1, 1, false);
  job.model.vocab_size = 50257;
  EXPECT_EQ(job.model.PaddedVocabSize(2), 50432);  // next multiple of 128·2
  const int64_t tied = ProjectMemory(job).stages[0].params;
  job.model.untie_embeddings_and_output_weights = true;
  const int64_t untied = ProjectMemory(job).stages[0].params;
  EXPECT_EQ(untied - tied, 50432 * 1024 / 2);  // the LM head shard appears only when untied
}

// §8.1 #7: Primus uses 4 + 10/DP bytes per parameter; Megatron's recipe is 18 or 6 + 12/DP.
TEST(PrimusDifferencesTest, BytesPerParameterFollowMegatron) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 8, false);
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 18.0);
  job.parallel.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 6.0 + 12.0 / 8);
  job.parallel.distributed_optimizer = false;
  job.parallel.fsdp2 = true;  // fp32 shards of weights, grads, two moments
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 16.0 / 8);
  // HSDP with 4 replicas: each shard group of 8 / 4 = 2 GPUs holds a full copy.
  job.parallel.fsdp_replicas = 4;
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 16.0 / 2);
  EXPECT_EQ(ProjectMemory(job).weights_note, " (1/2: HSDP, 4 replicas)");
}

// FSDP2 reduce-scatters after every backward: plain gradient accumulation (PP 1) keeps only
// shards, whatever the micro-batch count; PyTorch's pipeline stages turn the sync off until
// the last micro-batch (torch/distributed/pipelining/stage.py), so with PP the unsharded
// gradients and gathered parameters stay: stage 0 of PP 2 holds 2 of 4 layers.
TEST(PrimusDifferencesTest, Fsdp2KeepsUnshardedStateOnlyUnderPipelining) {
  auto unsharded = [](const MemoryReport& r) -> const NamedBytes* {
    for (const NamedBytes& b : r.stages[0].buffers) {
      if (b.name.starts_with("FSDP2 unsharded")) return &b;
    }
    return nullptr;
  };
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 8, false);
  job.parallel.fsdp2 = true;
  ASSERT_GT(job.training.NumMicroBatches(8), 1);
  EXPECT_EQ(unsharded(ProjectMemory(job)), nullptr);
  Job pipelined = GptJob(4, 1024, 16, 4096, 1, 2, 8, false);
  pipelined.parallel.fsdp2 = true;
  const MemoryReport r = ProjectMemory(pipelined);
  const NamedBytes* kept = unsharded(r);
  ASSERT_NE(kept, nullptr);
  // fp32 gradients (4 B) + bf16 parameters (2 B) of the rank's parameters.
  EXPECT_EQ(kept->bytes, r.stages[0].params * 6);
}

// Megatron docs (distrib_optimizer.md): "fp16 param, fp16 grads" needs 20 bytes per parameter,
// 4 + 16/d with the distributed optimizer (the step's FP32 gradient copy is sharded too).
TEST(PrimusDifferencesTest, Fp16GradientsAddAnFp32CopyForTheStep) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 8, false);
  job.training.precision.params = DType::kFP16;
  job.training.precision.main_grads = DType::kFP16;
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 20.0);
  job.parallel.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 4.0 + 16.0 / 8);
  job.training.precision.precision_aware_optimizer = true;  // reads fp16 grads directly
  EXPECT_DOUBLE_EQ(BytesPerDenseParam(job), 4.0 + 12.0 / 8);
}

// §8.1 #8: Primus sizes shared-expert activations with the routed-expert width.
TEST(PrimusDifferencesTest, SharedExpertUsesItsOwnWidth) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 8, false);
  job.model.swiglu = true;
  job.model.moe.num_experts = 8;
  job.model.moe.router_topk = 2;
  job.model.moe.ffn_hidden_size = 512;
  job.model.moe.shared_expert_ffn_hidden_size = 0;
  const int64_t without = LayerActivationBytes(job, 0).mlp;
  job.model.moe.shared_expert_ffn_hidden_size = 2048;
  const int64_t with = LayerActivationBytes(job, 0).mlp;
  // Shared expert: up-projection output 2·2·Fsh + activation output 2·Fsh bytes per token.
  EXPECT_EQ(with - without, 2048 * (2 * 2 * 2048 + 2 * 2048));
}

TEST(MemoryModelTest, VerdictAgainstCapacity) {
  Job job = GptJob(96, 12288, 96, 49152, 1, 1, 1, false);  // 175B on one GPU
  EXPECT_EQ(ProjectMemory(job).verdict, Verdict::kOom);
  Job small = GptJob(4, 1024, 16, 4096, 1, 1, 1, false);
  EXPECT_EQ(ProjectMemory(small).verdict, Verdict::kFits);
}

// While the loss runs, Megatron's unfused cross-entropy holds bf16 logits, their gradient and
// the fp32 gradient of the upcast copy (8 bytes per logit); XLA (MaxText) only the fp32
// gradient (4 bytes).
TEST(MemoryModelTest, LossTransientPerFramework) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 1, false);
  auto transient = [](const Job& j) {
    const MemoryReport report = ProjectMemory(j);
    for (const auto& part : report.stages.back().activation_parts) {
      if (part.name == "loss transient") return part.bytes;
    }
    return int64_t{-1};
  };
  const double logits = static_cast<double>(job.model.PaddedVocabSize(1)) *
                        job.training.micro_batch_size * job.training.seq_length;
  EXPECT_EQ(transient(job), std::llround(8 * logits));
  job.framework = "maxtext";
  EXPECT_EQ(transient(job), std::llround(4 * logits));
}

// Megatron's native fused loss upcasts the logits and keeps the fp32 softmax; while it runs the
// bf16 logits exist too (6 bytes per logit at the peak: 2 stored + 4 transient in the model).
// Transformer Engine's Triton kernel keeps the bf16 logits, overwrites them with their gradient
// in backward and adds an fp32 max / sum / target logit per token
// (transformer_engine/pytorch/triton/cross_entropy.py): 2 bytes per logit + 12 per token.
TEST(MemoryModelTest, TransformerEngineCrossEntropyWorksInPlace) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 1, false);
  job.training.cross_entropy_loss_fusion = true;
  auto part = [](const Job& j, const std::string& name) {
    const MemoryReport report = ProjectMemory(j);  // outlives the loop over its parts
    for (const auto& p : report.stages.back().activation_parts) {
      if (p.name == name) return p.bytes;
    }
    return int64_t{-1};
  };
  const double tokens = 1.0 * job.training.micro_batch_size * job.training.seq_length;
  const double logits = tokens * job.model.PaddedVocabSize(1);
  const double norm_and_head_inputs = 4.0 * 1024 * tokens;  // 2 B each of h per token
  EXPECT_EQ(part(job, "loss transient"), std::llround(4 * logits));
  EXPECT_EQ(part(job, "LM head + loss"), std::llround(norm_and_head_inputs + 2 * logits));
  job.training.cross_entropy_impl = CrossEntropyImpl::kTransformerEngine;
  EXPECT_EQ(part(job, "loss transient"), -1);
  EXPECT_EQ(part(job, "LM head + loss"),
            std::llround(norm_and_head_inputs + 2 * logits + 12 * tokens));
  // Without the fusion flag Megatron runs its unfused loss whatever the impl says.
  job.training.cross_entropy_loss_fusion = false;
  EXPECT_EQ(part(job, "loss transient"), std::llround(8 * logits));
}

// A compiled model does not make a compiled loss: torch.compile of the model alone
// (torchtitan's compile.components = ["model"]) leaves the loss eager, with its fp32 softmax
// (4 bytes per logit stored); XLA compiles the whole step, loss included, and keeps the bf16
// logits (2 bytes), recomputing the softmax in backward.
TEST(MemoryModelTest, OnlyACompiledLossKeepsBf16Logits) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 1, false);
  job.training.compiled_graph = true;
  auto head = [](const Job& j) {
    const MemoryReport report = ProjectMemory(j);
    for (const auto& p : report.stages.back().activation_parts) {
      if (p.name == "LM head + loss") return p.bytes;
    }
    return int64_t{-1};
  };
  const double tokens = 1.0 * job.training.micro_batch_size * job.training.seq_length;
  const double logits = tokens * job.model.PaddedVocabSize(1);
  const double norm_and_head_inputs = 4.0 * 1024 * tokens;  // 2 B each of h per token
  EXPECT_EQ(head(job), std::llround(norm_and_head_inputs + 4 * logits));
  job.training.compiled_loss = true;
  EXPECT_EQ(head(job), std::llround(norm_and_head_inputs + 2 * logits));
}

TEST(MemoryModelTest, FullRecomputeKeepsOnlyLayerInputs) {
  Job job = GptJob(8, 1024, 16, 4096, 1, 1, 1, false);
  job.training.recompute.granularity = RecomputeGranularity::kFull;
  job.training.recompute.method = RecomputeMethod::kUniform;
  job.training.recompute.num_layers = 1;
  const MemoryReport r = ProjectMemory(job);
  // 8 layers x 2·s·b·h input + one layer's full activations re-materialised.
  const int64_t input = 2 * 2048 * 1024;
  const auto& parts = r.stages[0].activation_parts;
  EXPECT_EQ(parts[0].bytes, 8 * input);
  EXPECT_EQ(parts.back().name, "recompute working set");
  EXPECT_EQ(parts.back().bytes, LayerActivationBytes(job, 0).Total());
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

TEST(MemoryModelTest, BlockRecomputeRematerialisesOneLayerAtATime) {
  Job job = GptJob(8, 1024, 16, 4096, 1, 1, 1, false);
  job.training.recompute.granularity = RecomputeGranularity::kFull;
  job.training.recompute.method = RecomputeMethod::kBlock;
  job.training.recompute.num_layers = 8;
  const MemoryReport report = ProjectMemory(job);
  const auto& parts = report.stages[0].activation_parts;
  EXPECT_EQ(parts[0].bytes, 8 * 2 * 2048 * 1024);  // every layer keeps its own input
  EXPECT_EQ(parts.back().bytes, LayerActivationBytes(job, 0).Total());
}

TEST(MemoryModelTest, UniformGroupsKeepOneInputPerGroup) {
  Job job = GptJob(8, 1024, 16, 4096, 1, 1, 1, false);
  job.training.recompute.granularity = RecomputeGranularity::kFull;
  job.training.recompute.method = RecomputeMethod::kUniform;
  job.training.recompute.num_layers = 4;
  const MemoryReport report = ProjectMemory(job);
  const auto& parts = report.stages[0].activation_parts;
  EXPECT_EQ(parts[0].bytes, 2 * 2 * 2048 * 1024);  // two groups of four layers
  EXPECT_EQ(parts.back().bytes, 4 * LayerActivationBytes(job, 0).Total());
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// torchtitan's per-op selective policy on a Llama-3-8B layer (h 4096, 32 heads of 128, 8 KV
// groups, SwiGLU 14336), per token: layer input 2·4096 + half the matmul outputs
// (q 4096 + k 1024 + v 1024 + o 4096 + w1 14336 + w3 14336 + w2 4096 = 43008 elements, 2 B
// each, halved) + attention output 2·4096 + log-sum-exp 4·32 = 59520 bytes.
TEST(ActivationMemoryTest, TorchtitanPerOpPolicy) {
  Job job = GptJob(32, 4096, 32, 14336, 1, 1, 8, false);
  job.model.num_query_groups = 8;
  job.model.swiglu = true;
  job.training.recompute.granularity = RecomputeGranularity::kSelective;
  job.training.recompute.per_op_policy = true;
  EXPECT_EQ(LayerActivationBytes(job, 0).Total(), 59520 * 2048);
}

// Megatron's TE layers keep each weight's FP8 cast and its transpose between micro-batches:
// 2 bytes per transformer weight (MXFP8 adds one scale byte per 32 values to each copy; FP8
// primary weights keep only the transpose). Hand count for the 4-layer GPT at TP 1: the
// transformer weights are everything but the tied embedding (51200 x 1024) and the
// position embedding, which ParamsOnRank counts as embedding.
TEST(MemoryModelTest, TransformerEngineKeepsLowPrecisionWeightCopies) {
  Job job = GptJob(4, 1024, 16, 4096, 1, 1, 8, true);
  job.framework = "primus-megatron";
  auto copies = [](const Job& j) {
    const MemoryReport report = ProjectMemory(j);
    for (const auto& b : report.stages.front().buffers) {
      if (b.name.find("weight copies") != std::string::npos) return b.bytes;
    }
    return int64_t{-1};
  };
  EXPECT_EQ(copies(job), -1);  // bf16 GEMMs: nothing cast
  const RankParams p = ParamsOnRank(job.model, job.parallel, 0);
  const double weights = static_cast<double>(p.dense - p.embedding);
  // 4 layers x (4 x 1024^2 attention + 2 x 1024 x 4096 MLP + biases and norms).
  EXPECT_NEAR(weights, 4 * (4.0 * 1024 * 1024 + 2.0 * 1024 * 4096), 4 * 20000);
  job.training.precision.gemm = DType::kFP8;
  EXPECT_EQ(copies(job), std::llround(2 * weights));
  job.training.precision.gemm = DType::kMXFP8;
  EXPECT_EQ(copies(job), std::llround(2 * (1 + 1.0 / 32) * weights));
  job.training.precision.gemm = DType::kFP8;
  // Primus's no_fp8_weight_transpose_cache (keep_fp8_weight_transpose_cache=False): the cast
  // is kept, its transpose is made again in backward; with fp8 primary weights nothing is.
  job.training.precision.fp8_weight_transpose_cache = false;
  EXPECT_EQ(copies(job), std::llround(weights));
  job.training.precision.fp8_param_gather = true;
  EXPECT_EQ(copies(job), -1);
  job.training.precision.fp8_weight_transpose_cache = true;
  EXPECT_EQ(copies(job), std::llround(weights));
  // Under FSDP the gathered weights are released after each layer: no cache is counted.
  job.parallel.fsdp2 = true;
  EXPECT_EQ(copies(job), -1);
  job.parallel.fsdp2 = false;
  // torchao's float8 (torchtitan) casts per use and keeps nothing between micro-batches.
  job.framework = "torchtitan";
  EXPECT_EQ(copies(job), -1);
}

// One GPU opens no NCCL/RCCL communicator: no buffer row for it.
TEST(MemoryModelTest, OneGpuHasNoCommunicatorBuffer) {
  const Job one = GptJob(4, 1024, 16, 4096, 1, 1, 1, false);
  const Job eight = GptJob(4, 1024, 16, 4096, 1, 1, 8, false);
  auto communicators = [](const Job& j) {
    const MemoryReport report = ProjectMemory(j);
    for (const auto& b : report.stages.front().buffers) {
      if (b.name == "NCCL/RCCL communicators") return b.bytes;
    }
    return int64_t{-1};
  };
  EXPECT_EQ(communicators(one), -1);
  EXPECT_EQ(communicators(eight), (96 + 2 * 8) * kMiB);
}

}  // namespace
}  // namespace sextant
