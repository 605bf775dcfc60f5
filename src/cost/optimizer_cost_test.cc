#include "cost/optimizer_cost.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

TEST(OptimizerCostTest, MegatronDefaultAdamTouchesThirtyBytesPerParam) {
  // fp32 main grad 4 + fp32 master r/w 8 + exp_avg r/w 8 + exp_avg_sq r/w 8 + bf16 weight 2.
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(PrecisionRecipe{}, OptimizerKind::kAdam), 30.0);
  EXPECT_EQ(OptimizerUpdateTraffic(PrecisionRecipe{}, OptimizerKind::kAdam).size(), 5u);
}

TEST(OptimizerCostTest, PrecisionAwareAndMomentumOptimizers) {
  PrecisionRecipe bf16_moments;
  bf16_moments.exp_avg = DType::kBF16;
  bf16_moments.exp_avg_sq = DType::kBF16;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(bf16_moments, OptimizerKind::kAdam), 4 + 8 + 4 + 4 + 2);
  // SGD with momentum: no second moment.
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(PrecisionRecipe{}, OptimizerKind::kSgd), 22.0);
  // Pure fp32 training: the master is the weight, nothing is copied back.
  PrecisionRecipe fp32;
  fp32.params = DType::kFP32;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(fp32, OptimizerKind::kAdam), 28.0);
  // FP8 weight gather writes a 1-byte copy instead of a 2-byte one.
  PrecisionRecipe fp8;
  fp8.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(fp8, OptimizerKind::kAdam), 29.0);
}

TEST(OptimizerCostTest, StepTimeIsBytesOverAchievableBandwidth) {
  GpuSpec g;
  g.name = "MI300X";
  g.vendor = Vendor::kAMD;
  g.hbm_bandwidth = 5.3e12;
  // Llama 3.1 8B (8.03e9 params) with the distributed optimizer over DP 8: 1.00375e9 owned.
  const int64_t owned = 1003750000;
  const OptimizerCost c = OptimizerStepCost(g, EfficiencyTable::Default(g), PrecisionRecipe{},
                                            OptimizerKind::kAdam, owned);
  // 30 B x 1.00375e9 = 30.1 GB at 0.566 x 5.3 TB/s = 10.04 ms; the norm pass reads 4 B each.
  EXPECT_NEAR(c.update_seconds, 30.0 * owned / (0.566 * 5.3e12), 1e-12);
  EXPECT_NEAR(c.grad_norm_seconds, 4.0 * owned / (0.566 * 5.3e12), 1e-12);
  EXPECT_NEAR(c.seconds, 34.0 * owned / (0.566 * 5.3e12), 1e-12);
  EXPECT_NEAR(c.seconds, 0.011376, 1e-6);
  EXPECT_DOUBLE_EQ(OptimizerStepCost(g, EfficiencyTable::Ideal(), PrecisionRecipe{},
                                     OptimizerKind::kAdam, owned, /*clip_grad=*/false)
                       .bytes,
                   30.0 * owned);
  EXPECT_THROW(
      OptimizerStepCost(g, EfficiencyTable::Ideal(), PrecisionRecipe{}, OptimizerKind::kAdam, -1),
      UserError);
}

}  // namespace
}  // namespace sextant
