#include "trace/op_breakdown.h"

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// One step on one thread (µs):
//   ProfilerStep#1 [0, 200)
//     aten::linear [10, 100)               dims A
//       aten::t [12, 15)                   no GPU work
//       aten::addmm [20, 60)               dims B
//         launch [25, 30) -> gemm  30 µs
//         launch [35, 38) -> splitK 5 µs
//       launch [65, 68)   -> bias  4 µs    (launched by linear itself)
//     aten::addmm [110, 150)               dims C, directly under the step
//       launch [115, 118) -> gemm  20 µs
//     aten::relu [160, 170)                no GPU work
//     launch [180, 182)   -> orphan 6 µs   (no op around its launch)
constexpr const char* kLinearDims = R"("Input Dims": [[4, 8], [16, 8], [16]])";
constexpr const char* kAddmmDims = R"("Input Dims": [[16], [4, 8], [8, 16]])";
constexpr const char* kAddmm2Dims = R"("Input Dims": [[32], [2, 8], [8, 32]])";
constexpr const char* kTypes = R"(, "Input type": ["float", "float", "float"])";

TraceData StepTrace() {
  return KinetoTraceBuilder()
      .Annotation("ProfilerStep#1", 0, 200)
      .CpuOp("aten::linear", 10, 90, std::string(kLinearDims) + kTypes)
      .CpuOp("aten::t", 12, 3)
      .CpuOp("aten::addmm", 20, 40, std::string(kAddmmDims) + kTypes)
      .Launch(25, 5, 1)
      .Launch(35, 3, 2)
      .Launch(65, 3, 3)
      .CpuOp("aten::addmm", 110, 40, std::string(kAddmm2Dims) + kTypes)
      .Launch(115, 3, 4)
      .CpuOp("aten::relu", 160, 10)
      .Launch(180, 2, 5)
      .Kernel("gemm", 40, 30, 1)
      .Kernel("splitK", 70, 5, 2)
      .Kernel("bias", 80, 4, 3)
      .Kernel("gemm", 120, 20, 4)
      .Kernel("orphan", 185, 6, 5)
      .Parse();
}

int32_t FindCpu(const TraceData& t, std::string_view name, int64_t ts_us) {
  for (size_t i = 0; i < t.cpu.size(); ++i) {
    if (t.Name(t.cpu[i].name) == name && t.cpu[i].ts_ns == ts_us * 1000)
      return static_cast<int32_t>(i);
  }
  ADD_FAILURE() << "no " << name << " at " << ts_us << " us";
  return 0;
}

TEST(OpBreakdownTest, DirectAndSubtreeKernelTimePerEvent) {
  TraceData t = StepTrace();
  OpKernelTimes times = ComputeOpKernelTimes(t);
  int32_t linear = FindCpu(t, "aten::linear", 10), addmm = FindCpu(t, "aten::addmm", 20);
  int32_t addmm2 = FindCpu(t, "aten::addmm", 110), step = FindCpu(t, "ProfilerStep#1", 0);
  int32_t transpose = FindCpu(t, "aten::t", 12);
  // addmm: gemm 30 + splitK 5; linear: bias 4 directly, + addmm's 35 below it.
  EXPECT_EQ(times.direct_ns[addmm], 35'000);
  EXPECT_EQ(times.kernel_count[addmm], 2);
  EXPECT_EQ(times.subtree_ns[addmm], 35'000);
  EXPECT_EQ(times.direct_ns[linear], 4'000);
  EXPECT_EQ(times.kernel_count[linear], 1);
  EXPECT_EQ(times.subtree_ns[linear], 39'000);
  EXPECT_EQ(times.direct_ns[addmm2], 20'000);
  EXPECT_EQ(times.subtree_ns[transpose], 0);
  // The step holds 39 + 20; the orphan kernel belongs to no op, so to no subtree either.
  EXPECT_EQ(times.direct_ns[step], 0);
  EXPECT_EQ(times.subtree_ns[step], 59'000);
}

// FlashAttention 3 on Hopper launches its attention kernel with programmatic dependent launch:
// it starts while the scheduling kernel before it still runs. An op's kernel time is the busy
// time of its kernels (TraceLens's GPUEventAnalyser), not their summed durations (µs):
//   op [0, 50) -> prepare [10, 13.2) and attention [11.4, 65.5): busy 55.5, summed 57.3
//   its parent [0, 100) also launches a copy [70, 75): subtree 60.5
TEST(OpBreakdownTest, OverlappingKernelsCountOnceInDirectAndSubtreeTime) {
  TraceData t = KinetoTraceBuilder()
                    .CpuOp("outer", 0, 100)
                    .CpuOp("flash_attn_3::fwd", 0, 50)
                    .Launch(1, 2, 1)
                    .Launch(4, 2, 2)
                    .Launch(60, 2, 3)
                    .Kernel("prepare_varlen_num_blocks_kernel", 10, 3.2, 1)
                    .Kernel("FlashAttnFwdSm90", 11.4, 54.1, 2)
                    .Kernel("copy", 70, 5, 3)
                    .Parse();
  const OpKernelTimes times = ComputeOpKernelTimes(t);
  const int32_t attention = FindCpu(t, "flash_attn_3::fwd", 0), outer = FindCpu(t, "outer", 0);
  EXPECT_EQ(times.direct_ns[attention], 55'500);
  EXPECT_EQ(times.kernel_count[attention], 2);
  EXPECT_EQ(times.subtree_ns[attention], 55'500);
  EXPECT_EQ(times.direct_ns[outer], 5'000);
  EXPECT_EQ(times.subtree_ns[outer], 60'500);
}

// Kernels of two sibling ops overlap (launched onto two streams): each op's own time is its
// kernel, and their parent's subtree is the union, not the sum (µs):
//   parent [0, 100): a [0, 40) -> k1 [10, 30) on stream 7; b [40, 80) -> k2 [25, 50) on 8
//   parent subtree [10, 50) = 40, not 20 + 25
TEST(OpBreakdownTest, OverlappingKernelsOfSiblingOpsCountOnceInTheirParent) {
  TraceData t = KinetoTraceBuilder()
                    .CpuOp("parent", 0, 100)
                    .CpuOp("a", 0, 40)
                    .Launch(1, 2, 1)
                    .CpuOp("b", 40, 40)
                    .Launch(41, 2, 2)
                    .Kernel("k1", 10, 20, 1, /*stream=*/7)
                    .Kernel("k2", 25, 25, 2, /*stream=*/8)
                    .Parse();
  const OpKernelTimes times = ComputeOpKernelTimes(t);
  const int32_t parent = FindCpu(t, "parent", 0), a = FindCpu(t, "a", 0), b = FindCpu(t, "b", 40);
  EXPECT_EQ(times.subtree_ns[a], 20'000);
  EXPECT_EQ(times.subtree_ns[b], 25'000);
  EXPECT_EQ(times.direct_ns[parent], 0);
  EXPECT_EQ(times.subtree_ns[parent], 40'000);
}

TEST(OpBreakdownTest, ByNameSumsCallsAndDropsOpsWithoutGpuWork) {
  TraceData t = StepTrace();
  std::vector<OpStats> ops = SummarizeOps(t, ComputeOpKernelTimes(t), /*by_shape=*/false);
  // aten::t and aten::relu launch nothing; the step is an annotation, not an op.
  ASSERT_EQ(ops.size(), 2u);
  // Largest direct time first: addmm 35 + 20 = 55 µs, then linear 4 µs.
  EXPECT_EQ(ops[0].name, "aten::addmm");
  EXPECT_EQ(ops[0].count, 2);
  EXPECT_EQ(ops[0].cpu_ns, 80'000);  // 40 + 40
  EXPECT_EQ(ops[0].direct_kernel_ns, 55'000);
  EXPECT_EQ(ops[0].subtree_kernel_ns, 55'000);
  EXPECT_EQ(ops[0].kernels, 3);
  EXPECT_EQ(ops[0].input_dims, "");  // not grouped by shape
  EXPECT_EQ(ops[0].category, KernelCategory::kGemm);
  EXPECT_TRUE(ops[0].category_known);
  EXPECT_EQ(ops[1].name, "aten::linear");
  EXPECT_EQ(ops[1].count, 1);
  EXPECT_EQ(ops[1].cpu_ns, 90'000);
  EXPECT_EQ(ops[1].direct_kernel_ns, 4'000);
  EXPECT_EQ(ops[1].subtree_kernel_ns, 39'000);
  EXPECT_EQ(ops[1].kernels, 1);
  EXPECT_EQ(ops[1].parent, "");  // the enclosing ProfilerStep is not an op
}

TEST(OpBreakdownTest, AnOpThatCallsItselfCountsOnce) {
  // aten::arange [0, 50) → aten::arange(out=) [5, 40) → launch → fill 3 µs; then a second,
  // separate aten::arange [60, 80) → launch → fill 2 µs. Two calls, 5 µs direct: the nested
  // one is part of the first call (TraceLens's ops_summary counts aten::arange once per call).
  TraceData t = KinetoTraceBuilder()
                    .CpuOp("aten::arange", 0, 50)
                    .CpuOp("aten::arange", 5, 35)
                    .Launch(10, 2, 1)
                    .CpuOp("aten::arange", 60, 20)
                    .Launch(65, 2, 2)
                    .Kernel("fill", 20, 3, 1)
                    .Kernel("fill", 70, 2, 2)
                    .Parse();
  std::vector<OpStats> ops = SummarizeOps(t, ComputeOpKernelTimes(t), /*by_shape=*/false);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].count, 2);
  EXPECT_EQ(ops[0].cpu_ns, 70'000);  // 50 + 20: the nested call's time is inside the outer one
  EXPECT_EQ(ops[0].direct_kernel_ns, 5'000);
  EXPECT_EQ(ops[0].subtree_kernel_ns, 5'000);
  EXPECT_EQ(ops[0].kernels, 2);
}

TEST(OpBreakdownTest, ByShapeSeparatesCallsAndNamesTheirParents) {
  TraceData t = StepTrace();
  std::vector<OpStats> ops = SummarizeOps(t, ComputeOpKernelTimes(t), /*by_shape=*/true);
  ASSERT_EQ(ops.size(), 3u);
  // addmm B 35 µs, addmm C 20 µs, linear 4 µs.
  EXPECT_EQ(ops[0].name, "aten::addmm");
  EXPECT_EQ(ops[0].input_dims, "[[16], [4, 8], [8, 16]]");
  EXPECT_EQ(ops[0].input_types, R"(["float", "float", "float"])");
  EXPECT_EQ(ops[0].direct_kernel_ns, 35'000);
  EXPECT_EQ(ops[0].parent, "aten::linear");
  EXPECT_EQ(ops[1].name, "aten::addmm");
  EXPECT_EQ(ops[1].input_dims, "[[32], [2, 8], [8, 32]]");
  EXPECT_EQ(ops[1].direct_kernel_ns, 20'000);
  EXPECT_EQ(ops[1].parent, "");
  EXPECT_EQ(ops[2].name, "aten::linear");
  EXPECT_EQ(ops[2].input_dims, "[[4, 8], [16, 8], [16]]");
}

// The two tables from one pass are the two SummarizeOps makes, nested same-name calls
// included.
TEST(OpBreakdownTest, BothTablesAtOnceAreTheTablesMadeOneByOne) {
  TraceData t = KinetoTraceBuilder()
                    .CpuOp("aten::linear", 10, 90, std::string(kLinearDims) + kTypes)
                    .CpuOp("aten::linear", 12, 80, std::string(kAddmmDims) + kTypes)
                    .Launch(25, 5, 1)
                    .CpuOp("aten::linear", 110, 40, std::string(kAddmm2Dims) + kTypes)
                    .Launch(115, 3, 2)
                    .Kernel("gemm", 40, 30, 1)
                    .Kernel("gemm", 120, 20, 2)
                    .Parse();
  const OpKernelTimes times = ComputeOpKernelTimes(t);
  const OpSummaries both = SummarizeOpsByShapeAndName(t, times);
  for (bool by_shape : {true, false}) {
    const std::vector<OpStats> one = SummarizeOps(t, times, by_shape);
    const std::vector<OpStats>& from_both = by_shape ? both.by_shape : both.by_name;
    ASSERT_EQ(one.size(), from_both.size()) << by_shape;
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(one[i].name, from_both[i].name);
      EXPECT_EQ(one[i].input_dims, from_both[i].input_dims);
      EXPECT_EQ(one[i].parent, from_both[i].parent);
      EXPECT_EQ(one[i].count, from_both[i].count);
      EXPECT_EQ(one[i].cpu_ns, from_both[i].cpu_ns);
      EXPECT_EQ(one[i].direct_kernel_ns, from_both[i].direct_kernel_ns);
      EXPECT_EQ(one[i].subtree_kernel_ns, from_both[i].subtree_kernel_ns);
      EXPECT_EQ(one[i].kernels, from_both[i].kernels);
    }
  }
  EXPECT_EQ(both.by_shape.size(), 2u);  // the nested call counts in the outer one's row
  EXPECT_EQ(both.by_name.size(), 1u);
}

TEST(OpBreakdownTest, EqualDirectTimeIsOrderedBySubtreeTime) {
  // outer [0, 50) launches k 10 µs itself and holds inner [5, 20) launching k 10 µs:
  // both have direct 10 µs; outer's subtree is 20 µs, so outer comes first.
  TraceData t = KinetoTraceBuilder()
                    .CpuOp("my::outer", 0, 50)
                    .CpuOp("my::inner", 5, 15)
                    .Launch(6, 1, 1)
                    .Launch(30, 1, 2)
                    .Kernel("k", 10, 10, 1)
                    .Kernel("k", 40, 10, 2)
                    .Parse();
  std::vector<OpStats> ops = SummarizeOps(t, ComputeOpKernelTimes(t), false);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "my::outer");
  EXPECT_EQ(ops[0].subtree_kernel_ns, 20'000);
  EXPECT_EQ(ops[1].name, "my::inner");
  EXPECT_EQ(ops[1].parent, "my::outer");
  EXPECT_FALSE(ops[1].category_known);  // a custom op name says nothing
}

TEST(OpBreakdownTest, TreePathsParentsFirstAndCutAtMaxDepth) {
  TraceData t = StepTrace();
  OpKernelTimes times = ComputeOpKernelTimes(t);
  std::vector<OpPathStats> tree = SummarizeOpTree(t, times);
  ASSERT_EQ(tree.size(), 3u);
  // Sorted by path, so a parent precedes its children.
  EXPECT_EQ(tree[0].path, "aten::addmm");
  EXPECT_EQ(tree[0].depth, 0);
  EXPECT_EQ(tree[0].direct_kernel_ns, 20'000);
  EXPECT_EQ(tree[1].path, "aten::linear");
  EXPECT_EQ(tree[1].subtree_kernel_ns, 39'000);
  EXPECT_EQ(tree[2].path, "aten::linear > aten::addmm");
  EXPECT_EQ(tree[2].depth, 1);
  EXPECT_EQ(tree[2].count, 1);
  EXPECT_EQ(tree[2].direct_kernel_ns, 35'000);
  // Depth 1 is beyond max_depth 1; its time stays in aten::linear's subtree.
  std::vector<OpPathStats> top = SummarizeOpTree(t, times, /*max_depth=*/1);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[1].path, "aten::linear");
  EXPECT_EQ(top[1].subtree_kernel_ns, 39'000);
}

}  // namespace
}  // namespace sextant
