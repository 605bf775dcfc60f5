#include "cost/attention_model.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

// 100 CUs, 100 TFLOP/s bf16, 1 TB/s: round numbers for hand-checked values.
GpuSpec RoundGpu() {
  GpuSpec g;
  g.name = "round";
  g.compute_units = 100;
  g.hbm_bandwidth = 1e12;
  g.peak_dense_tflops = {{DType::kBF16, 100.0}};
  return g;
}

AttentionModel IdealModel() { return AttentionModel(RoundGpu(), EfficiencyTable::Ideal()); }

AttentionShape Llama8BHeadsOnOneGpu() {
  AttentionShape s;
  s.batch = 1;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.seq = 4096;
  s.head_dim_qk = 128;
  s.head_dim_v = 128;
  return s;
}

TEST(AttentionPairsTest, CountsCausalWindowedAndFullPairs) {
  EXPECT_DOUBLE_EQ(AttentionPairs(8, /*causal=*/false, 0), 64);
  EXPECT_DOUBLE_EQ(AttentionPairs(8, true, 0), 36);  // 1 + 2 + ... + 8
  // Window 3: queries see 1, 2, 3, 3, 3, 3, 3, 3 keys.
  EXPECT_DOUBLE_EQ(AttentionPairs(8, true, 3), 21);
  EXPECT_DOUBLE_EQ(AttentionPairs(8, true, 8), 36);  // a window as long as the sequence
  EXPECT_DOUBLE_EQ(AttentionPairs(8, false, 3), 24);
}

TEST(AttentionModelTest, LoadBalancedContextParallelGivesEachRankHalfTheCausalPairs) {
  // seq 16, CP 2: chunks of 4; rank 0 holds chunks 0 and 3 (queries 0-3 and 12-15), rank 1
  // chunks 1 and 2. Rank 0 scores 1+2+3+4 + 13+14+15+16 = 68 pairs, rank 1 5+6+7+8 +
  // 9+10+11+12 = 68: exactly half of 136.
  AttentionShape s = Llama8BHeadsOnOneGpu();
  s.seq = 16;
  s.cp = 2;
  EXPECT_DOUBLE_EQ(IdealModel().Forward(s, DType::kBF16).pairs, 68);
}

TEST(AttentionModelTest, CausalForwardHandChecked) {
  // pairs = 4096·4097/2 = 8,390,656; FLOPs = 2·(128+128)·pairs·8 heads = 34,368,126,976.
  // 8 heads x 32 query blocks = 256 workgroups = 3 waves on 100 CUs (300/256 quantisation).
  const AttentionEstimate e = IdealModel().Forward(Llama8BHeadsOnOneGpu(), DType::kBF16);
  EXPECT_DOUBLE_EQ(e.flops, 34368126976.0);
  EXPECT_NEAR(e.seconds, 34368126976.0 / 1e14 * 300.0 / 256.0, 1e-12);
  // Q and O: 4096·8·128·2 B each; K and V: 4096·2·128·2 B each; LSE: 4096·8·4 B.
  EXPECT_DOUBLE_EQ(e.hbm_bytes, 2 * 8388608.0 + 2 * 2097152.0 + 131072.0);
}

TEST(AttentionModelTest, BackwardIsTwoAndAHalfForwardsForEqualHeadDims) {
  const AttentionModel model = IdealModel();
  const AttentionShape s = Llama8BHeadsOnOneGpu();
  const double f = model.Forward(s, DType::kBF16).flops;
  const double b = model.Backward(s, DType::kBF16).flops;
  EXPECT_DOUBLE_EQ(b / f, 2.5);
  EXPECT_NEAR(model.Backward(s, DType::kBF16).seconds, 2.5 * model.Forward(s, DType::kBF16).seconds,
              1e-12);
}

TEST(AttentionModelTest, MultiLatentHeadDimsSplitQkAndPv) {
  // DeepSeek-V3: QK over 128 + 64 = 192 dims, PV over 128. Forward 2·(192+128) = 640 FLOP per
  // pair and head; backward 2·(3·192 + 2·128) = 1664.
  AttentionShape s = Llama8BHeadsOnOneGpu();
  s.kv_heads = 8;
  s.head_dim_qk = 192;
  s.head_dim_v = 128;
  const AttentionModel model = IdealModel();
  EXPECT_DOUBLE_EQ(model.Forward(s, DType::kBF16).flops, 640.0 * 8390656 * 8);
  EXPECT_DOUBLE_EQ(model.Backward(s, DType::kBF16).flops, 1664.0 * 8390656 * 8);
}

TEST(AttentionModelTest, GroupedKvHeadsChangeBytesNotFlops) {
  AttentionShape gqa = Llama8BHeadsOnOneGpu();
  AttentionShape mha = gqa;
  mha.kv_heads = 8;
  const AttentionModel model = IdealModel();
  EXPECT_DOUBLE_EQ(model.Forward(gqa, DType::kBF16).flops, model.Forward(mha, DType::kBF16).flops);
  // MHA reads 6 more heads of K and V: 4096·6·256·2 B.
  EXPECT_DOUBLE_EQ(
      model.Forward(mha, DType::kBF16).hbm_bytes - model.Forward(gqa, DType::kBF16).hbm_bytes,
      4096.0 * 6 * 256 * 2);
}

TEST(AttentionModelTest, SlidingWindowAndNonCausal) {
  AttentionShape s = Llama8BHeadsOnOneGpu();
  s.window = 1024;
  // 1024·1025/2 + 3072·1024 = 524,800 + 3,145,728 = 3,670,528 pairs.
  EXPECT_DOUBLE_EQ(IdealModel().Forward(s, DType::kBF16).pairs, 3670528);
  s.window = 0;
  s.causal = false;
  EXPECT_DOUBLE_EQ(IdealModel().Forward(s, DType::kBF16).pairs, 4096.0 * 4096);
}

TEST(AttentionModelTest, EfficiencyFractionsDivideComputeTime) {
  EfficiencyTable t = EfficiencyTable::Ideal();
  t.SetAttentionFractions(0.5, 0.25);
  const AttentionModel model(RoundGpu(), t);
  const AttentionShape s = Llama8BHeadsOnOneGpu();
  EXPECT_NEAR(model.Forward(s, DType::kBF16).seconds,
              2 * IdealModel().Forward(s, DType::kBF16).seconds, 1e-12);
  EXPECT_NEAR(model.Backward(s, DType::kBF16).seconds,
              4 * IdealModel().Backward(s, DType::kBF16).seconds, 1e-12);
}

TEST(AttentionModelTest, InvalidShapesAreUserErrors) {
  AttentionShape s = Llama8BHeadsOnOneGpu();
  s.q_heads = 0;
  EXPECT_THROW(IdealModel().Forward(s, DType::kBF16), UserError);
  s = Llama8BHeadsOnOneGpu();
  s.cp = 0;
  EXPECT_THROW(IdealModel().Backward(s, DType::kBF16), UserError);
  EXPECT_THROW(IdealModel().Forward(Llama8BHeadsOnOneGpu(), DType::kFP4), UserError);
}

}  // namespace
}  // namespace sextant
