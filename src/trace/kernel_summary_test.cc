#include "trace/kernel_summary.h"

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

constexpr const char* kGemm =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";
constexpr const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
    "3ul>)";
constexpr const char* kFill =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, 1>)";

// (µs) aten::mm [0, 10) launches the GEMM twice (10, 30 µs) and the fill once (1 µs);
// aten::add [20, 30) launches the GEMM once (20) and the add four times (1, 2, 6, 3);
// aten::zero_ [40, 45) launches the fill once (1 µs); a top-level memcpy takes 5 µs.
TraceData MixedTrace() {
  KinetoTraceBuilder b;
  b.CpuOp("aten::mm", 0, 10).Launch(1, 1, 1).Launch(3, 1, 2).Launch(5, 1, 3);
  b.CpuOp("aten::add", 20, 10);
  for (int i = 0; i < 5; ++i) b.Launch(21 + i, 0.5, 4 + i);
  b.CpuOp("aten::zero_", 40, 5).Launch(41, 1, 9).Runtime("cudaMemcpyAsync", 50, 1, 10);
  return b.Kernel(kGemm, 100, 10, 1)
      .Kernel(kGemm, 110, 30, 2)
      .Kernel(kFill, 140, 1, 3)
      .Kernel(kGemm, 150, 20, 4)
      .Kernel(kAdd, 170, 1, 5)
      .Kernel(kAdd, 171, 2, 6)
      .Kernel(kAdd, 173, 6, 7)
      .Kernel(kAdd, 179, 3, 8)
      .Kernel(kFill, 182, 1, 9)
      .Memcpy(190, 5, 10)
      .Parse();
}

TEST(KernelSummaryTest, PerNameCountsTimesAndParents) {
  std::vector<KernelStats> k = SummarizeKernels(MixedTrace());
  ASSERT_EQ(k.size(), 4u);
  // Largest total first: GEMM 60, add 12, memcpy 5, fill 2.
  EXPECT_EQ(k[0].name, kGemm);
  EXPECT_EQ(k[0].count, 3);
  EXPECT_EQ(k[0].total_ns, 60'000);
  EXPECT_DOUBLE_EQ(k[0].mean_ns, 20'000);
  EXPECT_DOUBLE_EQ(k[0].median_ns, 20'000);  // 10 [20] 30
  EXPECT_EQ(k[0].min_ns, 10'000);
  EXPECT_EQ(k[0].max_ns, 30'000);
  EXPECT_EQ(k[0].parent_op, "aten::mm");  // 2 launches against aten::add's 1
  EXPECT_EQ(k[0].category, KernelCategory::kGemm);
  EXPECT_EQ(k[1].name, kAdd);
  EXPECT_EQ(k[1].count, 4);
  EXPECT_EQ(k[1].total_ns, 12'000);
  EXPECT_DOUBLE_EQ(k[1].mean_ns, 3'000);
  EXPECT_DOUBLE_EQ(k[1].median_ns, 2'500);  // 1 [2 3] 6
  EXPECT_EQ(k[1].parent_op, "aten::add");
  EXPECT_EQ(k[1].category, KernelCategory::kElementwise);  // aten::add says nothing
  EXPECT_EQ(k[2].kind, GpuKind::kMemcpy);
  EXPECT_EQ(k[2].total_ns, 5'000);
  EXPECT_EQ(k[2].parent_op, "");  // launched outside any op
  EXPECT_EQ(k[2].category, KernelCategory::kMemory);
  // The fill is GEMM work under aten::mm and elementwise under aten::zero_: a 1-1 tie goes to
  // the first category in enum order.
  EXPECT_EQ(k[3].name, kFill);
  EXPECT_EQ(k[3].count, 2);
  EXPECT_EQ(k[3].category, KernelCategory::kGemm);
}

TEST(KernelSummaryTest, CategoryTotals) {
  std::vector<CategoryStats> c = SummarizeCategories(SummarizeKernels(MixedTrace()));
  ASSERT_EQ(c.size(), 3u);
  // GEMM: 60 + the fill's 2 (3 + 2 activities); elementwise 12 (4); memory 5 (1).
  EXPECT_EQ(c[0].category, KernelCategory::kGemm);
  EXPECT_EQ(c[0].count, 5);
  EXPECT_EQ(c[0].total_ns, 62'000);
  EXPECT_EQ(c[1].category, KernelCategory::kElementwise);
  EXPECT_EQ(c[1].count, 4);
  EXPECT_EQ(c[1].total_ns, 12'000);
  EXPECT_EQ(c[2].category, KernelCategory::kMemory);
  EXPECT_EQ(c[2].total_ns, 5'000);
}

TEST(KernelSummaryTest, Median) {
  std::vector<int64_t> odd = {9, 1, 5};
  EXPECT_DOUBLE_EQ(Median(odd), 5);
  std::vector<int64_t> even = {8, 2, 6, 4};
  EXPECT_DOUBLE_EQ(Median(even), 5);  // (4 + 6) / 2
  std::vector<int64_t> none;
  EXPECT_DOUBLE_EQ(Median(none), 0);
}

}  // namespace
}  // namespace sextant
