#include "trace/short_kernels.h"

#include <gtest/gtest.h>

#include "trace/op_arguments.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// aten::add (shapes, strides and concrete inputs recorded) launches K twice, 2 and 3 us;
// aten::mul (no strides recorded) launches M, 4 us; aten::mm launches G, 20 us (not short).
TraceData SmallTrace() {
  return KinetoTraceBuilder()
      .CpuOp("aten::add", 0, 10,
             R"("Input Dims": [[4], [4]], "Input Strides": [[1], [1]], )"
             R"("Concrete Inputs": ["", ""])")
      .Launch(1, 2, 1)
      .Launch(5, 2, 2)
      .CpuOp("aten::mul", 20, 10, R"("Input Dims": [[4], []], "Concrete Inputs": ["", "2"])")
      .Launch(21, 2, 3)
      .CpuOp("aten::mm", 40, 10,
             R"("Input Dims": [[4, 4], [4, 4]], "Input Strides": [[4, 1], [4, 1]], )"
             R"("Concrete Inputs": ["", ""])")
      .Launch(41, 2, 4)
      .Kernel("K", 100, 2, 1)
      .Kernel("K", 110, 3, 2)
      .Kernel("M", 120, 4, 3)
      .Kernel("G", 130, 20, 4)
      .LaunchFlow(1, 1, 100)
      .LaunchFlow(2, 5, 110)
      .LaunchFlow(3, 21, 120)
      .LaunchFlow(4, 41, 130)
      .Parse();
}

TEST(ShortKernelsTest, GroupsByOpArgumentsAndKernelAsTraceLensDoes) {
  const ShortKernelStudy s = StudyShortKernels(SmallTrace(), 10, 2);
  EXPECT_EQ(s.kernels, 3);         // K, K, M; G's 20 us is not short
  EXPECT_EQ(s.total_ns, 9'000);    // 2 + 3 + 4 us
  ASSERT_EQ(s.groups.size(), 1u);  // M's op has no strides: histogram only
  const ShortKernelGroup& k = s.groups[0];
  EXPECT_EQ(k.parent_op, "aten::add");
  EXPECT_EQ(k.input_dims, "((4,), (4,))");
  EXPECT_EQ(k.input_strides, "((1,), (1,))");
  EXPECT_EQ(k.concrete_inputs, "('', '')");
  EXPECT_EQ(k.name, "K");
  EXPECT_EQ(k.count, 2);
  EXPECT_EQ(k.total_ns, 5'000);
  // Two bins over [2, 4]: [2, 3) holds 2 us; the last, [3, 4], closed on the right, holds 3
  // and 4 us (numpy.histogram).
  ASSERT_EQ(s.histogram.size(), 2u);
  EXPECT_DOUBLE_EQ(s.histogram[0].start_us, 2.0);
  EXPECT_DOUBLE_EQ(s.histogram[0].end_us, 3.0);
  EXPECT_EQ(s.histogram[0].count, 1);
  EXPECT_DOUBLE_EQ(s.histogram[1].end_us, 4.0);
  EXPECT_EQ(s.histogram[1].count, 2);
}

TEST(ShortKernelsTest, OneDurationGetsAUnitRangeAroundIt) {
  // numpy.histogram of one value v: the range [v - 0.5, v + 0.5]; 3 us in 4 bins of 0.25 us
  // falls in the third, [3.0, 3.25).
  const ShortKernelStudy s = StudyShortKernels(
      KinetoTraceBuilder().Launch(1, 2, 1).Kernel("K", 10, 3, 1).LaunchFlow(1, 1, 10).Parse(), 10,
      4);
  ASSERT_EQ(s.histogram.size(), 4u);
  EXPECT_DOUBLE_EQ(s.histogram[0].start_us, 2.5);
  EXPECT_DOUBLE_EQ(s.histogram[3].end_us, 3.5);
  EXPECT_EQ(s.histogram[2].count, 1);
  EXPECT_DOUBLE_EQ(s.histogram[2].start_us, 3.0);
  // No CPU ops at all (a GPU-only trace): grouped by kernel name alone.
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].name, "K");
  EXPECT_EQ(s.groups[0].parent_op, "");
}

TEST(ShortKernelsTest, NoShortKernelsNoRows) {
  const ShortKernelStudy s = StudyShortKernels(
      KinetoTraceBuilder().Launch(1, 2, 1).Kernel("G", 10, 30, 1).LaunchFlow(1, 1, 10).Parse());
  EXPECT_EQ(s.kernels, 0);
  EXPECT_TRUE(s.histogram.empty());
  EXPECT_TRUE(s.groups.empty());
}

// Python's repr of the JSON records, as TraceLens's CSVs print them.
TEST(ShortKernelsTest, ArgumentRecordsInPythonSpelling) {
  EXPECT_EQ(PythonRepr("[[512], [141, 512], []]"), "((512,), (141, 512), ())");
  EXPECT_EQ(PythonRepr(R"(["", "[512]", "9.9999999999999998e-13"])"),
            "('', '[512]', '9.9999999999999998e-13')");
  EXPECT_EQ(PythonRepr(R"(["it's"])"), R"(("it's",))");
  EXPECT_EQ(PythonRepr(R"(["a\\b", "x'y\"z"])"), R"(('a\\b', 'x\'y"z'))");
  EXPECT_EQ(PythonRepr("[1.5, 2.0, true, null, -3]"), "(1.5, 2.0, True, None, -3)");
  EXPECT_EQ(PythonRepr(""), "");
  EXPECT_EQ(PythonRepr("[[1, 2"), "");
  EXPECT_EQ(PythonRepr(std::string(100000, '[') + std::string(100000, ']')), "");  // no recursion
}

}  // namespace
}  // namespace sextant
