#include "trace/event_store.h"

#include <string_view>

#include <gtest/gtest.h>

namespace sextant {
namespace {

int calls = 0;
bool CountingIsNccl(std::string_view name) {
  ++calls;
  return name.starts_with("nccl");
}

// A name is tested once, whatever the number of events carrying it.
TEST(NameTestTest, TestsEachNameOnce) {
  TraceData trace;
  const uint32_t nccl = trace.strings.Intern("ncclKernel_AllReduce");
  const uint32_t gemm = trace.strings.Intern("sm90_gemm");
  NameTest is_nccl(trace, CountingIsNccl);
  calls = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(is_nccl(nccl));
    EXPECT_FALSE(is_nccl(gemm));
  }
  EXPECT_EQ(calls, 2);
}

// An op's launch call sits under an annotation inside the op: the launch's op is the op,
// the annotation is skipped, and an op at the top has none.
TEST(EnclosingOpTest, SkipsRuntimeCallsAndAnnotations) {
  TraceData trace;
  CpuEvent op, annotation, launch;
  op.kind = CpuKind::kOp;
  annotation.kind = CpuKind::kAnnotation;
  annotation.parent = 0;
  launch.kind = CpuKind::kRuntime;
  launch.parent = 1;
  trace.cpu = {op, annotation, launch};
  EXPECT_EQ(EnclosingOp(trace, 2), 0);
  EXPECT_EQ(EnclosingOp(trace, 1), 0);
  EXPECT_EQ(EnclosingOp(trace, 0), -1);
}

}  // namespace
}  // namespace sextant
