#include "cost/layer_cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hardware/hardware_library.h"
#include "job/test_job.h"
#include "model/model_library.h"
#include "util/error.h"

namespace sextant {
namespace {

// 100 CUs, 100 TFLOP/s bf16, 1 TB/s, 64 MiB L2, 8 GPUs per node.
GpuSpec RoundGpu() {
  GpuSpec g;
  g.name = "round";
  g.vendor = Vendor::kAMD;
  g.compute_units = 100;
  g.hbm_bandwidth = 1e12;
  g.l2_bytes = 64 * (int64_t{1} << 20);
  g.peak_dense_tflops = {{DType::kBF16, 100.0}, {DType::kFP8, 200.0}};
  g.intra_node_bandwidth = 400e9;
  g.intra_node_latency = 2e-6;
  g.nic_bandwidth = 50e9;
  g.inter_node_latency = 5e-6;
  return g;
}

// Llama 3.1 8B (Meta model card): 32 layers, hidden 4096, FFN 14336, 32 heads, 8 KV heads,
// head dim 128, vocabulary 128256, SwiGLU, RMSNorm, RoPE.
Job Llama8B(int tp = 1, bool sp = false, int cp = 1) {
  ModelSpec m;
  m.name = "llama3.1_8B";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.ffn_hidden_size = 14336;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.kv_channels = 128;
  m.vocab_size = 128256;
  return TestJob(m)
      .Cluster(RoundGpu())
      .Parallel(tp)
      .Cp(cp)
      .SequenceParallel(sp)
      .Dp(8 / (tp * cp))
      .SequenceLength(4096)
      .MicroBatch(1);
}

LayerCostModel Ideal(const Job& job) {
  return LayerCostModel(job, EfficiencyTable::Ideal(), nullptr);
}

// Hand count for one Llama 3.1 8B layer, s = 4096, b = 1, TP 1 (FLOPs = 2·M·N·K):
//   QKV 2·4096·4096·6144 = 206,158,430,208     O   2·4096·4096·4096  = 137,438,953,472
//   fc1 2·4096·4096·28672 = 962,072,674,304    fc2 2·4096·14336·4096 = 481,036,337,152
//   attention 2·(128+128)·(4096·4097/2)·32 heads = 137,472,507,904 (causal pairs only)
constexpr double kGemmForward = 206158430208.0 + 137438953472.0 + 962072674304.0 + 481036337152.0;
constexpr double kAttentionForward = 137472507904.0;

TEST(LayerCostTest, DenseLayerFlopsMatchTheHandCount) {
  const LayerCost c = Ideal(Llama8B()).TransformerLayer(0);
  EXPECT_EQ(c.kind, "dense");
  EXPECT_DOUBLE_EQ(c.flops_forward, kGemmForward + kAttentionForward);
  // Backward: dgrad + wgrad = 2x the GEMMs; attention backward 2.5x (FlashAttention-2).
  EXPECT_DOUBLE_EQ(c.flops_backward, 2 * kGemmForward + 2.5 * kAttentionForward);
}

// LoRA rank 32 on the four default modules of one Llama 3.1 8B layer (TP 1, s = 4096): the
// adapters' forward FLOPs are 2·4096·32·(in + out) summed over QKV (4096 + 6144), O
// (4096 + 4096), fc1 (4096 + 28672) and fc2 (14336 + 4096) = 2·4096·32·69,632; the frozen
// base weights drop their weight-gradient GEMMs (one kGemmForward), and each adapter's
// backward is twice its forward (input and weight gradients of A and B).
TEST(LayerCostTest, LoraFreezesBaseWeightsAndAddsTheAdapters) {
  Job job = Llama8B();
  job.training.lora.enabled = true;
  const LayerCost c = Ideal(job).TransformerLayer(0);
  const double adapters = 2.0 * 4096 * 32 * 69632;
  EXPECT_DOUBLE_EQ(c.flops_forward, kGemmForward + kAttentionForward + adapters);
  EXPECT_DOUBLE_EQ(c.flops_backward, kGemmForward + 2.5 * kAttentionForward + 2 * adapters);
  EXPECT_EQ(c.lora_params, 32 * 69632);
  // The weight-gradient pass keeps only the adapters' two rank-32 GEMMs per module: each
  // streams one 4096 x width activation at HBM speed, far less than the base GEMMs it replaces.
  const LayerCost full = Ideal(Llama8B()).TransformerLayer(0);
  EXPECT_LT(c.backward_weight.gemm, 0.1 * full.backward_weight.gemm);
  EXPECT_DOUBLE_EQ(c.backward_input.gemm - full.backward_input.gemm,
                   c.forward.gemm - full.forward.gemm);
  // Narrowing the targets to linear_fc2 keeps one adapter: 32·(14336 + 4096) parameters.
  job.training.lora.target_modules = {"linear_fc2"};
  EXPECT_EQ(Ideal(job).TransformerLayer(0).lora_params, 32 * (14336 + 4096));
}

// Beside tensor-parallel layers the adapters exchange whole activations (Megatron-Bridge's
// ParallelLinearAdapter): at TP 2 without SP, the adapters on the column-parallel QKV and fc1
// all-reduce their input gradient in backward and those on the row-parallel O and fc2 gather
// their output in forward, each 4096 tokens x 4096 x 2 bytes; with SP the column-parallel ones
// gather the sequence (reduce-scatter in backward) and the row-parallel ones gather again in
// backward.
TEST(LayerCostTest, LoraAdaptersExchangeActivationsUnderTensorParallelism) {
  auto lora_comms = [](const LayerCost& c) {
    std::vector<std::string> out;
    for (const CommCall& call : c.comms) {
      if (call.what.rfind("LoRA", 0) != 0) continue;
      EXPECT_EQ(call.bytes, 4096LL * 4096 * 2) << call.what;
      out.push_back(call.what + (call.pass == Pass::kForward ? " (forward)" : " (backward)"));
    }
    return out;
  };
  Job job = Llama8B(2);
  job.training.lora.enabled = true;
  EXPECT_EQ(lora_comms(Ideal(job).TransformerLayer(0)),
            (std::vector<std::string>{"LoRA linear_qkv input-gradient all-reduce (backward)",
                                      "LoRA linear_proj output all-gather (forward)",
                                      "LoRA linear_fc1 input-gradient all-reduce (backward)",
                                      "LoRA linear_fc2 output all-gather (forward)"}));
  job.parallel.sequence_parallel = true;
  EXPECT_EQ(lora_comms(Ideal(job).TransformerLayer(0)),
            (std::vector<std::string>{"LoRA linear_qkv input all-gather (forward)",
                                      "LoRA linear_qkv input all-gather (backward)",
                                      "LoRA linear_proj output all-gather (forward)",
                                      "LoRA linear_proj output all-gather (backward)",
                                      "LoRA linear_fc1 input all-gather (forward)",
                                      "LoRA linear_fc1 input all-gather (backward)",
                                      "LoRA linear_fc2 output all-gather (forward)",
                                      "LoRA linear_fc2 output all-gather (backward)"}));
}

// Gemma 4 31B's global layer (index 5), s = 4096, b = 1: QKV 2·4096·5376·(32·512 + 4·512)
// with one shared K/V projection; O 2·4096·16384·5376; gated MLP 3·2·4096·5376·21504;
// attention 2·(512+512)·(4096·4097/2)·32 over the full causal triangle. A local layer (index
// 0) has 256-wide heads, K and V for 16 heads, and sees at most the 1024-token window.
TEST(LayerCostTest, Gemma4GlobalLayerUsesItsOwnGeometry) {
  Job job = Llama8B();
  job.model = FindModel("gemma4_31B")->spec;
  job.parallel.dp = 8;
  const LayerCostModel model = Ideal(job);
  const double mlp = 3 * 2.0 * 4096 * 5376 * 21504;
  const double global = 2.0 * 4096 * 5376 * (32 * 512 + 4 * 512) + 2.0 * 4096 * 16384 * 5376 + mlp +
                        2.0 * 1024 * (4096.0 * 4097 / 2) * 32;
  EXPECT_DOUBLE_EQ(model.TransformerLayer(5).flops_forward, global);
  const double local_pairs = AttentionPairs(4096, true, 1024);
  const double local = 2.0 * 4096 * 5376 * (32 * 256 + 2 * 16 * 256) + 2.0 * 4096 * 8192 * 5376 +
                       mlp + 2.0 * 512 * local_pairs * 32;
  EXPECT_DOUBLE_EQ(model.TransformerLayer(0).flops_forward, local);
}

TEST(LayerCostTest, TensorAndContextParallelismSplitTheWork) {
  // TP 2 splits heads and FFN columns; CP 2 splits tokens and (load-balanced) causal pairs.
  EXPECT_DOUBLE_EQ(Ideal(Llama8B(2)).TransformerLayer(0).flops_forward,
                   (kGemmForward + kAttentionForward) / 2);
  EXPECT_DOUBLE_EQ(Ideal(Llama8B(1, false, 2)).TransformerLayer(0).flops_forward,
                   (kGemmForward + kAttentionForward) / 2);
}

TEST(LayerCostTest, ColumnParallelSplitsNAndRowParallelSplitsK) {
  // TP 2: QKV (4096, 3072, 4096), O (4096, 4096, 2048), fc1 (4096, 14336, 4096),
  // fc2 (4096, 4096, 7168). Weight gradients are (in, out, tokens).
  const Job job = Llama8B(2, true);
  const LayerCostModel model = Ideal(job);
  const GemmModel& g = model.gemm();
  const LayerCost c = model.TransformerLayer(0);
  const DType bf = DType::kBF16;
  EXPECT_DOUBLE_EQ(c.forward.gemm, g.Time({4096, 3072, 4096}, bf) + g.Time({4096, 4096, 2048}, bf) +
                                       g.Time({4096, 14336, 4096}, bf) +
                                       g.Time({4096, 4096, 7168}, bf));
  EXPECT_DOUBLE_EQ(c.backward_input.gemm,
                   g.Time({4096, 4096, 3072}, bf) + g.Time({4096, 2048, 4096}, bf) +
                       g.Time({4096, 4096, 14336}, bf) + g.Time({4096, 7168, 4096}, bf));
  EXPECT_DOUBLE_EQ(c.backward_weight.gemm,
                   g.Time({4096, 3072, 4096}, bf) + g.Time({2048, 4096, 4096}, bf) +
                       g.Time({4096, 14336, 4096}, bf) + g.Time({7168, 4096, 4096}, bf));
  // Flash attention on 16 query heads and 4 KV heads.
  AttentionShape s;
  s.q_heads = 16;
  s.kv_heads = 4;
  s.seq = 4096;
  s.head_dim_qk = s.head_dim_v = 128;
  EXPECT_DOUBLE_EQ(c.forward.attention, model.attention().Forward(s, bf).seconds);
  EXPECT_DOUBLE_EQ(c.backward_input.attention, model.attention().Backward(s, bf).seconds);
}

TEST(LayerCostTest, MemoryBoundKernelsOfADenseLayer) {
  // TP 2 with SP: norms and residual adds on 2048 tokens, rotary on 16 + 4 heads of all 4096
  // tokens, SwiGLU on 4096 x 7168.
  const LayerCostModel model = Ideal(Llama8B(2, true));
  const MemoryBoundModel& mb = model.memory_bound();
  const double expected = 2 * mb.Time(NormBytes(2048, 4096, 2).forward) +
                          mb.Time(RotaryBytes(4096, 2048, 512, 2).forward) +
                          mb.Time(SwiGluBytes(4096, 7168, 2).forward) +
                          2 * mb.Time(ResidualAddBytes(2048, 4096, 2).forward);
  EXPECT_DOUBLE_EQ(model.TransformerLayer(0).forward.memory_bound, expected);
}

TEST(LayerCostTest, EagerPyTorchRunsNormsRotaryAndSwiGluOpByOp) {
  // TP 1, 4096 tokens: the same kernels as above in their eager form, plus the repeat_kv
  // copies of K and V from 8 to 32 heads.
  Job job = Llama8B();
  job.training.fused_elementwise = false;
  const LayerCostModel model = Ideal(job);
  const MemoryBoundModel& mb = model.memory_bound();
  const double expected = 2 * mb.Time(EagerRmsNormBytes(4096, 4096, 2).forward) +
                          mb.Time(EagerRotaryBytes(4096, 4096, 1024, 2).forward) +
                          mb.Time(RepeatKvBytes(4096, 1024, 4096, 2).forward) +
                          mb.Time(EagerSwiGluBytes(4096, 14336, 2).forward) +
                          2 * mb.Time(ResidualAddBytes(4096, 4096, 2).forward);
  EXPECT_DOUBLE_EQ(model.TransformerLayer(0).forward.memory_bound, expected);
  // Same GEMMs and attention as the fused job: only memory-bound work grows.
  const LayerCost fused = Ideal(Llama8B()).TransformerLayer(0);
  EXPECT_DOUBLE_EQ(model.TransformerLayer(0).forward.gemm, fused.forward.gemm);
  // Norms 9x, rotary 5x, SwiGLU 1.7x their fused bytes: about 3x in all for this layer.
  EXPECT_GT(model.TransformerLayer(0).forward.memory_bound, 3 * fused.forward.memory_bound);
}

TEST(LayerCostTest, SequenceParallelIssuesGatherAndScatterInsteadOfAllReduce) {
  // Each TP collective moves the layer's hidden states: 4096 tokens x 4096 x 2 B = 32 MiB.
  const LayerCost sp = Ideal(Llama8B(2, true)).TransformerLayer(0);
  std::vector<std::pair<Collective, Pass>> got;
  for (const CommCall& call : sp.comms) {
    EXPECT_EQ(call.bytes, 33554432);
    EXPECT_EQ(call.dim, ParallelDim::kTP);
    got.push_back({call.op, call.pass});
  }
  using C = Collective;
  using P = Pass;
  EXPECT_THAT(got, testing::UnorderedElementsAre(std::pair{C::kAllGather, P::kForward},
                                                 std::pair{C::kAllGather, P::kForward},
                                                 std::pair{C::kReduceScatter, P::kForward},
                                                 std::pair{C::kReduceScatter, P::kForward},
                                                 std::pair{C::kReduceScatter, P::kBackwardInput},
                                                 std::pair{C::kReduceScatter, P::kBackwardInput},
                                                 std::pair{C::kAllGather, P::kBackwardInput},
                                                 std::pair{C::kAllGather, P::kBackwardInput}));
  // Without SP: one all-reduce after each block forward, one per block input gradient.
  const LayerCost ar = Ideal(Llama8B(2, false)).TransformerLayer(0);
  ASSERT_EQ(ar.comms.size(), 4u);
  int forward = 0;
  for (const CommCall& call : ar.comms) {
    EXPECT_EQ(call.op, C::kAllReduce);
    forward += call.pass == P::kForward;
  }
  EXPECT_EQ(forward, 2);
  // TP 1: nothing to communicate.
  EXPECT_TRUE(Ideal(Llama8B()).TransformerLayer(0).comms.empty());
}

TEST(LayerCostTest, ContextParallelRingSendsTheLocalKvChunk) {
  // CP 2: each step sends 2048 tokens x 8 KV heads x (128 + 128) x 2 B = 8 MiB, once forward
  // (cp - 1 = 1 step) and with the K/V gradients (16 MiB) backward.
  const LayerCost c = Ideal(Llama8B(1, false, 2)).TransformerLayer(0);
  ASSERT_EQ(c.comms.size(), 2u);
  EXPECT_EQ(c.comms[0].op, Collective::kSendRecv);
  EXPECT_EQ(c.comms[0].dim, ParallelDim::kCP);
  EXPECT_EQ(c.comms[0].bytes, 8388608);
  EXPECT_EQ(c.comms[0].count, 1);
  EXPECT_EQ(c.comms[1].bytes, 16777216);
}

TEST(LayerCostTest, WeightGradientPassHoldsOnlyWeightGradientGemms) {
  const LayerCost c = Ideal(Llama8B(2, true)).TransformerLayer(0);
  EXPECT_GT(c.backward_weight.gemm, 0);
  EXPECT_DOUBLE_EQ(c.backward_weight.attention, 0);
  EXPECT_DOUBLE_EQ(c.backward_weight.memory_bound, 0);
  EXPECT_DOUBLE_EQ(c.backward_weight.Communication(), 0);
  EXPECT_DOUBLE_EQ(c.Backward(), c.BackwardInput() + c.BackwardWeight());
}

TEST(LayerCostTest, RecomputeFollowsTheGranularity) {
  Job job = Llama8B(2, true);
  EXPECT_DOUBLE_EQ(Ideal(job).TransformerLayer(0).Recompute(), 0);
  job.training.recompute.granularity = RecomputeGranularity::kFull;
  const LayerCost full = Ideal(job).TransformerLayer(0);
  EXPECT_DOUBLE_EQ(full.Recompute(), full.Forward());
  // Selective defaults to the core attention: exactly the flash-attention forward.
  job.training.recompute.granularity = RecomputeGranularity::kSelective;
  const LayerCost selective = Ideal(job).TransformerLayer(0);
  EXPECT_DOUBLE_EQ(selective.Recompute(), selective.forward.attention);
  // "mlp": fc1, SwiGLU, fc2 and the MLP's gather / scatter.
  job.training.recompute.modules = {"mlp"};
  const LayerCostModel model = Ideal(job);
  const LayerCost mlp = model.TransformerLayer(0);
  const GemmModel& g = model.gemm();
  EXPECT_DOUBLE_EQ(mlp.recompute.gemm, g.Time({4096, 14336, 4096}, DType::kBF16) +
                                           g.Time({4096, 4096, 7168}, DType::kBF16));
  EXPECT_DOUBLE_EQ(mlp.recompute.memory_bound,
                   model.memory_bound().Time(SwiGluBytes(4096, 7168, 2).forward));
  EXPECT_DOUBLE_EQ(mlp.recompute.attention, 0);
  // What it re-runs, in FLOPs (the hardware count): fc1 and fc2 at TP 2, half the hand count.
  EXPECT_DOUBLE_EQ(mlp.flops_recompute, (962072674304.0 + 481036337152.0) / 2);
  EXPECT_DOUBLE_EQ(selective.flops_recompute, kAttentionForward / 2);
  EXPECT_DOUBLE_EQ(full.flops_recompute, full.flops_forward);
  job.training.recompute.modules = {"attention_everything"};
  try {
    Ideal(job);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("recompute_modules"));
  }
}

// MaxText's named-projection policies (layers/decoders.py): "minimal" re-runs the attention
// (its context is not saved), "minimal_with_context" re-runs nothing of the layer's GEMMs,
// "save_dot_with_context_except_mlp" re-runs the MLP.
TEST(LayerCostTest, MaxTextRematPoliciesRecomputeWhatTheyDoNotSave) {
  Job job = Llama8B();
  job.training.recompute.granularity = RecomputeGranularity::kSelective;
  job.training.recompute.matmul_outputs_only = true;
  const LayerCost minimal = Ideal(job).TransformerLayer(0);
  EXPECT_DOUBLE_EQ(minimal.Recompute(), minimal.forward.attention);
  job.training.recompute.save_attention_context = true;
  EXPECT_DOUBLE_EQ(Ideal(job).TransformerLayer(0).Recompute(), 0);
  job.training.recompute.save_mlp_outputs = false;
  const LayerCostModel model = Ideal(job);
  const LayerCost except_mlp = model.TransformerLayer(0);
  const GemmModel& g = model.gemm();
  EXPECT_DOUBLE_EQ(except_mlp.recompute.gemm, g.Time({4096, 28672, 4096}, DType::kBF16) +
                                                  g.Time({4096, 4096, 14336}, DType::kBF16));
  EXPECT_DOUBLE_EQ(except_mlp.recompute.attention, 0);
}

TEST(LayerCostTest, IsLayerRecomputedFollowsMegatronMethods) {
  RecomputeSpec none;
  EXPECT_FALSE(IsLayerRecomputed(none, 3, 0));
  RecomputeSpec block;
  block.granularity = RecomputeGranularity::kFull;
  block.method = RecomputeMethod::kBlock;
  block.num_layers = 2;
  EXPECT_TRUE(IsLayerRecomputed(block, 10, 1));
  EXPECT_FALSE(IsLayerRecomputed(block, 11, 2));
  RecomputeSpec uniform = block;
  uniform.method = RecomputeMethod::kUniform;
  EXPECT_TRUE(IsLayerRecomputed(uniform, 11, 2));
  RecomputeSpec ids = block;
  ids.layer_ids = {0, 5};
  EXPECT_TRUE(IsLayerRecomputed(ids, 5, 3));
  EXPECT_FALSE(IsLayerRecomputed(ids, 1, 0));
}

// A small DeepSeek-style MoE: hidden 1024, 8 experts of FFN 512, top-2, EP 2 (4 local experts).
Job SmallMoe() {
  Job j = Llama8B();
  j.model.hidden_size = 1024;
  j.model.num_attention_heads = 8;
  j.model.num_query_groups = 8;
  j.model.kv_channels = 128;
  j.model.ffn_hidden_size = 4096;
  j.model.moe.num_experts = 8;
  j.model.moe.router_topk = 2;
  j.model.moe.ffn_hidden_size = 512;
  j.parallel.ep = 2;
  j.training.seq_length = 1024;
  return j;
}

// The PyTorch permutation paths against the fused kernels. SmallMoe: 1024 tokens, top-2,
// hidden 1024, bf16, four local experts (sorted); copies R = 2048 rows of 2048 B = 4,194,304 B,
// token rows 2,097,152 B; the fused path moves 14,680,064 B each way for permute and again for
// unpermute. RoundGpu has 1 TB/s and is not a Hopper part: the H200's atomic rates scaled by
// 1 / 4.8, 55.833 G scatter_add_ and 25.521 G index_add_ per second.
//   Megatron (index_select, scatter_add_): forward unpermute rows + 2R (sort) = 10,485,760 B,
//     -4,194,304 B, plus 2,097,152 scatter_add_ adds; backward permute rows + 2R = 10,485,760 B
//     and unpermute rows + R + 2R = 14,680,064 B, -4,194,304 B in all, plus 2,097,152
//     index_add_ adds.
//   torchtitan (gather, probabilities multiply, scatter_add_): the multiply adds 2R forward and
//     4R backward, and the gather's gradient is a scatter_add_.
TEST(LayerCostTest, UnfusedPermutationAddsItsBytesAndAtomicAdds) {
  const Job fused_job = SmallMoe();
  Job megatron_job = SmallMoe();
  megatron_job.training.moe_permutation = MoePermutation::kIndexSelect;
  Job titan_job = SmallMoe();
  titan_job.training.moe_permutation = MoePermutation::kGatherScatter;
  const LayerCost fused = Ideal(fused_job).TransformerLayer(0);
  const LayerCost megatron = Ideal(megatron_job).TransformerLayer(0);
  const LayerCost titan = Ideal(titan_job).TransformerLayer(0);
  const double scatter = 268e9 / 4.8, index = 122.5e9 / 4.8;
  EXPECT_NEAR(megatron.forward.memory_bound - fused.forward.memory_bound,
              -4194304 / 1e12 + 2097152 / scatter, 1e-12);
  EXPECT_NEAR(megatron.backward_input.memory_bound - fused.backward_input.memory_bound,
              -4194304 / 1e12 + 2097152 / index, 1e-12);
  EXPECT_NEAR(titan.forward.memory_bound - fused.forward.memory_bound,
              4194304 / 1e12 + 2097152 / scatter, 1e-12);
  EXPECT_NEAR(titan.backward_input.memory_bound - fused.backward_input.memory_bound,
              12582912 / 1e12 + 2097152 / scatter, 1e-12);
  EXPECT_DOUBLE_EQ(megatron.forward.gemm, fused.forward.gemm);
  EXPECT_DOUBLE_EQ(megatron.flops_forward, fused.flops_forward);
}

// Transformer Engine's GroupedLinear launches one GEMM per expert over 4 streams: with the 4
// local experts of SmallMoe that is one round, the grouped kernel's time; SequentialMLP runs
// the experts one after the other.
TEST(LayerCostTest, ExpertGemmsLaunchedAsTheStackLaunchesThem) {
  Job grouped_job = SmallMoe();
  Job streams_job = SmallMoe();
  streams_job.training.expert_gemm_launch = ExpertGemmLaunch::kStreamLoop;
  Job sequential_job = SmallMoe();
  sequential_job.training.expert_gemm_launch = ExpertGemmLaunch::kSequentialLoop;
  const LayerCostModel model = Ideal(grouped_job);
  const LayerCost grouped = model.TransformerLayer(0);
  const LayerCost streams = Ideal(streams_job).TransformerLayer(0);
  const LayerCost sequential = Ideal(sequential_job).TransformerLayer(0);
  EXPECT_DOUBLE_EQ(streams.forward.gemm, grouped.forward.gemm);
  EXPECT_DOUBLE_EQ(streams.backward_weight.gemm, grouped.backward_weight.gemm);
  const GemmModel& g = model.gemm();
  const std::vector<int64_t> experts(4, 512);
  const double one_after_another =
      4 * g.Time({512, 1024, 1024}, DType::kBF16) + 4 * g.Time({512, 1024, 512}, DType::kBF16);
  const double one_kernel = g.EstimateGrouped(experts, 1024, 1024, DType::kBF16).seconds +
                            g.EstimateGrouped(experts, 1024, 512, DType::kBF16).seconds;
  EXPECT_DOUBLE_EQ(sequential.forward.gemm - grouped.forward.gemm, one_after_another - one_kernel);
  EXPECT_DOUBLE_EQ(sequential.flops_backward, grouped.flops_backward);
}

// Without gradient_accumulation_fusion each weight gradient is added to the fp32 main grad by
// its own kernel: 2 + 4 + 4 = 10 B per weight, per weight matrix of the layer (QKV 4096x6144,
// O 4096x4096, fc1 4096x28672, fc2 14336x4096), in the weight-gradient pass.
TEST(LayerCostTest, UnfusedGradientAccumulationAddsTenBytesPerWeight) {
  Job job = Llama8B();
  job.training.gradient_accumulation_fusion = false;
  const LayerCostModel model = Ideal(job);
  const MemoryBoundModel& mb = model.memory_bound();
  const double expected = mb.Time(10.0 * 4096 * 6144) + mb.Time(10.0 * 4096 * 4096) +
                          mb.Time(10.0 * 4096 * 28672) + mb.Time(10.0 * 14336 * 4096);
  const LayerCost c = model.TransformerLayer(0);
  EXPECT_DOUBLE_EQ(c.backward_weight.memory_bound, expected);
  EXPECT_DOUBLE_EQ(c.forward.memory_bound,
                   Ideal(Llama8B()).TransformerLayer(0).forward.memory_bound);
}

// The grouped_gemm package (moe_use_legacy_grouped_gemm) loops like TE, but its expert weights'
// gradients come back through autograd: 10 B per expert weight (4 experts x (1024x1024 +
// 512x1024)) even with gradient_accumulation_fusion on, and nothing under FSDP2.
TEST(LayerCostTest, LegacyGroupedGemmAlwaysAddsTheExpertGradients) {
  Job streams_job = SmallMoe();
  streams_job.training.expert_gemm_launch = ExpertGemmLaunch::kStreamLoop;
  Job legacy_job = SmallMoe();
  legacy_job.training.expert_gemm_launch = ExpertGemmLaunch::kGroupedGemmPackage;
  const LayerCostModel model = Ideal(legacy_job);
  const LayerCost streams = Ideal(streams_job).TransformerLayer(0);
  const LayerCost legacy = model.TransformerLayer(0);
  EXPECT_DOUBLE_EQ(legacy.forward.gemm, streams.forward.gemm);
  const MemoryBoundModel& mb = model.memory_bound();
  EXPECT_NEAR(legacy.backward_weight.memory_bound - streams.backward_weight.memory_bound,
              mb.Time(10.0 * 4 * 1024 * 1024) + mb.Time(10.0 * 4 * 512 * 1024), 1e-12);
  legacy_job.parallel.fsdp2 = true;
  streams_job.parallel.fsdp2 = true;
  EXPECT_NEAR(Ideal(legacy_job).TransformerLayer(0).backward_weight.memory_bound,
              Ideal(streams_job).TransformerLayer(0).backward_weight.memory_bound, 1e-15);
}

// Full recompute and selective recompute of the "moe" module re-run the forward atomic adds;
// recomputing only "moe_act" does not.
TEST(LayerCostTest, RecomputedMoeRerunsTheUnfusedPermutation) {
  Job job = SmallMoe();
  job.training.moe_permutation = MoePermutation::kIndexSelect;
  const double adds = 2097152 / (268e9 / 4.8);
  Job fused = job;
  fused.training.moe_permutation = MoePermutation::kFused;
  auto recompute_of = [](Job j, RecomputeGranularity g, std::vector<std::string> modules) {
    j.training.recompute.granularity = g;
    j.training.recompute.modules = std::move(modules);
    return Ideal(j).TransformerLayer(0).recompute.memory_bound;
  };
  const double full = recompute_of(job, RecomputeGranularity::kFull, {}) -
                      recompute_of(fused, RecomputeGranularity::kFull, {});
  const double moe = recompute_of(job, RecomputeGranularity::kSelective, {"moe"}) -
                     recompute_of(fused, RecomputeGranularity::kSelective, {"moe"});
  const double act = recompute_of(job, RecomputeGranularity::kSelective, {"moe_act"}) -
                     recompute_of(fused, RecomputeGranularity::kSelective, {"moe_act"});
  EXPECT_NEAR(full, -4194304 / 1e12 + adds, 1e-12);
  EXPECT_NEAR(moe, -4194304 / 1e12 + adds, 1e-12);
  EXPECT_DOUBLE_EQ(act, 0.0);
}

TEST(LayerCostTest, MoeLayerRoutesTopKCopiesToTheLocalExperts) {
  const Job job = SmallMoe();
  const LayerCostModel model = Ideal(job);
  const LayerCost c = model.TransformerLayer(0);
  EXPECT_EQ(c.kind, "moe");
  // 1024 tokens x top-2 = 2048 copies over 4 local experts = 512 each. Experts: fc1 (512,
  // 1024, 1024) and fc2 (512, 1024, 512) per expert; router (1024, 8, 1024).
  const double expert_flops = 4 * (2.0 * 512 * 1024 * 1024 + 2.0 * 512 * 1024 * 512);
  const double router_flops = 2.0 * 1024 * 8 * 1024;
  // Attention: QKV (1024, 3072, 1024), O (1024, 1024, 1024), 8 heads x 1024·1025/2 pairs.
  const double attention_flops =
      2.0 * 1024 * 3072 * 1024 + 2.0 * 1024 * 1024 * 1024 + 2.0 * 256 * (1024.0 * 1025 / 2) * 8;
  EXPECT_DOUBLE_EQ(c.flops_forward, expert_flops + router_flops + attention_flops);
  EXPECT_DOUBLE_EQ(
      c.forward.gemm,
      model.gemm().EstimateGrouped({512, 512, 512, 512}, 1024, 1024, DType::kBF16).seconds +
          model.gemm().EstimateGrouped({512, 512, 512, 512}, 1024, 512, DType::kBF16).seconds +
          model.gemm().Time({1024, 8, 1024}, DType::kBF16) +
          model.gemm().Time({1024, 3072, 1024}, DType::kBF16) +
          model.gemm().Time({1024, 1024, 1024}, DType::kBF16));
  // Dispatch and combine all-to-alls send the 2048 copies of 1024 x 2 B: 4 MiB each way.
  int a2a = 0;
  for (const CommCall& call : c.comms) {
    if (call.op != Collective::kAllToAll) continue;
    ++a2a;
    EXPECT_EQ(call.dim, ParallelDim::kEP);
    EXPECT_EQ(call.bytes, 4194304);
  }
  EXPECT_EQ(a2a, 4);  // dispatch + combine, forward and backward
  // Two local experts or more: the received tokens are sorted by expert (permute + unpermute).
  const MemoryBoundModel& mb = model.memory_bound();
  const double permute = mb.Time(PermuteBytes(1024, 2, 1024, 2, true).forward);
  const double expected_mb = 2 * mb.Time(NormBytes(1024, 1024, 2).forward) +
                             mb.Time(RotaryBytes(1024, 1024, 1024, 2).forward) +
                             2 * mb.Time(ResidualAddBytes(1024, 1024, 2).forward) +
                             mb.Time(RouterBytes(1024, 8).forward) + 2 * permute +
                             mb.Time(SwiGluBytes(2048, 512, 2).forward);
  EXPECT_DOUBLE_EQ(c.forward.memory_bound, expected_mb);
}

// Routed experts run in their own dtype where it differs from the linear layers' (torchtitan's
// quantize.grouped_mm converters): the same GEMMs as above with the experts' in FP8.
TEST(LayerCostTest, RoutedExpertsRunInTheExpertGemmDtype) {
  Job job = SmallMoe();
  job.training.precision.expert_gemm = DType::kFP8;
  const LayerCostModel model = Ideal(job);
  EXPECT_DOUBLE_EQ(
      model.TransformerLayer(0).forward.gemm,
      model.gemm().EstimateGrouped({512, 512, 512, 512}, 1024, 1024, DType::kFP8).seconds +
          model.gemm().EstimateGrouped({512, 512, 512, 512}, 1024, 512, DType::kFP8).seconds +
          model.gemm().Time({1024, 8, 1024}, DType::kBF16) +
          model.gemm().Time({1024, 3072, 1024}, DType::kBF16) +
          model.gemm().Time({1024, 1024, 1024}, DType::kBF16));
}

// MaxText layers/moe.py generate_masks: capacity = int(max(ceil(S·k/E)·cf, cf)).
TEST(LayerCostTest, MaxTextCapacityPerSequence) {
  EXPECT_EQ(MaxTextExpertCapacity(4096, 8, 256, 1.25), 160);  // ceil(128)·1.25
  EXPECT_EQ(MaxTextExpertCapacity(4096, 8, 256, 4.0), 512);
  EXPECT_EQ(MaxTextExpertCapacity(4096, 8, 128, 1.0), 256);  // Qwen3-30B-A3B
  EXPECT_EQ(MaxTextExpertCapacity(1000, 2, 3, 1.0), 667);    // ceil(666.7)
  EXPECT_EQ(MaxTextExpertCapacity(4, 1, 8, 2.0), 2);         // ceil(0.5) = 1, x 2
  EXPECT_EQ(MaxTextExpertCapacity(4096, 8, 256, 0.0), 0);    // dropless: no capacity
  EXPECT_EQ(MaxTextExpertCapacity(4096, 8, 256, -1.0), 0);
}

TEST(LayerCostTest, CapacitySlotsAddDispatchAndCombineEinsums) {
  Job job = SmallMoe();
  const LayerCostModel grouped_model = Ideal(job);
  const LayerCost grouped = grouped_model.TransformerLayer(0);
  job.training.moe_expert_compute = MoeExpertCompute::kCapacitySlots;
  job.model.moe.capacity_factor = 1.25;
  const LayerCostModel model = Ideal(job);
  const LayerCost c = model.TransformerLayer(0);
  // Capacity int(ceil(1024·2/8)·1.25) = 320 slots per expert and sequence: 8 x 320 = 2560
  // slots; each of the 4 local experts takes the 320 slots of both EP ranks' sequences (640).
  const double grouped_experts = 4 * (2.0 * 512 * 1024 * 1024 + 2.0 * 512 * 1024 * 512);
  const double slot_experts = 4 * (2.0 * 640 * 1024 * 1024 + 2.0 * 640 * 1024 * 512);
  // dispatch [2560, 1024] = maskᵀ[2560, 1024 tokens] · x[1024, 1024] and combine the
  // transpose: 2·2560·1024·1024 FLOPs each, forward and (input gradient only) backward.
  const double einsum = 2.0 * 2560 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(c.flops_forward,
                   grouped.flops_forward - grouped_experts + slot_experts + 2 * einsum);
  // Expert backward is twice its forward (input and weight gradients); each einsum has its
  // input gradient, and the combine also the gradient of its mask, which holds the router
  // weights: dMask [1024, 2560] = dY [1024, 1024] · yᵀ [1024, 2560].
  EXPECT_DOUBLE_EQ(c.flops_backward,
                   grouped.flops_backward - 2 * grouped_experts + 2 * slot_experts + 3 * einsum);
  // The all-to-all reshards every slot: 2560 x 1024 x 2 B.
  for (const CommCall& call : c.comms) {
    if (call.op == Collective::kAllToAll) {
      EXPECT_EQ(call.bytes, 2560 * 1024 * 2);
    }
  }
  // No token sort: the einsums replace permute and unpermute.
  const MemoryBoundModel& mb = model.memory_bound();
  const double permute = mb.Time(PermuteBytes(1024, 2, 1024, 2, true).forward);
  EXPECT_NEAR(c.forward.memory_bound,
              grouped.forward.memory_bound - 2 * permute -
                  mb.Time(SwiGluBytes(2048, 512, 2).forward) +
                  mb.Time(SwiGluBytes(2560, 512, 2).forward),
              1e-15);
}

TEST(LayerCostTest, EveryExpertRunsEveryToken) {
  Job job = SmallMoe();
  const LayerCost grouped = Ideal(job).TransformerLayer(0);
  job.training.moe_expert_compute = MoeExpertCompute::kEveryExpert;
  const LayerCost c = Ideal(job).TransformerLayer(0);
  // "BSM,EMH -> BSEH": all 1024 tokens through all 8 experts, 4 local x 2048 rows.
  const double grouped_experts = 4 * (2.0 * 512 * 1024 * 1024 + 2.0 * 512 * 1024 * 512);
  const double every_expert = 4 * (2.0 * 2048 * 1024 * 1024 + 2.0 * 2048 * 1024 * 512);
  EXPECT_DOUBLE_EQ(c.flops_forward, grouped.flops_forward - grouped_experts + every_expert);
}

TEST(LayerCostTest, RaggedExpertLoadAndSharedExperts) {
  Job job = SmallMoe();
  job.training.seq_length = 1022;  // 2044 copies over 4 experts: 511 each
  job.model.moe.num_experts = 6;   // 3 local experts: 682, 681, 681
  job.model.moe.shared_expert_ffn_hidden_size = 1024;
  const LayerCostModel model = Ideal(job);
  const LayerCost c = model.TransformerLayer(0);
  // Router (1022, 6, 1024), experts grouped over {682, 681, 681}, shared expert fc1
  // (1022, 2048, 1024) and fc2 (1022, 1024, 1024).
  const double expected =
      model.gemm().EstimateGrouped({682, 681, 681}, 1024, 1024, DType::kBF16).seconds +
      model.gemm().EstimateGrouped({682, 681, 681}, 1024, 512, DType::kBF16).seconds +
      model.gemm().Time({1022, 6, 1024}, DType::kBF16) +
      model.gemm().Time({1022, 3072, 1024}, DType::kBF16) +
      model.gemm().Time({1022, 1024, 1024}, DType::kBF16) +
      model.gemm().Time({1022, 2048, 1024}, DType::kBF16) +
      model.gemm().Time({1022, 1024, 1024}, DType::kBF16);
  EXPECT_DOUBLE_EQ(c.forward.gemm, expected);
}

TEST(LayerCostTest, MultiLatentAttentionProjections) {
  // DeepSeek-V3 attention (arXiv 2412.19437): hidden 7168, 128 heads, q_lora 1536, kv_lora 512,
  // qk 128 + rope 64, v 128; TP 1, 4096 tokens.
  Job job = Llama8B();
  ModelSpec& m = job.model;
  m.hidden_size = 7168;
  m.num_attention_heads = 128;
  m.num_query_groups = 128;
  m.attention = AttentionType::kMultiLatent;
  m.mla = {1536, 512, 128, 64, 128};
  m.ffn_hidden_size = 18432;
  const LayerCostModel model = Ideal(job);
  const LayerCost c = model.TransformerLayer(0);
  const double T = 4096;
  const double projections = 2 * T * 7168 * 1536 + 2 * T * 1536 * (128 * 192) +
                             2 * T * 7168 * (512 + 64) + 2 * T * 512 * (128 * 256) +
                             2 * T * (128 * 128) * 7168;
  const double mlp = 2 * T * 7168 * (2 * 18432) + 2 * T * 18432 * 7168;
  const double attention = 2.0 * (192 + 128) * (4096.0 * 4097 / 2) * 128;
  EXPECT_DOUBLE_EQ(c.flops_forward, projections + mlp + attention);
}

TEST(LayerCostTest, SlidingWindowLayersFollowThePeriod) {
  Job job = Llama8B();
  job.model.sliding_window = 1024;
  job.model.sliding_window_period = 6;  // layers 5, 11, ... are global
  const LayerCostModel model = Ideal(job);
  const double windowed_pairs = 1024.0 * 1025 / 2 + 3072.0 * 1024;
  EXPECT_DOUBLE_EQ(model.TransformerLayer(0).flops_forward,
                   kGemmForward + 2.0 * 256 * windowed_pairs * 32);
  EXPECT_DOUBLE_EQ(model.TransformerLayer(5).flops_forward, kGemmForward + kAttentionForward);
}

TEST(LayerCostTest, OutputHeadAndEmbedding) {
  Job job = Llama8B(2, false);
  const LayerCostModel model = Ideal(job);
  const LayerCost head = model.OutputHead();
  // Vocabulary padded to a multiple of 128·2 = 128256, 64128 per TP rank.
  EXPECT_DOUBLE_EQ(head.flops_forward, 2.0 * 4096 * 64128 * 4096);
  EXPECT_DOUBLE_EQ(head.flops_backward, 2 * head.flops_forward);
  EXPECT_DOUBLE_EQ(head.forward.memory_bound,
                   model.memory_bound().Time(NormBytes(4096, 4096, 2).forward) +
                       model.memory_bound().Time(CrossEntropyBytes(4096, 64128, 2, false).forward));
  // Three fp32-per-token all-reduces for the loss, plus the input-gradient all-reduce.
  int loss_ar = 0;
  for (const CommCall& call : head.comms) loss_ar += call.bytes == 4096 * 4;
  EXPECT_EQ(loss_ar, 3);
  EXPECT_EQ(head.comms.size(), 4u);
  const LayerCost emb = model.Embedding();
  EXPECT_DOUBLE_EQ(emb.flops_forward, 0);
  EXPECT_DOUBLE_EQ(emb.forward.memory_bound,
                   model.memory_bound().Time(EmbeddingBytes(4096, 4096, 2).forward));
  // The embedding has no input gradient: its backward work is the weight gradient.
  EXPECT_DOUBLE_EQ(emb.backward_input.memory_bound, 0);
  EXPECT_DOUBLE_EQ(emb.backward_weight.memory_bound,
                   model.memory_bound().Time(EmbeddingBytes(4096, 4096, 2).backward));
}

TEST(LayerCostTest, MtpModuleIsProjectionLayerAndHead) {
  Job job = Llama8B();
  job.model.mtp_num_layers = 1;
  const LayerCostModel model = Ideal(job);
  const LayerCost mtp = model.MtpModule();
  EXPECT_EQ(mtp.kind, "mtp");
  const double projection = 2.0 * 4096 * 4096 * 8192;
  EXPECT_DOUBLE_EQ(mtp.flops_forward, projection + model.TransformerLayer(31).flops_forward +
                                          model.OutputHead().flops_forward);
}

TEST(LayerCostTest, Fp8GemmsUseTheFp8PeakAndPayForTheCasts) {
  Job job = Llama8B();
  job.training.precision.gemm = DType::kFP8;
  const LayerCostModel model = Ideal(job);
  const LayerCost c = model.TransformerLayer(0);
  EXPECT_DOUBLE_EQ(c.forward.gemm, model.gemm().Time({4096, 6144, 4096}, DType::kFP8) +
                                       model.gemm().Time({4096, 4096, 4096}, DType::kFP8) +
                                       model.gemm().Time({4096, 28672, 4096}, DType::kFP8) +
                                       model.gemm().Time({4096, 4096, 14336}, DType::kFP8));
  // Cast-transpose of each GEMM input: widths 4096 (QKV), 4096 (O), 4096 (fc1), 14336 (fc2).
  const MemoryBoundModel& mb = model.memory_bound();
  const double casts = mb.Time(4096.0 * 4096 * 4) * 3 + mb.Time(4096.0 * 14336 * 4);
  const double bf16_forward_mb = Ideal(Llama8B()).TransformerLayer(0).forward.memory_bound;
  EXPECT_NEAR(c.forward.memory_bound, bf16_forward_mb + casts, 1e-15);
  // Current (dynamic) scaling reads each input once more for its amax: 2 bytes per element.
  job.training.precision.fp8_current_scaling = true;
  const double amax = mb.Time(4096.0 * 4096 * 2) * 3 + mb.Time(4096.0 * 14336 * 2);
  EXPECT_NEAR(Ideal(job).TransformerLayer(0).forward.memory_bound, bf16_forward_mb + casts + amax,
              1e-15);
}

TEST(LayerCostTest, InconsistentJobsAreUserErrors) {
  Job job = Llama8B(1, false, 3);  // CP 3 does not divide 4096
  EXPECT_THROW(Ideal(job), UserError);
  job = Llama8B();
  EXPECT_THROW(Ideal(job).TransformerLayer(32), UserError);
  job.model.moe.num_experts = 8;  // MoE without top-k
  EXPECT_THROW(Ideal(job), UserError);
}

TEST(LayerCostTest, OptimizerStepUsesTheJobsRecipe) {
  const LayerCostModel model(Llama8B(), EfficiencyTable::Ideal(), nullptr);
  // 30 B update + 4 B norm read per parameter at 1 TB/s.
  EXPECT_NEAR(model.OptimizerStep(1000000000).seconds, 34e9 / 1e12, 1e-12);
}

// ---- with the collective model -----------------------------------------------------------

TEST(LayerCostCommunicationTest, TensorParallelTimeIsTheSumOfItsCollectives) {
  Job job = Llama8B(2, true);
  job.cluster.gpu = *FindGpu("MI300X");
  const auto collectives = MakeCollectiveModel(job.cluster, "rccl", job.parallel);
  const LayerCostModel model(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get());
  const LayerCost c = model.TransformerLayer(0);
  const CommGroup tp = GroupFor(ParallelDim::kTP, job.parallel, 8);
  const double ag = collectives->Time(Collective::kAllGather, 33554432, tp);
  const double rs = collectives->Time(Collective::kReduceScatter, 33554432, tp);
  ASSERT_GT(ag, 0);
  EXPECT_DOUBLE_EQ(c.forward.tp_comm, 2 * ag + 2 * rs);
  EXPECT_DOUBLE_EQ(c.backward_input.tp_comm, 2 * ag + 2 * rs);
}

TEST(LayerCostCommunicationTest, DeepEpHidesAFractionOfTheAllToAllBehindCompute) {
  Job job = SmallMoe();
  job.cluster.gpu = *FindGpu("MI300X");
  const auto collectives = MakeCollectiveModel(job.cluster, "rccl", job.parallel);
  const CommGroup ep = GroupFor(ParallelDim::kEP, job.parallel, 8);
  const double a2a = collectives->Time(Collective::kAllToAll, 4194304, ep);
  ASSERT_GT(a2a, 0);
  const LayerCost plain =
      LayerCostModel(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get())
          .TransformerLayer(0);
  EXPECT_DOUBLE_EQ(plain.forward.ep_comm, 2 * a2a);  // dispatch + combine, nothing hidden
  job.training.deepep = true;
  // DeepEP's kernels alone change no time inside one node (no network copies to save)...
  const LayerCost kernels_only =
      LayerCostModel(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get())
          .TransformerLayer(0);
  EXPECT_DOUBLE_EQ(kernels_only.forward.ep_comm, 2 * a2a);
  // ...the overlap with compute hides a fraction.
  job.training.ep_overlap = true;
  const LayerCost deepep =
      LayerCostModel(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get())
          .TransformerLayer(0);
  // exposed = a2a - min(0.65·a2a, compute of the pass)
  const double hidden = std::min(0.65 * 2 * a2a, deepep.forward.Compute());
  EXPECT_DOUBLE_EQ(deepep.forward.ep_comm, 2 * a2a - hidden);
  EXPECT_DOUBLE_EQ(deepep.hidden_comm_forward, hidden);
  EXPECT_DOUBLE_EQ(deepep.forward.Compute(), plain.forward.Compute());
  // Sync-free stage 3 hides 0.85 of it (Primus's _get_deepep_overlap_efficiency).
  job.training.sync_free_moe_stage = 3;
  const LayerCost stage3 =
      LayerCostModel(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get())
          .TransformerLayer(0);
  EXPECT_DOUBLE_EQ(stage3.hidden_comm_forward, std::min(0.85 * 2 * a2a, stage3.forward.Compute()));
}

TEST(LayerCostCommunicationTest, RingExchangeIsExposedOnlyBeyondEachAttentionStep) {
  Job job = Llama8B(1, false, 2);
  job.cluster.gpu = *FindGpu("MI300X");
  const auto collectives = MakeCollectiveModel(job.cluster, "rccl", job.parallel);
  const LayerCostModel model(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get());
  const LayerCost c = model.TransformerLayer(0);
  const CommGroup cp = GroupFor(ParallelDim::kCP, job.parallel, 8);
  const double step = collectives->Time(Collective::kSendRecv, 8388608, cp);
  // One step (cp - 1 = 1), overlapped with half of the attention forward.
  EXPECT_DOUBLE_EQ(c.forward.cp_comm, std::max(0.0, step - c.forward.attention / 2));
  EXPECT_DOUBLE_EQ(c.hidden_comm_forward, step - c.forward.cp_comm);
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// Hand arithmetic: P(miss) = prod_{i<k} (E - E/N - i) / (E - i); remote nodes = (N - 1)(1 - P);
// share = remote nodes / (k (n - r) / n).
TEST(DeepEpNetworkShareTest, CountsDistinctRemoteNodesNotExpertCopies) {
  // DeepSeek-V3 (256 experts, top-8) on EP32 = 4 nodes of 8: P = 0.09645, 2.711 remote nodes
  // per token against 6 remote copies.
  EXPECT_NEAR(DeepEpNetworkShare(256, 8, CommGroup{32, 8}), 2.71066 / 6.0, 1e-4);
  // Qwen3-235B-A22B (128 experts, top-8) on EP16 = 2 nodes: nearly every token hits the other
  // node once (P = 0.0031), against 4 remote copies.
  EXPECT_NEAR(DeepEpNetworkShare(128, 8, CommGroup{16, 8}), 0.99690 / 4.0, 1e-4);
  // One node: nothing crosses the network, nothing to deduplicate.
  EXPECT_DOUBLE_EQ(DeepEpNetworkShare(256, 8, CommGroup{8, 8}), 1.0);
  // Top-1 routing sends one copy either way.
  EXPECT_NEAR(DeepEpNetworkShare(64, 1, CommGroup{16, 8}), 1.0, 1e-12);
}

// Group-limited routing: P(miss) = sum_j C(m, j) C(G - m, g - j) / C(G, g) x
// C(g·s - j·x, k) / C(g·s, k), with m groups meeting the node, x of its experts in each, s
// experts per group.
TEST(DeepEpNetworkShareTest, GroupLimitedRoutingReachesFewerNodes) {
  // DeepSeek-V3 (8 groups, top-4) on EP32 = 4 nodes: each node holds 2 whole groups (m = 2,
  // x = s = 32, pool 128). P = 15/70 + 40/70 · C(96,8)/C(128,8) + 15/70 · C(64,8)/C(128,8)
  // = 0.26795: 2.196 remote nodes per token instead of 2.711.
  EXPECT_NEAR(DeepEpNetworkShare(256, 8, CommGroup{32, 8}, 8, 4), 2.196157 / 6.0, 1e-5);
  // 2 groups over 4 nodes, top-1 group, 64 experts, top-6: the node is half of one group
  // (m = 1, x = 16, pool 32): P = 1/2 + 1/2 · C(16,6)/C(32,6) = 0.504418, 1.48675 remote nodes
  // against 4.5 remote copies.
  EXPECT_NEAR(DeepEpNetworkShare(64, 6, CommGroup{32, 8}, 2, 1), 1.486745 / 4.5, 1e-5);
  // Groups that do not nest with the nodes (3 groups over 4 nodes) count as unlimited.
  EXPECT_DOUBLE_EQ(DeepEpNetworkShare(96, 6, CommGroup{32, 8}, 3, 1),
                   DeepEpNetworkShare(96, 6, CommGroup{32, 8}));
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// Megatron's combined 1F1B (model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run),
// by hand, milliseconds. Phases: pre-dispatch 2 / 4 (forward / backward), experts 1 forward,
// 1 + 1 backward (input + weight gradients), post-combine 0.5 / 0.5; all-to-alls: dispatch
// 0.5 forward and 3 backward, combine 1 each way (5.5 in all).
MoeLayerPhases HandPhases() {
  MoeLayerPhases p;
  p.forward_pre = 2, p.forward_experts = 1, p.forward_post = 0.5;
  p.backward_pre = 4, p.backward_experts_input = 1, p.backward_experts_weight = 1;
  p.backward_post = 0.5;
  p.dispatch_forward = 0.5, p.combine_forward = 1, p.dispatch_backward = 3, p.combine_backward = 1;
  return p;
}

TEST(CombinedOneFOneBTest, EachStageTakesItsLongerStream) {
  // One after the other: 10 of computation + 5.5 of all-to-all = 15.5.
  // Stage 1: max(0.5 + 1 combine bwd, 2 pre fwd) = 2.
  // Stage 2: comm ends at max(0.5, 1 + 1 experts bwd) + 3 = 5; compute at max(2, 0.5) + 1 = 3.
  // Stage 3: max(1 + 0.5 combine fwd, 4 pre bwd) = 4. Together 11: 4.5 hidden.
  EXPECT_DOUBLE_EQ(CombinedOneFOneBHiddenComm(HandPhases(), false), 4.5);
  // Delayed weight gradients: the dispatch backward starts after the input gradient alone,
  // max(0.5, 1) + 3 = 4, while the compute stream runs 1 + 1, then the experts' forward: 3.
  // Stage 2 takes 4, everything is hidden (5.5).
  EXPECT_DOUBLE_EQ(CombinedOneFOneBHiddenComm(HandPhases(), true), 5.5);
}

TEST(CombinedOneFOneBTest, HidesNoMoreThanTheAllToAllNorWhatTheComputeCovers) {
  MoeLayerPhases p;
  p.forward_pre = 1, p.backward_pre = 1;
  p.dispatch_forward = p.combine_forward = p.dispatch_backward = p.combine_backward = 10;
  // One after the other 2 + 40; paired: max(10, 1) + (max(10, 0) + 10) + max(10, 1) = 40.
  EXPECT_DOUBLE_EQ(CombinedOneFOneBHiddenComm(p, false), 2);
  // No communication: nothing to hide, even though the streams run side by side.
  EXPECT_DOUBLE_EQ(
      CombinedOneFOneBHiddenComm(MoeLayerPhases{.forward_post = 1, .backward_pre = 1}, false), 0);
}

TEST(CombinedOneFOneBTest, WarmUpAndCoolDownPassesAreNotPaired) {
  // Without pipelining: the first forward and the last backward run alone, 7 of 8 pair.
  EXPECT_DOUBLE_EQ(CombinedOneFOneBPairedShare(8, 1, 1), 7.0 / 8);
  // 1F1B over 4 stages, 32 micro-batches: 3 warm-up forwards + the extra one.
  EXPECT_DOUBLE_EQ(CombinedOneFOneBPairedShare(32, 4, 1), 28.0 / 32);
  // Interleaved, PP 8 x VPP 2, 128 micro-batches: 256 passes, 2·7 + 1·8 + 1 = 23 warm-up.
  EXPECT_DOUBLE_EQ(CombinedOneFOneBPairedShare(128, 8, 2), 233.0 / 256);
  // More warm-up than passes: none pair.
  EXPECT_DOUBLE_EQ(CombinedOneFOneBPairedShare(2, 8, 2), 0);
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

TEST(LayerCostCommunicationTest, CombinedOneFOneBHidesWhatThePairedComputeCovers) {
  Job job = SmallMoe();
  job.cluster.gpu = *FindGpu("MI300X");
  const auto collectives = MakeCollectiveModel(job.cluster, "rccl", job.parallel);
  const CommGroup ep = GroupFor(ParallelDim::kEP, job.parallel, 8);
  const double a2a = collectives->Time(Collective::kAllToAll, 4194304, ep);
  ASSERT_GT(a2a, 0);
  job.training.ep_overlap = true;
  job.training.ep_a2a_combined_1f1b = true;
  const LayerCost c =
      LayerCostModel(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get())
          .TransformerLayer(0);
  // Inside one node each all-to-all is far shorter than the computation beside it: every
  // paired pass hides all four, the unpaired first forward and last backward none.
  const double share =
      CombinedOneFOneBPairedShare(job.training.NumMicroBatches(job.parallel.dp), 1, 1);
  ASSERT_LT(share, 1.0);
  EXPECT_NEAR(c.hidden_comm_forward, share * 2 * a2a, 1e-12);
  EXPECT_NEAR(c.hidden_comm_backward, share * 2 * a2a, 1e-12);
  EXPECT_NEAR(c.forward.ep_comm, (1 - share) * 2 * a2a, 1e-12);
}

}  // namespace
}  // namespace sextant
