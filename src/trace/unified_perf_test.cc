#include "trace/unified_perf.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trace/gpu_timeline.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

const UnifiedPerfRow* Find(const std::vector<UnifiedPerfRow>& rows, const std::string& name) {
  for (const auto& row : rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// One thread (µs):
//   aten::linear [0, 20] > aten::addmm [1, 19] (shapes recorded) launches a 10 µs GEMM;
//   aten::mse_loss [30, 50] launches a 4 µs kernel itself and holds aten::mean [35, 45],
//     which launches a 3 µs kernel;
//   a 2 µs kernel is launched outside any op;
//   aten::mm [60, 70] (no shapes) launches two kernels that overlap on two streams:
//     [100, 130] and [110, 125].
TEST(SummarizeUnifiedPerfTest, TakesModelledOpsAndLaunchersAndCoversEveryKernelOnce) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::linear", 0, 20)
          .CpuOp("aten::addmm", 1, 18,
                 R"("Input Dims": [[512], [141, 512], [512, 512], [], []], )"
                 R"("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", )"
                 R"("Scalar", "Scalar"], "Input Strides": [[1], [512, 1], [1, 512], [], []], )"
                 R"("Concrete Inputs": ["", "", "", "1", "1"])")
          .Launch(2, 1, 1)
          .CpuOp("aten::mse_loss", 30, 20)
          .Launch(31, 1, 2)
          .CpuOp("aten::mean", 35, 10)
          .Launch(36, 1, 3)
          .Launch(55, 1, 4)
          .CpuOp("aten::mm", 60, 10)
          .Launch(61, 1, 5)
          .Launch(62, 1, 6)
          .Kernel("Cijk_gemm", 5, 10, 1)
          .Kernel("loss_kernel", 32, 4, 2)
          .Kernel("reduce_kernel", 40, 3, 3)
          .Kernel("stray_kernel", 56, 2, 4)
          .Kernel("gemm_a", 100, 30, 5, 7)
          .Kernel("gemm_b", 110, 15, 6, 8)
          .Parse();
  const auto rows = SummarizeUnifiedPerf(trace, TimelineEvents(trace), {});
  ASSERT_EQ(rows.size(), 5u);
  // Largest kernel time first; the mm's two kernels count as their union, 30 µs, not 45.
  EXPECT_EQ(rows[0].name, "aten::mm");
  EXPECT_DOUBLE_EQ(rows[0].kernel_us.sum, 30.0);
  // Modelled but without shapes: kept, with its kernel time and no FLOPs (TraceLens keeps a
  // row whose perf model raises on a missing record).
  EXPECT_TRUE(rows[0].has_perf_model);
  EXPECT_TRUE(std::isnan(rows[0].gflops));
  EXPECT_TRUE(std::isnan(rows[0].tflops.mean));

  // aten::linear has no model but a modelled op below: the addmm is the row.
  EXPECT_EQ(Find(rows, "aten::linear"), nullptr);
  const UnifiedPerfRow* addmm = Find(rows, "aten::addmm");
  ASSERT_NE(addmm, nullptr);
  EXPECT_EQ(addmm->category, "GEMM");
  EXPECT_TRUE(addmm->has_perf_model);
  // 2·M·N·K for the product and M·N for the bias (TraceLens's aten_addmm), as its bert-small
  // report prints for this shape: 0.0739968 GFLOP.
  const double flops = 2.0 * 141 * 512 * 512 + 141.0 * 512;
  EXPECT_NEAR(addmm->gflops, flops / 1e9, 1e-12);
  EXPECT_DOUBLE_EQ(addmm->kernel_us.sum, 10.0);
  EXPECT_DOUBLE_EQ(addmm->duration_us.sum, 18.0);               // CPU time of the call
  EXPECT_NEAR(addmm->tflops.mean, flops / 1e12 / 10e-6, 1e-9);  // in 10 µs
  EXPECT_EQ(addmm->input_dims, "((512,), (141, 512), (512, 512), (), ())");

  // aten::mse_loss is opened for its modelled child; its own kernel gets a synthetic row
  // carrying the op's arguments and CPU time.
  const UnifiedPerfRow* mean = Find(rows, "aten::mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_DOUBLE_EQ(mean->kernel_us.sum, 3.0);
  const UnifiedPerfRow* own = Find(rows, "aten::mse_loss->loss_kernel (Synthetic Op)");
  ASSERT_NE(own, nullptr);
  EXPECT_DOUBLE_EQ(own->kernel_us.sum, 4.0);
  EXPECT_DOUBLE_EQ(own->duration_us.sum, 20.0);
  EXPECT_FALSE(own->has_perf_model);
  EXPECT_EQ(own->category, "other");  // not an ATen element-wise kernel
  // A launch outside any op: a row under the runtime call.
  const UnifiedPerfRow* stray = Find(rows, "cudaLaunchKernel->stray_kernel (Synthetic Op)");
  ASSERT_NE(stray, nullptr);
  EXPECT_DOUBLE_EQ(stray->kernel_us.sum, 2.0);

  // Every kernel counted once: 10 + 4 + 3 + 2 + 30.
  double total = 0;
  for (const auto& row : rows) total += row.kernel_us.sum;
  EXPECT_DOUBLE_EQ(total, 49.0);
}

// Calls of one group line their kernels up by position; the positions' statistics use
// numpy's (population) standard deviation, and the shortest total comes first.
TEST(SummarizeUnifiedPerfTest, KernelDetailsByPosition) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::gelu", 0, 10)
                        .Launch(1, 1, 1)
                        .Launch(2, 1, 2)
                        .CpuOp("aten::gelu", 20, 10)
                        .Launch(21, 1, 3)
                        .Launch(22, 1, 4)
                        .Kernel("big", 3, 6, 1)
                        .Kernel("small", 9.5, 1, 2)
                        .Kernel("big", 23, 8, 3)
                        .Kernel("small", 31.5, 1, 4)
                        .Parse();
  const auto rows = SummarizeUnifiedPerf(trace, TimelineEvents(trace), {});
  ASSERT_EQ(rows.size(), 1u);
  const auto& kernels = rows[0].kernels;
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "small");
  EXPECT_EQ(kernels[1].name, "big");
  EXPECT_EQ(kernels[1].us.n, 2);
  EXPECT_DOUBLE_EQ(kernels[1].us.sum, 14.0);
  EXPECT_DOUBLE_EQ(kernels[1].us.std, 1.0);  // |6 - 7| and |8 - 7| over n = 2
  EXPECT_DOUBLE_EQ(rows[0].kernel_us.sum, 16.0);
  EXPECT_DOUBLE_EQ(rows[0].kernel_us.std, std::sqrt(2.0));  // 7 and 9: sample std
}

TEST(SummarizeUnifiedPerfTest, TraceWithoutOpsHasNoRows) {
  TraceData trace = KinetoTraceBuilder().Launch(1, 1, 1).Kernel("k", 2, 1, 1).Parse();
  EXPECT_TRUE(SummarizeUnifiedPerf(trace, TimelineEvents(trace), {}).empty());
}

}  // namespace
}  // namespace sextant
