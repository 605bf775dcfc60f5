#include "cost/efficiency_table.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hardware/hardware_library.h"

namespace sextant {
namespace {

GpuSpec Gpu(Vendor v) {
  GpuSpec g;
  g.vendor = v;
  return g;
}

TEST(EfficiencyTableTest, SizeClassesAreSteps) {
  const SizeClassTable t{{0, 10, 100}, {0.1, 0.5, 0.9}};
  EXPECT_DOUBLE_EQ(t.Lookup(0), 0.1);
  EXPECT_DOUBLE_EQ(t.Lookup(9.99), 0.1);
  EXPECT_DOUBLE_EQ(t.Lookup(10), 0.5);
  EXPECT_DOUBLE_EQ(t.Lookup(1e9), 0.9);
  EXPECT_EQ(t.ClassOf(50), 1);
}

TEST(EfficiencyTableTest, AmdDefaultsComeFromTraceLensAndPrimus) {
  const EfficiencyTable t = EfficiencyTable::Default(Gpu(Vendor::kAMD));
  // Largest GEMMs: TraceLens MI300X 708 of 1307 TFLOP/s bf16, 1273 of 2614 fp8.
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 200e9), 708.0 / 1307.0);
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kFP8, 200e9), 1273.0 / 2614.0);
  // 1-16 GFLOP: Calculon's 0.6 of its 0.95 top.
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 2e9), 708.0 / 1307.0 * 0.6 / 0.95);
  // Below 1 GFLOP: 0.1 of 0.95.
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 0.5e9), 708.0 / 1307.0 * 0.1 / 0.95);
  EXPECT_DOUBLE_EQ(t.HbmFraction(1e9), 0.566);
  EXPECT_DOUBLE_EQ(t.HbmFraction(0.5e6), 0.566 * 0.3 / 0.9);
  // Flash attention: FA2's 73% / 50% of A100 peak relative to the 0.95 GEMM ceiling.
  EXPECT_DOUBLE_EQ(t.attention_forward_fraction(), 708.0 / 1307.0 * 0.73 / 0.95);
  EXPECT_DOUBLE_EQ(t.attention_backward_fraction(), 708.0 / 1307.0 * 0.50 / 0.95);
}

TEST(EfficiencyTableTest, AmdCeilingsAreEachGpusMaxAchievableFlops) {
  // AMD's measured max-achievable FLOPs ("Measuring Max-Achievable FLOPs - Part 2"): MI325X
  // 843 bf16 / 1519 fp8 TFLOP/s against the MI300X's 1307.4 / 2614.9 peaks (same die, 1000 W
  // instead of 750 W): 64.5% and 58.1% of peak at the largest GEMMs.
  const EfficiencyTable mi325x = EfficiencyTable::Default(*FindGpu("MI325X"));
  EXPECT_NEAR(mi325x.GemmFraction(DType::kBF16, 200e9), 0.6448, 1e-4);
  EXPECT_NEAR(mi325x.GemmFraction(DType::kFP8, 200e9), 0.5809, 1e-4);
  EXPECT_NEAR(mi325x.GemmFraction(DType::kFP16, 200e9), 794.0 / 1307.4, 1e-12);
  EXPECT_NEAR(mi325x.attention_forward_fraction(), 0.6448 * 0.73 / 0.95, 1e-4);
  // 1-16 GFLOP: Calculon's ramp under the GPU's own ceiling.
  EXPECT_NEAR(mi325x.GemmFraction(DType::kBF16, 2e9), 843.0 / 1307.4 * 0.6 / 0.95, 1e-12);
  // CDNA 4 has no published figure: the MI300X's fraction of peak, said in the source.
  const EfficiencyTable mi355x = EfficiencyTable::Default(*FindGpu("MI355X"));
  EXPECT_DOUBLE_EQ(mi355x.GemmFraction(DType::kBF16, 200e9), 708.0 / 1307.0);
  EXPECT_NE(mi355x.source().find("no max-achievable"), std::string::npos) << mi355x.source();
  // A clock change moves the peak and the measured figure together.
  GpuSpec slow = *FindGpu("MI325X");
  slow.SetClockMhz(1050);
  EXPECT_NEAR(slow.MaxAchievableFraction(DType::kBF16), 843.0 / 1307.4, 1e-12);
}

TEST(EfficiencyTableTest, NvidiaAmpereDefaultsAreCalculonsTables) {
  GpuSpec a100 = Gpu(Vendor::kNVIDIA);
  a100.arch = "sm_80";
  const EfficiencyTable t = EfficiencyTable::Default(a100);
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 200e9), 0.95);
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 20e9), 0.9);
  // Dtypes without a table of their own use bf16's.
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kFP8, 20e9), 0.9);
  EXPECT_DOUBLE_EQ(t.HbmFraction(50e6), 0.75);
  EXPECT_DOUBLE_EQ(t.attention_forward_fraction(), 0.73);
  EXPECT_DOUBLE_EQ(t.attention_backward_fraction(), 0.50);
}

// Hopper FP8 (measured on an H200, tests/data/h200): forward GEMMs (fast accumulation) keep
// the bf16 fractions; gradient GEMMs (split accumulator) reach 0.452 / 0.535 / 0.584 / 0.612 of
// the FP8 peak from 16 / 64 / 128 / 512 GFLOP. bf16 and other GPUs have no gradient classes.
TEST(EfficiencyTableTest, HopperFp8GradientGemmsHaveTheirOwnClasses) {
  GpuSpec h100 = Gpu(Vendor::kNVIDIA);
  h100.arch = "sm_90";
  const EfficiencyTable t = EfficiencyTable::Default(h100);
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kFP8, 200e9), t.GemmFraction(DType::kBF16, 200e9));
  EXPECT_DOUBLE_EQ(t.GradientGemmFraction(DType::kFP8, 20e9), 0.452);
  EXPECT_DOUBLE_EQ(t.GradientGemmFraction(DType::kFP8, 100e9), 0.535);
  EXPECT_DOUBLE_EQ(t.GradientGemmFraction(DType::kMXFP8, 200e9), 0.584);
  EXPECT_DOUBLE_EQ(t.GradientGemmFraction(DType::kFP8, 600e9), 0.612);
  EXPECT_DOUBLE_EQ(t.GradientGemmFraction(DType::kBF16, 600e9),
                   t.GemmFraction(DType::kBF16, 600e9));
  GpuSpec b200 = Gpu(Vendor::kNVIDIA);
  b200.arch = "sm_100";
  const EfficiencyTable blackwell = EfficiencyTable::Default(b200);
  EXPECT_EQ(blackwell.GradientGemmTable(DType::kFP8), nullptr);
  EXPECT_DOUBLE_EQ(blackwell.GradientGemmFraction(DType::kFP8, 600e9),
                   blackwell.GemmFraction(DType::kFP8, 600e9));
}

TEST(EfficiencyTableTest, NvidiaHopperAndLaterUseTheMeasuredCublasCeiling) {
  GpuSpec h100 = Gpu(Vendor::kNVIDIA);
  h100.arch = "sm_90";
  const EfficiencyTable t = EfficiencyTable::Default(h100);
  // cuBLAS bf16 8192^3 on B200: 1610 of 2250 TFLOP/s.
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 200e9), 1610.0 / 2250.0);
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 20e9), 1610.0 / 2250.0 * 0.9 / 0.95);
  // FlashAttention-2 on H100: 35% of peak forward (FlashAttention-3 paper, abstract), and
  // 1/1.65 of FlashAttention-3's 50% backward (its §4.1).
  EXPECT_DOUBLE_EQ(t.attention_forward_fraction(), 0.35);
  EXPECT_NEAR(t.attention_backward_fraction(), 0.303, 0.001);
  // Persistent warp-specialised GEMMs hide the per-tile epilogue; Ampere and AMD do not.
  EXPECT_TRUE(t.overlapped_epilogue());
  GpuSpec a100 = Gpu(Vendor::kNVIDIA);
  a100.arch = "sm_80";
  EXPECT_FALSE(EfficiencyTable::Default(a100).overlapped_epilogue());
  EXPECT_FALSE(EfficiencyTable::Default(Gpu(Vendor::kAMD)).overlapped_epilogue());
  // Shortest measured kernels (TraceLens corpus reports): 2.8 µs on H100, 5.3 µs on MI300X.
  EXPECT_DOUBLE_EQ(t.min_kernel_seconds(), 2.8e-6);
  EXPECT_DOUBLE_EQ(EfficiencyTable::Default(Gpu(Vendor::kAMD)).min_kernel_seconds(), 5.3e-6);
  EXPECT_DOUBLE_EQ(EfficiencyTable::Ideal().min_kernel_seconds(), 0.0);
}

TEST(EfficiencyTableTest, JsonListsEveryClass) {
  GpuSpec a100 = Gpu(Vendor::kNVIDIA);
  a100.arch = "sm_80";
  const auto j = nlohmann::json::parse(EfficiencyTable::Default(a100).ToJson());
  ASSERT_EQ(j["gemm"]["bf16"].size(), GemmSizeClassesGflop().size());
  EXPECT_DOUBLE_EQ(j["gemm"]["bf16"][6]["min_gflop"].get<double>(), 128.0);
  EXPECT_DOUBLE_EQ(j["gemm"]["bf16"][6]["fraction"].get<double>(), 0.95);
  EXPECT_DOUBLE_EQ(j["hbm"][3]["min_mb"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["attention"]["backward_fraction"].get<double>(), 0.5);
}

}  // namespace
}  // namespace sextant
