// Why the GPU sat idle, and how kernels were launched.
//
// Idle gaps are measured per stream between consecutive activities (the way HTA's
// idle_time_breakdown does, hta/analyzers/breakdown_analysis.py) and attributed to:
//   host_bound      the runtime call that launched the next activity started after the
//                   previous one ended: the GPU waited for the CPU;
//   launch_overhead the next activity was already queued and the gap is short
//                   (< kShortGapNs): scheduling latency between back-to-back kernels;
//   dependency_wait the next activity was queued but waited longer: on another stream,
//                   an event or a synchronisation;
//   other           the next activity has no launching call in the trace.
// Launch delay = max(0, kernel start − end of its launching runtime call) (HTA
// cuda_kernel_analysis). Short kernels run for less than kShortKernelNs.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

inline constexpr int64_t kShortGapNs = 30'000;
inline constexpr int64_t kShortKernelNs = 10'000;

struct StreamIdle {
  int32_t device = 0;
  int64_t stream = 0;
  int64_t activities = 0;
  int64_t busy_ns = 0;  // summed durations
  int64_t host_bound_ns = 0;
  int64_t launch_overhead_ns = 0;
  int64_t dependency_wait_ns = 0;
  int64_t other_ns = 0;
  int64_t idle_ns() const {
    return host_bound_ns + launch_overhead_ns + dependency_wait_ns + other_ns;
  }
};
std::vector<StreamIdle> BreakDownIdleTime(const TraceData& trace,
                                          const std::vector<uint32_t>& gpu_indices);

struct LaunchStats {
  int64_t linked_kernels = 0;  // kernels whose launching runtime call is in the trace
  double mean_launch_delay_ns = 0;
  double median_launch_delay_ns = 0;
  int64_t p95_launch_delay_ns = 0;
  int64_t max_launch_delay_ns = 0;
  double mean_launch_call_ns = 0;  // duration of the CPU runtime call (cudaLaunchKernel, ...)
  int64_t short_kernels = 0;
  int64_t short_kernel_ns = 0;
  int64_t kernels = 0;
  int64_t kernel_ns = 0;
  int64_t kernels_shorter_than_launch = 0;  // GPU time below the CPU time spent launching it
};
LaunchStats ComputeLaunchStats(const TraceData& trace);

}  // namespace sextant
