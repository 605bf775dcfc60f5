#include "trace/launch_stats.h"

#include <algorithm>
#include <map>

#include "trace/kernel_summary.h"

namespace sextant {

std::vector<StreamIdle> BreakDownIdleTime(const TraceData& trace,
                                          const std::vector<uint32_t>& gpu_indices) {
  std::map<std::pair<int32_t, int64_t>, std::vector<uint32_t>> streams;
  for (uint32_t i : gpu_indices) streams[{trace.gpu[i].device, trace.gpu[i].stream}].push_back(i);
  std::vector<StreamIdle> out;
  for (auto& [key, events] : streams) {
    // trace.gpu is sorted by start, and so is each stream's index list.
    StreamIdle s;
    s.device = key.first;
    s.stream = key.second;
    int64_t prev_end = INT64_MIN;
    for (uint32_t i : events) {
      const GpuEvent& g = trace.gpu[i];
      s.activities++;
      s.busy_ns += g.dur_ns;
      if (prev_end != INT64_MIN && g.ts_ns > prev_end) {
        int64_t gap = g.ts_ns - prev_end;
        if (g.launcher < 0) {
          s.other_ns += gap;
        } else if (trace.cpu[g.launcher].ts_ns > prev_end) {
          s.host_bound_ns += gap;
        } else if (gap < kShortGapNs) {
          s.launch_overhead_ns += gap;
        } else {
          s.dependency_wait_ns += gap;
        }
      }
      prev_end = std::max(prev_end, g.end_ns());
    }
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(),
            [](const StreamIdle& a, const StreamIdle& b) { return a.busy_ns > b.busy_ns; });
  return out;
}

LaunchStats ComputeLaunchStats(const TraceData& trace) {
  LaunchStats s;
  std::vector<int64_t> delays;
  double call_sum = 0;
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind != GpuKind::kKernel) continue;
    s.kernels++;
    s.kernel_ns += g.dur_ns;
    if (g.dur_ns < kShortKernelNs) {
      s.short_kernels++;
      s.short_kernel_ns += g.dur_ns;
    }
    if (g.launcher < 0) continue;
    const CpuEvent& call = trace.cpu[g.launcher];
    delays.push_back(std::max<int64_t>(0, g.ts_ns - call.end_ns()));
    call_sum += static_cast<double>(call.dur_ns);
    if (g.dur_ns < call.dur_ns) s.kernels_shorter_than_launch++;
  }
  // An XLA profile's kernels: their launch calls are the host events with their correlation
  // ids (the XPlane reader keeps their times, not host ops).
  for (const XlaActivity& x : trace.xla) {
    if (x.kind != GpuKind::kKernel || x.launch_ps < 0) continue;
    const int64_t call_ps = x.launch_end_ps - x.launch_ps;
    delays.push_back(std::max<int64_t>(0, x.ts_ps - x.launch_end_ps) / 1000);
    call_sum += static_cast<double>(call_ps) / 1000;
    if (x.dur_ps < call_ps) s.kernels_shorter_than_launch++;
  }
  s.linked_kernels = static_cast<int64_t>(delays.size());
  if (!delays.empty()) {
    double sum = 0;
    for (int64_t d : delays) sum += static_cast<double>(d);
    s.mean_launch_delay_ns = sum / static_cast<double>(delays.size());
    s.mean_launch_call_ns = call_sum / static_cast<double>(delays.size());
    s.max_launch_delay_ns = *std::max_element(delays.begin(), delays.end());
    size_t p95 =
        std::min(delays.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(delays.size())));
    std::nth_element(delays.begin(), delays.begin() + p95, delays.end());
    s.p95_launch_delay_ns = delays[p95];
    s.median_launch_delay_ns = Median(delays);
  }
  return s;
}

}  // namespace sextant
