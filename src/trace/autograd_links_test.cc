#include "trace/autograd_links.h"

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

int32_t Find(const TraceData& trace, std::string_view name) {
  for (size_t i = 0; i < trace.cpu.size(); ++i)
    if (trace.Name(trace.cpu[i].name) == name) return static_cast<int32_t>(i);
  ADD_FAILURE() << "no event " << name;
  return -1;
}

// Forward on thread 1: aten::mean (sequence 5) with aten::sum inside it recording the same
// number later; backward on thread 2: the engine's evaluate_function for MeanBackward1 and the
// MeanBackward1 op under it, both numbered 5. The innermost forward op (aten::sum, the latest
// start off the autograd thread) pairs with the evaluate_function event. Sequence 6 has no
// backward node and pairs with nothing.
TEST(PairForwardWithBackwardTest, InnermostForwardOpPairsWithTheEngineEvent) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mean", 10, 20, R"("Sequence number": 5)")
                        .CpuOp("aten::sum", 12, 5, R"("Sequence number": 5)")
                        .CpuOp("aten::mul", 40, 5, R"("Sequence number": 6)")
                        .CpuOp("autograd::engine::evaluate_function: MeanBackward1", 100, 30,
                               R"("Sequence number": 5)", 2)
                        .CpuOp("MeanBackward1", 101, 20, R"("Sequence number": 5)", 2)
                        .Parse();
  const std::vector<int32_t> backward = PairForwardWithBackward(trace);
  ASSERT_EQ(backward.size(), trace.cpu.size());
  const int32_t node = Find(trace, "autograd::engine::evaluate_function: MeanBackward1");
  EXPECT_EQ(backward[Find(trace, "aten::sum")], node);
  EXPECT_EQ(backward[Find(trace, "aten::mean")], -1) << "the outer op is not the innermost";
  EXPECT_EQ(backward[Find(trace, "aten::mul")], -1) << "no backward node numbered 6";
  EXPECT_EQ(backward[Find(trace, "MeanBackward1")], -1) << "on the autograd thread";
}

// Parent and child starting in the same microsecond: the enclosing op pairs, as in TraceLens,
// which keeps the first in the file (Kineto writes the enclosing op first; here the child is
// written first, and the pairing still takes the parent).
TEST(PairForwardWithBackwardTest, SameStartPairsTheEnclosingOp) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::sum", 10, 5, R"("Sequence number": 9)")
                        .CpuOp("aten::mean", 10, 20, R"("Sequence number": 9)")
                        .CpuOp("autograd::engine::evaluate_function: MeanBackward1", 100, 30,
                               R"("Sequence number": 9)", 2)
                        .Parse();
  const std::vector<int32_t> backward = PairForwardWithBackward(trace);
  EXPECT_GE(backward[Find(trace, "aten::mean")], 0);
  EXPECT_EQ(backward[Find(trace, "aten::sum")], -1);
}

TEST(PairForwardWithBackwardTest, NoSequenceNumbersNoPairs) {
  TraceData trace = KinetoTraceBuilder().CpuOp("aten::mean", 10, 20).Parse();
  EXPECT_TRUE(PairForwardWithBackward(trace).empty());
}

}  // namespace
}  // namespace sextant
