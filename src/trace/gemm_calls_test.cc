#include "trace/gemm_calls.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

TEST(SummarizeCallsTest, PandasStatisticsOverNumbers) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, median 4.5, sample std sqrt(32 / 7).
  CallStats s = SummarizeCalls({2, 4, 4, 4, 5, 5, 7, 9, NAN});
  EXPECT_EQ(s.n, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(32.0 / 7));
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.sum, 40);
  CallStats one = SummarizeCalls({3});
  EXPECT_DOUBLE_EQ(one.median, 3);
  EXPECT_TRUE(std::isnan(one.std)) << "pandas' sample std of one value";
  EXPECT_TRUE(std::isnan(SummarizeCalls({NAN}).mean));
}

// aten::linear -> aten::addmm twice with the same operands (10 and 30 µs of kernels), and an
// aten::mm with transposed B: the sheet has the primitives, not the linear around them.
TEST(SummarizeGemmCallsTest, GroupsPrimitiveCallsByShapeLayoutAndDtype) {
  const std::string addmm_args =
      R"("Input Dims": [[64], [8, 32], [32, 64]], )"
      R"("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"], )"
      R"("Input Strides": [[1], [32, 1], [1, 32]], "Concrete Inputs": ["", "", ""])";
  const std::string mm_args =
      R"("Input Dims": [[128, 256], [256, 512]], "Input type": ["float", "float"], )"
      R"("Input Strides": [[256, 1], [1, 256]])";
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::linear", 0, 20, addmm_args)
                        .CpuOp("aten::addmm", 1, 10, addmm_args)
                        .Launch(2, 1, 1)
                        .CpuOp("aten::linear", 30, 20, addmm_args)
                        .CpuOp("aten::addmm", 31, 10, addmm_args)
                        .Launch(32, 1, 2)
                        .CpuOp("aten::mm", 60, 10, mm_args)
                        .Launch(61, 1, 3)
                        .Kernel("gemm_a", 5, 10, 1)
                        .Kernel("gemm_a", 40, 30, 2)
                        .Kernel("gemm_b", 80, 4, 3)
                        .Parse();
  auto groups = SummarizeGemmCalls(trace, ComputeOpKernelTimes(trace), {});
  ASSERT_EQ(groups.size(), 2u);
  const GemmCallGroup& addmm = groups[0];
  EXPECT_EQ(addmm.name, "aten::addmm");
  EXPECT_EQ(addmm.m, 8);
  EXPECT_EQ(addmm.n, 64);
  EXPECT_EQ(addmm.k, 32);
  EXPECT_EQ(addmm.batch, 1);
  EXPECT_TRUE(addmm.bias);
  EXPECT_EQ(addmm.stride_a, "(32, 1)");
  EXPECT_EQ(addmm.stride_b, "(1, 32)");
  EXPECT_EQ(addmm.dtype_a_b, "('c10::BFloat16', 'c10::BFloat16')");
  EXPECT_EQ(addmm.input_dims, "[[64], [8, 32], [32, 64]]");
  EXPECT_EQ(addmm.concrete_inputs, "['', '', '']");
  // 2·8·64·32 + 8·64 FLOPs; (8·32 + 32·64 + 8·64 + 64)·2 bytes.
  EXPECT_DOUBLE_EQ(addmm.gflops, (2.0 * 8 * 64 * 32 + 8 * 64) / 1e9);
  EXPECT_DOUBLE_EQ(addmm.bytes, (8 * 32 + 32 * 64 + 8 * 64 + 64) * 2.0);
  EXPECT_EQ(addmm.kernel_us.n, 2);
  EXPECT_DOUBLE_EQ(addmm.kernel_us.sum, 40);
  EXPECT_DOUBLE_EQ(addmm.kernel_us.median, 20);
  EXPECT_DOUBLE_EQ(addmm.tflops.max, (2.0 * 8 * 64 * 32 + 8 * 64) / 1e12 / 10e-6);
  const GemmCallGroup& mm = groups[1];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_FALSE(mm.bias);
  EXPECT_EQ(mm.stride_b, "(1, 256)");
  EXPECT_EQ(mm.dtype_a_b, "('float', 'float')");
  EXPECT_TRUE(std::isnan(mm.kernel_us.std));
}

TEST(SummarizeGemmCallsTest, CallsWithoutShapesAreLeftOut) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mm", 0, 10)
                        .Launch(1, 1, 1)
                        .Kernel("gemm", 5, 10, 1)
                        .Parse();
  EXPECT_TRUE(SummarizeGemmCalls(trace, ComputeOpKernelTimes(trace), {}).empty());
}

}  // namespace
}  // namespace sextant
