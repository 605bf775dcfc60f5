#include "trace/launch_stats.h"

#include <gtest/gtest.h>

#include <numeric>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

std::vector<uint32_t> AllGpuEvents(const TraceData& t) {
  std::vector<uint32_t> all(t.gpu.size());
  std::iota(all.begin(), all.end(), 0u);
  return all;
}

// One stream whose four gaps fall in each idle class, a second stream, a memcpy stream, and
// one kernel with no launching call. Times in µs:
//   launch     call          kernel (stream 7)   gap before it   class
//   corr 1     [2, 7)        K1 [10, 30)          -
//   corr 2     [12, 16)      K2 [35, 40)          5  (30 -> 35)   queued (call 12 <= 30), < 30 µs:
//   launch overhead corr 3     [50, 56)      K3 [58, 60)          18 (40 -> 58)   call 50 > 40:
//   host bound corr 4     [20, 23)      K4 [100, 108)        40 (60 -> 100)  queued, >= 30 µs:
//   dependency wait (none)                   K5 [110, 114)        2  (108 -> 110) no launcher:
//   other corr 6     [200, 210)    K6 [205, 235) on stream 9 (the call ends after the kernel
//   starts) corr 5     [60, 62)      memcpy [70, 82) on stream 8
KinetoTraceBuilder FourGapTrace() {
  KinetoTraceBuilder b;
  b.Launch(2, 5, 1)
      .Launch(12, 4, 2)
      .Launch(20, 3, 4)
      .Launch(50, 6, 3)
      .Runtime("cudaMemcpyAsync", 60, 2, 5)
      .Launch(200, 10, 6)
      .Kernel("K1", 10, 20, 1)
      .Kernel("K2", 35, 5, 2)
      .Kernel("K3", 58, 2, 3)
      .Kernel("K4", 100, 8, 4)
      .Kernel("K5", 110, 4, 999)
      .Kernel("K6", 205, 30, 6, /*stream=*/9)
      .Memcpy(70, 12, 5, /*stream=*/8);
  return b;
}

TEST(LaunchStatsTest, IdleGapsAreClassifiedPerStream) {
  TraceData t = FourGapTrace().Parse();
  std::vector<StreamIdle> idle = BreakDownIdleTime(t, AllGpuEvents(t));
  ASSERT_EQ(idle.size(), 3u);
  // Largest busy time first: stream 7 (20+5+2+8+4 = 39 µs), stream 9 (30), stream 8 (12).
  EXPECT_EQ(idle[0].stream, 7);
  EXPECT_EQ(idle[0].activities, 5);
  EXPECT_EQ(idle[0].busy_ns, 39'000);
  EXPECT_EQ(idle[0].launch_overhead_ns, 5'000);
  EXPECT_EQ(idle[0].host_bound_ns, 18'000);
  EXPECT_EQ(idle[0].dependency_wait_ns, 40'000);
  EXPECT_EQ(idle[0].other_ns, 2'000);
  EXPECT_EQ(idle[0].idle_ns(), 65'000);  // 5 + 18 + 40 + 2
  // busy + idle spans the stream's first start to last end: 10 -> 114 µs.
  EXPECT_EQ(idle[0].busy_ns + idle[0].idle_ns(), 104'000);
  EXPECT_EQ(idle[1].stream, 9);
  EXPECT_EQ(idle[1].busy_ns, 30'000);
  EXPECT_EQ(idle[1].idle_ns(), 0);
  EXPECT_EQ(idle[2].stream, 8);
  EXPECT_EQ(idle[2].activities, 1);
  EXPECT_EQ(idle[2].busy_ns, 12'000);
  EXPECT_EQ(idle[2].device, 0);
}

TEST(LaunchStatsTest, OnlyTheGivenEventsAreMeasured) {
  TraceData t = FourGapTrace().Parse();
  // K1 and K3 only (trace.gpu is sorted by start: K1, K2, K3, ...): one 28 µs gap, 30 -> 58,
  // host bound because K3's call starts at 50 > 30.
  std::vector<uint32_t> some;
  for (uint32_t i = 0; i < t.gpu.size(); ++i) {
    std::string_view name = t.Name(t.gpu[i].name);
    if (name == "K1" || name == "K3") some.push_back(i);
  }
  ASSERT_EQ(some.size(), 2u);
  std::vector<StreamIdle> idle = BreakDownIdleTime(t, some);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].activities, 2);
  EXPECT_EQ(idle[0].busy_ns, 22'000);
  EXPECT_EQ(idle[0].host_bound_ns, 28'000);
  EXPECT_EQ(idle[0].idle_ns(), 28'000);
}

TEST(LaunchStatsTest, GapIsMeasuredFromTheLatestEndAndThirtyMicrosecondsIsNotShort) {
  // A [0, 50) and B [10, 20) overlap (B ends first): the gap to C [60, 70) runs from A's end,
  // 50 -> 60 = 10 µs. D [100, 110) follows C after exactly kShortGapNs = 30 µs, which is not
  // short (gap < 30 µs is): dependency wait. All calls start before the gaps they close.
  TraceData t = KinetoTraceBuilder()
                    .Launch(0, 1, 1)
                    .Launch(2, 1, 2)
                    .Launch(4, 1, 3)
                    .Launch(6, 1, 4)
                    .Kernel("A", 0, 50, 1)
                    .Kernel("B", 10, 10, 2)
                    .Kernel("C", 60, 10, 3)
                    .Kernel("D", 100, 10, 4)
                    .Parse();
  std::vector<StreamIdle> idle = BreakDownIdleTime(t, AllGpuEvents(t));
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].busy_ns, 80'000);  // summed durations, overlap included
  EXPECT_EQ(idle[0].launch_overhead_ns, 10'000);
  EXPECT_EQ(idle[0].dependency_wait_ns, 30'000);
  EXPECT_EQ(idle[0].host_bound_ns, 0);
  EXPECT_EQ(idle[0].other_ns, 0);
}

TEST(LaunchStatsTest, LaunchDelaysAndShortKernels) {
  TraceData t = FourGapTrace().Parse();
  LaunchStats s = ComputeLaunchStats(t);
  // Kernels only (the memcpy is not one): K1..K6, 20+5+2+8+4+30 = 69 µs.
  EXPECT_EQ(s.kernels, 6);
  EXPECT_EQ(s.kernel_ns, 69'000);
  // Shorter than 10 µs: K2 5, K3 2, K4 8, K5 4 -> 4 kernels, 19 µs.
  EXPECT_EQ(s.short_kernels, 4);
  EXPECT_EQ(s.short_kernel_ns, 19'000);
  // Linked: K1..K4, K6. Delay = max(0, kernel start - call end):
  //   K1 10-7 = 3, K2 35-16 = 19, K3 58-56 = 2, K4 100-23 = 77, K6 max(0, 205-210) = 0.
  EXPECT_EQ(s.linked_kernels, 5);
  EXPECT_DOUBLE_EQ(s.mean_launch_delay_ns, 20'200);   // (3+19+2+77+0)/5 = 20.2 µs
  EXPECT_DOUBLE_EQ(s.median_launch_delay_ns, 3'000);  // 0 2 [3] 19 77
  // Of 5 values every percentile definition that picks a sample puts p95 on the largest.
  EXPECT_EQ(s.p95_launch_delay_ns, 77'000);
  EXPECT_EQ(s.max_launch_delay_ns, 77'000);
  // Calls 5, 4, 6, 3, 10 µs -> mean 5.6 µs.
  EXPECT_DOUBLE_EQ(s.mean_launch_call_ns, 5'600);
  // GPU time below the call's CPU time: K3 (2 < 6) only; K2 5 vs 4, K4 8 vs 3, K6 30 vs 10.
  EXPECT_EQ(s.kernels_shorter_than_launch, 1);
}

TEST(LaunchStatsTest, EvenCountMedianAndNoLinkedKernels) {
  // Delays 1, 2, 4, 8 µs: median (2+4)/2 = 3 µs, mean 3.75 µs.
  TraceData t = KinetoTraceBuilder()
                    .Launch(0, 1, 1)
                    .Launch(10, 1, 2)
                    .Launch(20, 1, 3)
                    .Launch(30, 1, 4)
                    .Kernel("k", 2, 20, 1)
                    .Kernel("k", 13, 20, 2)
                    .Kernel("k", 25, 20, 3)
                    .Kernel("k", 39, 20, 4)
                    .Parse();
  LaunchStats s = ComputeLaunchStats(t);
  EXPECT_EQ(s.linked_kernels, 4);
  EXPECT_DOUBLE_EQ(s.median_launch_delay_ns, 3'000);
  EXPECT_DOUBLE_EQ(s.mean_launch_delay_ns, 3'750);
  EXPECT_EQ(s.short_kernels, 0);

  // A GPU-only trace: kernels are counted, but no delay can be measured.
  TraceData gpu_only = KinetoTraceBuilder().Kernel("k", 0, 5, 1).Kernel("k", 10, 5, 2).Parse();
  LaunchStats g = ComputeLaunchStats(gpu_only);
  EXPECT_EQ(g.kernels, 2);
  EXPECT_EQ(g.short_kernels, 2);
  EXPECT_EQ(g.linked_kernels, 0);
  EXPECT_EQ(g.mean_launch_delay_ns, 0);
  EXPECT_EQ(g.max_launch_delay_ns, 0);
  EXPECT_EQ(g.kernels_shorter_than_launch, 0);
}

}  // namespace
}  // namespace sextant
