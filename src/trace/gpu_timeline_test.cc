#include "trace/gpu_timeline.h"

#include <gtest/gtest.h>

#include "trace/kineto_reader.h"

namespace sextant {
namespace {

TraceData Parse(std::string_view json) {
  return ParseKinetoTrace(InputText::FromString(json), "test.json");
}

TEST(GpuTimelineTest, HandComputedExposedCommunication) {
  // comp [0,10) and [20,30); comm [5,25); memcpy [24,40); memset [40,42).
  TraceData t = Parse(R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 0, "dur": 10},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 10},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 9, "ts": 5, "dur": 20},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH", "pid": 0, "tid": 8, "ts": 24, "dur": 16},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset", "pid": 0, "tid": 8, "ts": 40, "dur": 2}]})json");
  GpuTimeline tl = ComputeGpuTimeline(t);
  EXPECT_EQ(tl.total_ns, 42000);
  EXPECT_EQ(tl.computation_ns, 22000);  // 10 + 10 + memset 2
  EXPECT_EQ(tl.communication_ns, 20000);
  EXPECT_EQ(tl.exposed_communication_ns, 10000);  // [10,20)
  EXPECT_EQ(tl.memcpy_ns, 16000);
  EXPECT_EQ(tl.exposed_memcpy_ns, 10000);  // [30,40)
  EXPECT_EQ(tl.busy_ns, 42000);
  EXPECT_EQ(tl.idle_ns, 0);
  EXPECT_EQ(tl.computation_ns + tl.exposed_communication_ns + tl.exposed_memcpy_ns + tl.idle_ns,
            tl.total_ns);
}

}  // namespace
}  // namespace sextant
