#include "trace/gpu_timeline.h"

#include <gtest/gtest.h>

#include "trace/kineto_reader.h"
#include "trace/trace_test_util.h"

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

TEST(GpuTimelineTest, WithFlowEventsOnlyFlowLaunchedActivitiesCount) {
  // K1's launch carries an ac2g flow; K2's launch has none, which TraceLens takes for a kernel
  // from outside the profiled window; K3 has no launch in the trace at all. Only K1 [20, 30)
  // is on the timeline.
  TraceData t = KinetoTraceBuilder()
                    .Launch(10, 2, 1)
                    .LaunchFlow(1, 10, 20)
                    .Launch(13, 2, 2)
                    .Kernel("K1", 20, 10, 1)
                    .Kernel("K2", 32, 6, 2)
                    .Kernel("K3", 40, 5, 3)
                    .Parse();
  ASSERT_TRUE(t.has_launch_flows);
  std::vector<uint32_t> events = TimelineEvents(t);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(t.Name(t.gpu[events[0]].name), "K1");
  GpuTimeline tl = ComputeGpuTimeline(t);
  EXPECT_EQ(tl.first_start_ns, 20'000);
  EXPECT_EQ(tl.total_ns, 10'000);
  // Without any linked activity (a GPU-only trace) every activity counts: [0, 15) + [40, 45).
  TraceData gpu_only = KinetoTraceBuilder().Kernel("a", 0, 15, 1).Kernel("b", 40, 5, 2).Parse();
  EXPECT_EQ(TimelineEvents(gpu_only).size(), 2u);
  GpuTimeline g = ComputeGpuTimeline(gpu_only);
  EXPECT_EQ(g.total_ns, 45'000);
  EXPECT_EQ(g.busy_ns, 20'000);
  EXPECT_EQ(g.idle_ns, 25'000);
}

TEST(GpuTimelineTest, KernelsReplayedByAGraphLaunchCountWithoutAFlowStart) {
  // One eager kernel E (flow-launched, [10, 14)) and a hipGraphLaunch whose three replayed
  // kernels share its correlation id 7 and carry no flow start (as Kineto records graphs):
  // [20, 25), [25, 31), [40, 42). A kernel from before the window (no launch) stays out.
  // computation = 4 + 5 + 6 + 2 = 17 us over a span [10, 42) of 32 us, idle 15 us.
  TraceData t = KinetoTraceBuilder()
                    .Launch(1, 2, 1)
                    .LaunchFlow(1, 1, 10)
                    .Runtime("hipGraphLaunch", 5, 3, 7)
                    .Kernel("old", 0, 3, 99)
                    .Kernel("E", 10, 4, 1)
                    .Kernel("g1", 20, 5, 7)
                    .Kernel("g2", 25, 6, 7)
                    .Kernel("g3", 40, 2, 7)
                    .Parse();
  ASSERT_TRUE(t.has_launch_flows);
  TimelineSelection s = SelectTimelineEvents(t);
  EXPECT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.graph_replayed, 3u);
  EXPECT_EQ(s.unlaunched, 1u);
  EXPECT_EQ(s.unlaunched_ns, 3'000);
  EXPECT_EQ(s.flowless, 0u);
  GpuTimeline tl = ComputeGpuTimeline(t);
  EXPECT_EQ(tl.computation_ns, 17'000);
  EXPECT_EQ(tl.total_ns, 32'000);
  EXPECT_EQ(tl.idle_ns, 15'000);
  // The same call without the graph name is an eager launch with no flow: its kernels leave.
  TraceData eager = KinetoTraceBuilder()
                        .Launch(1, 2, 1)
                        .LaunchFlow(1, 1, 10)
                        .Runtime("hipLaunchKernel", 5, 3, 7)
                        .Kernel("E", 10, 4, 1)
                        .Kernel("g1", 20, 5, 7)
                        .Parse();
  TimelineSelection e = SelectTimelineEvents(eager);
  EXPECT_EQ(e.events.size(), 1u);
  EXPECT_EQ(e.flowless, 1u);
  EXPECT_EQ(e.flowless_ns, 5'000);
}

TEST(GpuTimelineTest, GraphLaunchNamesWithAndWithoutVersionSuffix) {
  EXPECT_TRUE(IsGraphLaunchName("cudaGraphLaunch"));
  EXPECT_TRUE(IsGraphLaunchName("cudaGraphLaunch_v10000"));
  EXPECT_TRUE(IsGraphLaunchName("hipGraphLaunch"));
  EXPECT_FALSE(IsGraphLaunchName("cudaLaunchKernel"));
  EXPECT_FALSE(IsGraphLaunchName("cudaGraphInstantiate"));
}

TEST(GpuTimelineTest, ActivitiesBelongToTheStepThatLaunchedThem) {
  // Steps [0, 100) and [100, 200). K1 is launched at 10 but runs at [150, 160), inside step 2's
  // window: it belongs to step 1. K2 launched at 120 belongs to step 2; K3 launched at 250,
  // after the last step, to none.
  TraceData t = KinetoTraceBuilder()
                    .Annotation("ProfilerStep#1", 0, 100)
                    .Annotation("ProfilerStep#2", 100, 100)
                    .Launch(10, 2, 1)
                    .Launch(120, 2, 2)
                    .Launch(250, 2, 3)
                    .Kernel("K1", 150, 10, 1)
                    .Kernel("K2", 165, 20, 2)
                    .Kernel("K3", 260, 5, 3)
                    .Parse();
  ASSERT_EQ(t.iterations.size(), 2u);
  auto groups = GpuEventsByIteration(t);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].size(), 1u);
  EXPECT_EQ(t.Name(t.gpu[groups[0][0]].name), "K1");
  ASSERT_EQ(groups[1].size(), 1u);
  EXPECT_EQ(t.Name(t.gpu[groups[1][0]].name), "K2");
  EXPECT_EQ(ComputeGpuTimeline(t, groups[1]).busy_ns, 20'000);
}

// A step's work still running when the next step's first activity starts (the next batch's
// copy issued early, as HTA's trace_diff test trace does): the per-step windows split there,
// so no time is counted twice and the steps add up to the trace's timeline.
//   step 1: K1 [10, 60) and K2 [70, 120)     step 2: copy [50, 80), K3 [130, 150)
// Step 1's window is [10, 50): K1 busy 40, idle 0. Step 2's is [50, 150): copy [50, 80)
// overlaps K1 [50, 60) and K2 [70, 80) (exposed 10), K2 [80, 120), K3 [130, 150): computation
// 10 + 50 + 20 = 80, exposed memcpy 10, idle [120, 130) = 10, total 100. Whole trace [10, 150):
// computation 120, exposed memcpy 10, idle 10 = 40 + 100.
TEST(GpuTimelineTest, StepWindowsDoNotOverlap) {
  TraceData t = KinetoTraceBuilder()
                    .Annotation("ProfilerStep#1", 0, 45)
                    .Annotation("ProfilerStep#2", 45, 100)
                    .Launch(1, 2, 1)
                    .Launch(2, 2, 2)
                    .Launch(46, 2, 3)
                    .Launch(47, 2, 4)
                    .Kernel("K1", 10, 50, 1)
                    .Kernel("K2", 70, 50, 2)
                    .Memcpy(50, 30, 3)
                    .Kernel("K3", 130, 20, 4)
                    .Parse();
  const std::vector<GpuTimeline> steps = IterationTimelines(t);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].total_ns, 40'000);
  EXPECT_EQ(steps[0].computation_ns, 40'000);
  EXPECT_EQ(steps[0].idle_ns, 0);
  EXPECT_EQ(steps[1].total_ns, 100'000);
  EXPECT_EQ(steps[1].computation_ns, 80'000);
  EXPECT_EQ(steps[1].exposed_memcpy_ns, 10'000);
  EXPECT_EQ(steps[1].idle_ns, 10'000);
  const GpuTimeline whole = ComputeGpuTimeline(t);
  EXPECT_EQ(whole.total_ns, steps[0].total_ns + steps[1].total_ns);
  EXPECT_EQ(whole.idle_ns, steps[0].idle_ns + steps[1].idle_ns);
  EXPECT_EQ(whole.computation_ns, steps[0].computation_ns + steps[1].computation_ns);
}

}  // namespace
}  // namespace sextant
