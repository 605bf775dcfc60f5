#include "trace/recompute.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace sextant {

RecomputeFlags MarkRecompute(const TraceData& trace) {
  RecomputeFlags flags;
  if (trace.recompute_regions.empty()) return flags;
  std::vector<RecomputeRegion> regions = trace.recompute_regions;
  std::sort(regions.begin(), regions.end(), [](const auto& a, const auto& b) {
    return std::tie(a.thread, a.ts_ns) < std::tie(b.thread, b.ts_ns);
  });
  flags.cpu.assign(trace.cpu.size(), 0);
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    // The last region on this thread that starts at or before the event.
    auto it = std::upper_bound(regions.begin(), regions.end(), std::pair(ev.thread, ev.ts_ns),
                               [](const std::pair<uint32_t, int64_t>& key, const auto& r) {
                                 return key < std::pair(r.thread, r.ts_ns);
                               });
    if (it == regions.begin()) continue;
    const RecomputeRegion& r = *std::prev(it);
    flags.cpu[i] = r.thread == ev.thread && ev.ts_ns < r.end_ns;
  }
  flags.gpu.assign(trace.gpu.size(), 0);
  for (size_t i = 0; i < trace.gpu.size(); ++i) {
    const GpuEvent& g = trace.gpu[i];
    const int32_t from = g.launcher >= 0 ? g.launcher : g.op;
    flags.gpu[i] = from >= 0 && flags.cpu[from];
  }
  return flags;
}

std::pair<std::vector<uint32_t>, std::vector<uint32_t>> SplitByRecompute(
    const RecomputeFlags& flags, const std::vector<uint32_t>& events) {
  std::pair<std::vector<uint32_t>, std::vector<uint32_t>> split;
  for (uint32_t i : events)
    (flags.gpu.empty() || !flags.gpu[i] ? split.first : split.second).push_back(i);
  return split;
}

}  // namespace sextant
