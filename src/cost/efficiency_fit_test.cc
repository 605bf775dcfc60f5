#include "cost/efficiency_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "util/error.h"

namespace sextant {
namespace {

// Round numbers for hand arithmetic: 100 CUs, 100 TFLOP/s bf16 (1 per CU), 1 TB/s HBM
// (10 GB/s per CU share), a 64 MiB L2 that holds the operands below.
GpuSpec RoundGpu() {
  GpuSpec g;
  g.name = "round";
  g.compute_units = 100;
  g.hbm_bandwidth = 1e12;
  g.l2_bytes = 64 * (int64_t{1} << 20);
  g.peak_dense_tflops = {{DType::kBF16, 100.0}};
  return g;
}

// 4096^3 bf16 on RoundGpu at fraction 1: 64x64 tiles, 41 waves of a 33.554432 µs main loop plus
// a 2.4576 µs per-tile prologue/epilogue (see gemm_model_test.cc for the tile choice).
constexpr double kIdeal4096 = 41 * (33.554432e-6 + 2.4576e-6);

MeasuredKernel Gemm4096(double seconds) {
  MeasuredKernel k;
  k.kind = KernelClass::kGemm;
  k.gemm = {4096, 4096, 4096};
  k.seconds = seconds;
  return k;
}

TEST(EfficiencyFitTest, AGemmMeasuredAtTwiceItsIdealTimeFitsFractionOneHalf) {
  const EfficiencyFit fit =
      FitEfficiencyTable(RoundGpu(), EfficiencyTable::Ideal(), {Gemm4096(2 * kIdeal4096)}, 1);
  ASSERT_EQ(fit.classes.size(), 1u);
  EXPECT_TRUE(fit.classes[0].fitted);
  EXPECT_EQ(fit.classes[0].kernels, 1);
  EXPECT_NEAR(fit.classes[0].fraction_after, 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(fit.classes[0].fraction_before, 1.0);
  ASSERT_EQ(fit.errors.size(), 1u);
  EXPECT_NEAR(fit.errors[0].median_before, 0.5, 1e-6);  // ideal predicts half the time
  EXPECT_NEAR(fit.errors[0].median_after, 0.0, 1e-6);
  EXPECT_NEAR(GemmModel(RoundGpu(), fit.table).Time({4096, 4096, 4096}, DType::kBF16),
              2 * kIdeal4096, 1e-9);
}

TEST(EfficiencyFitTest, LeastAbsoluteLogErrorGivesTheMedianRatioOfAClass) {
  EfficiencyTable base = EfficiencyTable::Ideal();
  base.SetGemmTable(DType::kBF16, SizeClassTable{{0, 1e9}, {0.3, 0.9}});
  // Achieved 0.8, 0.4 and 0.05 in the >= 1 GFLOP class: the median ratio 0.4 (a squared loss
  // would give the geometric mean, 0.25, pulled down by the one slow kernel).
  const EfficiencyFit fit = FitEfficiencyTable(
      RoundGpu(), base,
      {Gemm4096(kIdeal4096 / 0.8), Gemm4096(kIdeal4096 / 0.4), Gemm4096(kIdeal4096 / 0.05)}, 3);
  const SizeClassTable& t = fit.table.GemmTable(DType::kBF16);
  EXPECT_DOUBLE_EQ(t.fractions[0], 0.3);  // no kernels: untouched
  EXPECT_NEAR(t.fractions[1], 0.4, 1e-6);
  // Errors at 0.4: the 0.8 kernel is predicted at twice its time (+100%), the 0.4 one exactly,
  // the 0.05 one at 1/8 of it (-87.5%): median 87.5%, mean (100 + 0 + 87.5) / 3 = 62.5%.
  EXPECT_NEAR(fit.errors[0].median_after, 0.875, 1e-6);
  EXPECT_NEAR(fit.errors[0].mean_after, 0.625, 1e-6);
}

TEST(EfficiencyFitTest, RowsRepeatingAShapeFitLikeTheSameKernelsListedOnce) {
  // A timing table measures each shape many times. 100,000 rows at 0.8 of ideal, 100,001 at
  // 0.4 and 100,000 at 0.05: the median ratio is 0.4, as with three kernels; the shape is
  // priced once per step, not per row (before, 300,001 rows took about a minute).
  EfficiencyTable base = EfficiencyTable::Ideal();
  base.SetGemmTable(DType::kBF16, SizeClassTable{{0, 1e9}, {0.3, 0.9}});
  std::vector<MeasuredKernel> kernels;
  for (double achieved : {0.8, 0.4, 0.05}) {
    kernels.insert(kernels.end(), achieved == 0.4 ? 100'001 : 100'000,
                   Gemm4096(kIdeal4096 / achieved));
  }
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), base, kernels, 3);
  EXPECT_EQ(fit.usable_kernels, 300'001);
  EXPECT_NEAR(fit.table.GemmTable(DType::kBF16).fractions[1], 0.4, 1e-6);
  ASSERT_EQ(fit.errors.size(), 1u);
  EXPECT_EQ(fit.errors[0].kernels, 300'001);
  // At 0.4: +100% for a third of the rows, 0 for a third, -87.5% for a third.
  EXPECT_NEAR(fit.errors[0].median_after, 0.875, 1e-6);
  EXPECT_NEAR(fit.errors[0].mean_after, (100'000 * 1.0 + 100'000 * 0.875) / 300'001, 1e-6);
}

TEST(EfficiencyFitTest, AClassWithTooFewKernelsKeepsItsDefault) {
  EfficiencyTable base = EfficiencyTable::Ideal();
  MeasuredKernel copy;
  copy.kind = KernelClass::kMemoryBound;
  copy.bytes = 100e6;     // 100 µs at 1 TB/s
  copy.seconds = 200e-6;  // achieved 0.5
  const EfficiencyFit fit =
      FitEfficiencyTable(RoundGpu(), base, {Gemm4096(2 * kIdeal4096), copy, copy, copy}, 3);
  for (const FittedClass& c : fit.classes) {
    if (c.kind == KernelClass::kGemm) {
      EXPECT_FALSE(c.fitted);  // one kernel < 3
      EXPECT_DOUBLE_EQ(c.fraction_after, 1.0);
    } else {
      EXPECT_TRUE(c.fitted);
      EXPECT_NEAR(c.fraction_after, 0.5, 1e-6);
    }
  }
  EXPECT_NEAR(fit.table.HbmFraction(100e6), 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(fit.table.GemmFraction(DType::kBF16, 1e11), 1.0);
  // Nothing reaches 5 kernels: refused rather than a fit from too little.
  EXPECT_THROW(FitEfficiencyTable(RoundGpu(), base, {copy, copy}, 5), UserError);
}

// A larger class left at a default below the fitted smaller one would predict a GEMM four
// times the size slower than the small one: it is raised to the fitted value, and a smaller
// default above a fitted larger class is lowered to it.
TEST(EfficiencyFitTest, ClassesNotFittedDoNotMakeLargerGemmsLessEfficient) {
  EfficiencyTable base = EfficiencyTable::Ideal();
  base.SetGemmTable(DType::kBF16, SizeClassTable{{0, 1e12}, {0.9, 0.1}});
  const MeasuredKernel k = Gemm4096(2 * kIdeal4096);  // 137 GFLOP: class 0, achieved 0.5
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), base, {k, k, k}, 3);
  const SizeClassTable& t = fit.table.GemmTable(DType::kBF16);
  EXPECT_NEAR(t.fractions[0], 0.5, 1e-6);
  EXPECT_NEAR(t.fractions[1], 0.5, 1e-6);  // was 0.1
  base.SetGemmTable(DType::kBF16, SizeClassTable{{0, 1e9}, {0.9, 0.1}});
  const EfficiencyFit lower = FitEfficiencyTable(RoundGpu(), base, {k, k, k}, 3);
  EXPECT_NEAR(lower.table.GemmTable(DType::kBF16).fractions[1], 0.5, 1e-6);
  EXPECT_NEAR(lower.table.GemmTable(DType::kBF16).fractions[0], 0.5, 1e-6);  // was 0.9
}

TEST(EfficiencyFitTest, AttentionFractionsFitForwardAndBackwardSeparately) {
  // Non-causal, batch 1, 100 heads, seq 1024, head dim 128: 800 query blocks = 8 full waves.
  // Forward 2·(128 + 128)·1024²·100 = 53.687 GFLOP = 536.87 µs at 100 TFLOP/s; measured
  // 1073.74 µs -> 0.5. Backward 2·(3·128 + 2·128)·1024²·100 = 134.22 GFLOP = 1342.18 µs;
  // measured 5368.71 µs -> 0.25.
  MeasuredKernel fwd;
  fwd.kind = KernelClass::kAttentionForward;
  fwd.attention = {1, 100, 100, 1024, 128, 128, /*causal=*/false};
  fwd.seconds = 2 * 536.870912e-6;
  MeasuredKernel bwd = fwd;
  bwd.kind = KernelClass::kAttentionBackward;
  bwd.seconds = 4 * 1342.17728e-6;
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), EfficiencyTable::Ideal(), {fwd, bwd}, 1);
  EXPECT_NEAR(fit.table.attention_forward_fraction(), 0.5, 1e-6);
  EXPECT_NEAR(fit.table.attention_backward_fraction(), 0.25, 1e-6);
}

MeasuredKernel Copy(double bytes, double us) {
  MeasuredKernel k;
  k.kind = KernelClass::kMemoryBound;
  k.bytes = bytes;
  k.seconds = us * 1e-6;
  return k;
}

// The ideal table with NVIDIA's default launch floor: launch-bound means shorter than ten of it.
EfficiencyTable IdealWithFloor() {
  EfficiencyTable t = EfficiencyTable::Ideal();
  t.set_min_kernel_seconds(2.8e-6);
  return t;
}

TEST(EfficiencyFitTest, KernelsOnTheLaunchFloorFitTheFloorNotABandwidth) {
  // 1 KB copies take 1 ns at 1 TB/s but were measured at 3, 4 and 5 µs: launch-bound (under
  // two floors, 5.6 µs, and their work under a tenth of their time). The floor takes their
  // median, 4 µs; the class has no kernel whose time is its work, so it keeps its default
  // instead of a fraction near zero.
  std::vector<MeasuredKernel> copies = {Copy(1e3, 3), Copy(1e3, 4), Copy(1e3, 5)};
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), IdealWithFloor(), copies, 3);
  EXPECT_TRUE(fit.floor_fitted);
  EXPECT_EQ(fit.floor_kernels, 3);
  EXPECT_NEAR(fit.floor_after, 4e-6, 1e-11);
  ASSERT_EQ(fit.classes.size(), 1u);
  EXPECT_FALSE(fit.classes[0].fitted);
  EXPECT_EQ(fit.classes[0].work_bound, 0);
  EXPECT_DOUBLE_EQ(fit.table.HbmFraction(1e3), 1.0);
}

TEST(EfficiencyFitTest, OneSlowShortCopyDoesNotSetTheBandwidthOfItsClass) {
  // The B200 eager trace's case: tiny copies on the floor, and one 0.2 MB copy at 3.5 µs
  // (0.2 µs of work at 1 TB/s, 6% of its time). Fitting the class to it would make every
  // copy of the class run at 6% of HBM bandwidth; it is launch-bound, so the class keeps 1.0.
  std::vector<MeasuredKernel> copies = {Copy(1e3, 3), Copy(1e3, 4), Copy(2e5, 3.5), Copy(1e3, 5)};
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), IdealWithFloor(), copies, 1);
  EXPECT_EQ(fit.floor_kernels, 4);
  EXPECT_FALSE(fit.classes[0].fitted);
  EXPECT_DOUBLE_EQ(fit.table.HbmFraction(2e5), 1.0);
  // The floor is the median of the four: (3.5 + 4) / 2 µs, anywhere between them for LAD.
  EXPECT_GE(fit.floor_after, 3.5e-6 - 1e-11);
  EXPECT_LE(fit.floor_after, 4e-6 + 1e-11);
}

TEST(EfficiencyFitTest, ALongKernelNeverSetsTheLaunchFloor) {
  // The bert-small GEMM.csv's case: a 41 µs kernel the table prices at 16 µs is slow at its
  // work, not a launch; with no launch-bound kernel the floor keeps its default (before, the
  // fit moved the floor to 18 µs for that one kernel).
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), IdealWithFloor(),
                                               {Copy(16e6, 41), Copy(16e6, 40), Copy(16e6, 42)}, 3);
  EXPECT_EQ(fit.floor_kernels, 0);
  EXPECT_FALSE(fit.floor_fitted);
  EXPECT_DOUBLE_EQ(fit.floor_after, 2.8e-6);
  // 16 MB in 41 µs: 16 µs of work at 1 TB/s, so the class fits 16 / 41.
  EXPECT_NEAR(fit.table.HbmFraction(16e6), 16.0 / 41.0, 1e-6);
}

TEST(EfficiencyFitTest, ASlowLongGemmInformsItsClassNotTheFloor) {
  // At 5% of peak a 4096^3 GEMM's priced work is under a tenth of its time, but it runs for
  // 30 ms: far longer than ten launch floors, so it is slow work.
  const MeasuredKernel slow = Gemm4096(kIdeal4096 / 0.05);
  EXPECT_LT(WorkShare(RoundGpu(), IdealWithFloor(), slow), kWorkBoundShare);
  EXPECT_EQ(ClassifyKernel(RoundGpu(), IdealWithFloor(), slow), KernelBound::kWork);
}

TEST(EfficiencyFitTest, ShortKernelsSeveralFloorsLongInformNothing) {
  // The corpus's MI300X normalisation test: 1 MB norm kernels at 11-22 us (0.3 us of work at
  // 5.3 TB/s x 0.566) among launches of 3-4 us. Taken as launches they raised the floor to
  // 13 us; between 2 and 10 floors (5.6-28 us here) they inform neither the floor nor a class.
  std::vector<MeasuredKernel> kernels = {Copy(1e3, 3),  Copy(1e3, 3.5), Copy(1e3, 4), Copy(1e6, 11),
                                         Copy(1e6, 15), Copy(1e6, 22),  Copy(1e6, 22)};
  EXPECT_EQ(ClassifyKernel(RoundGpu(), IdealWithFloor(), kernels[3]), KernelBound::kUnexplained);
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), IdealWithFloor(), kernels, 3);
  EXPECT_EQ(fit.floor_kernels, 3);
  EXPECT_EQ(fit.unexplained_kernels, 4);
  EXPECT_NEAR(fit.floor_after, 3.5e-6, 1e-11);
  for (const FittedClass& c : fit.classes) EXPECT_FALSE(c.fitted);
}

TEST(EfficiencyFitTest, OnlyTheAskedClassesMoveButEveryKernelInformsTheFloor) {
  // --op-classes floor: the copies' class keeps its default, the floor is fitted on them.
  const std::vector<MeasuredKernel> copies = {Copy(1e3, 3),   Copy(1e3, 4),   Copy(1e3, 5),
                                              Copy(16e6, 32), Copy(16e6, 32), Copy(16e6, 32)};
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), IdealWithFloor(), copies, 3, true, {});
  EXPECT_TRUE(fit.floor_fitted);
  EXPECT_NEAR(fit.floor_after, 4e-6, 1e-11);
  for (const FittedClass& c : fit.classes) {
    EXPECT_FALSE(c.fitted);
    EXPECT_FALSE(c.asked);
  }
  EXPECT_DOUBLE_EQ(fit.table.HbmFraction(16e6), 1.0);
}

TEST(EfficiencyFitTest, KernelsTheGpuCannotPriceAreLeftOut) {
  MeasuredKernel fp8 = Gemm4096(1e-3);
  fp8.dtype = DType::kFP8;  // RoundGpu has no fp8 peak
  MeasuredKernel zero = Gemm4096(0);
  EXPECT_FALSE(CanPredict(RoundGpu(), fp8));
  EXPECT_FALSE(CanPredict(RoundGpu(), zero));
  const EfficiencyFit fit = FitEfficiencyTable(RoundGpu(), EfficiencyTable::Ideal(),
                                               {fp8, zero, Gemm4096(2 * kIdeal4096)}, 1);
  EXPECT_EQ(fit.usable_kernels, 1);
}

}  // namespace
}  // namespace sextant
