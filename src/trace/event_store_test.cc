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

}  // namespace
}  // namespace sextant
