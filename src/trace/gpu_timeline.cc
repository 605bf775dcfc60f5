#include "trace/gpu_timeline.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "trace/intervals.h"

namespace sextant {

std::vector<std::pair<std::string_view, int64_t>> TraceLensTimelineRows(const GpuTimeline& t) {
  return {{"computation_time", t.computation_ns},
          {"exposed_comm_time", t.exposed_communication_ns},
          {"exposed_memcpy_time", t.exposed_memcpy_ns},
          {"busy_time", t.busy_ns},
          {"idle_time", t.idle_ns},
          {"total_time", t.total_ns},
          {"total_comm_time", t.communication_ns},
          {"total_memcpy_time", t.memcpy_ns}};
}

bool IsCommunicationKernelName(std::string_view name) {
  for (size_t i = 0; i + 4 <= name.size(); ++i) {
    char a = static_cast<char>(name[i] | 0x20);
    if (a != 'n' && a != 'r') continue;
    if ((name[i + 1] | 0x20) == 'c' && (name[i + 2] | 0x20) == 'c' && (name[i + 3] | 0x20) == 'l') {
      return true;
    }
  }
  // Collectives outside NCCL/RCCL, each a library's kernel namespace or name:
  //   cross_device_reduce  vLLM's custom all-reduce (TraceLens counts it too: util.py,
  //                        DEFAULT_CUSTOM_COLLECTIVE_PATTERNS)
  //   deep_ep::            DeepEP's MoE dispatch/combine (deepseek-ai/DeepEP csrc/kernels)
  //   dpsk::ep::           the same kernels in DeepSeek's own build (deepseek-ai/profile-data)
  //   mscclpp             MSCCL++ collectives
  //   nvshmem              NVSHMEM device-side communication
  //   multimem_all_reduce, one_shot_all_reduce, two_shot_all_reduce
  //                        PyTorch symmetric-memory collectives (torch.ops.symm_mem;
  //                        torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu)
  for (std::string_view marker :
       {"cross_device_reduce", "deep_ep::", "dpsk::ep::", "mscclpp", "nvshmem",
        "multimem_all_reduce", "one_shot_all_reduce", "two_shot_all_reduce"}) {
    if (name.find(marker) == std::string_view::npos) continue;
    // DeepEP's layout kernel counts each rank's and expert's tokens from the routing on the
    // GPU itself before a dispatch (csrc/kernels/layout.cu): computation, not an exchange.
    return name.find("get_dispatch_layout") == std::string_view::npos;
  }
  return false;
}

namespace {

// The busy time of each class of activity, merged.
struct MergedActivity {
  std::vector<Interval> comp, comm, copy, fill;
};

MergedActivity MergeActivity(const TraceData& trace, const std::vector<uint32_t>& gpu_indices) {
  MergedActivity m;
  NameTest is_comm(trace, IsCommunicationKernelName);
  for (uint32_t i : gpu_indices) {
    const GpuEvent& g = trace.gpu[i];
    Interval iv{g.ts_ns, g.end_ns()};
    switch (g.kind) {
      case GpuKind::kMemcpy: m.copy.push_back(iv); break;
      case GpuKind::kMemset:
        m.fill.push_back(iv);
        m.comp.push_back(iv);
        break;
      case GpuKind::kKernel: (is_comm(g.name) ? m.comm : m.comp).push_back(iv); break;
    }
  }
  m.comp = MergeIntervals(std::move(m.comp));
  m.comm = MergeIntervals(std::move(m.comm));
  m.copy = MergeIntervals(std::move(m.copy));
  m.fill = MergeIntervals(std::move(m.fill));
  return m;
}

// The parts of merged intervals inside [begin, end).
std::vector<Interval> Clip(const std::vector<Interval>& merged, int64_t begin, int64_t end) {
  auto it = std::partition_point(merged.begin(), merged.end(),
                                 [&](const Interval& iv) { return iv.end <= begin; });
  std::vector<Interval> out;
  for (; it != merged.end() && it->begin < end; ++it) {
    out.push_back({std::max(it->begin, begin), std::min(it->end, end)});
  }
  return out;
}

// The timeline of `m`; inside `window` when given, whose length is then the total (the
// time before the first and after the last activity in it counts as idle).
GpuTimeline Summarize(const MergedActivity& m, const Interval* window) {
  MergedActivity clipped;
  const MergedActivity* a = &m;
  if (window) {
    clipped = {Clip(m.comp, window->begin, window->end), Clip(m.comm, window->begin, window->end),
               Clip(m.copy, window->begin, window->end), Clip(m.fill, window->begin, window->end)};
    a = &clipped;
  }
  auto busy = UnionIntervals(UnionIntervals(a->comp, a->comm), a->copy);
  GpuTimeline t;
  if (window) {
    t.first_start_ns = window->begin;
    t.last_end_ns = window->end;
  } else if (!busy.empty()) {
    t.first_start_ns = busy.front().begin;
    t.last_end_ns = busy.back().end;
  }
  if (busy.empty() && !window) return t;
  t.total_ns = t.last_end_ns - t.first_start_ns;
  t.computation_ns = TotalLength(a->comp);
  t.communication_ns = TotalLength(a->comm);
  t.exposed_communication_ns = TotalLength(SubtractIntervals(a->comm, a->comp));
  t.memcpy_ns = TotalLength(a->copy);
  t.exposed_memcpy_ns =
      TotalLength(SubtractIntervals(SubtractIntervals(a->copy, a->comp), a->comm));
  t.memset_ns = TotalLength(a->fill);
  t.busy_ns = TotalLength(busy);
  t.idle_ns = t.total_ns - t.busy_ns;
  return t;
}

}  // namespace

GpuTimeline ComputeGpuTimeline(const TraceData& trace, const std::vector<uint32_t>& gpu_indices) {
  return Summarize(MergeActivity(trace, gpu_indices), nullptr);
}

TimelineSelection SelectTimelineEvents(const TraceData& trace) {
  TimelineSelection s;
  for (uint32_t i = 0; i < trace.gpu.size(); ++i) {
    const GpuEvent& g = trace.gpu[i];
    if (g.launcher < 0) {
      ++s.unlaunched;
      s.unlaunched_ns += g.dur_ns;
      continue;
    }
    // A graph launch has no flow start of its own: its replayed kernels share its correlation
    // id (TraceLens trace_to_tree.py, _get_graph_gpu_events).
    const CpuEvent& launch = trace.cpu[g.launcher];
    if (trace.has_launch_flows && !launch.launch_flow && !launch.graph_launch) {
      ++s.flowless;
      s.flowless_ns += g.dur_ns;
      continue;
    }
    s.events.push_back(i);
    if (launch.graph_launch) ++s.graph_replayed;
  }
  if (!s.events.empty()) return s;
  s = TimelineSelection{};
  s.events.resize(trace.gpu.size());
  std::iota(s.events.begin(), s.events.end(), 0u);
  return s;
}

std::vector<uint32_t> TimelineEvents(const TraceData& trace) {
  return SelectTimelineEvents(trace).events;
}

std::vector<std::string> TimelineExclusionWarnings(const TimelineSelection& selection) {
  // TraceLens leaves the same activities out.
  std::vector<std::string> warnings;
  if (selection.unlaunched > 0) {
    warnings.push_back(fmt::format(
        "{} GPU activities ({:.3f} ms of GPU time) are left out of the GPU timeline: their "
        "launching runtime call is not in the trace (work queued before the profiled window)",
        selection.unlaunched, static_cast<double>(selection.unlaunched_ns) / 1e6));
  }
  if (selection.flowless > 0) {
    warnings.push_back(fmt::format(
        "{} GPU activities ({:.3f} ms of GPU time) are left out of the GPU timeline: their "
        "launching runtime call carries no launch flow",
        selection.flowless, static_cast<double>(selection.flowless_ns) / 1e6));
  }
  return warnings;
}

GpuTimeline ComputeGpuTimeline(const TraceData& trace) {
  return ComputeGpuTimeline(trace, TimelineEvents(trace));
}

std::vector<std::vector<uint32_t>> GpuEventsByIteration(const TraceData& trace) {
  std::vector<std::vector<uint32_t>> groups(trace.iterations.size());
  if (groups.empty()) return groups;
  for (uint32_t i : TimelineEvents(trace)) {
    const GpuEvent& g = trace.gpu[i];
    int64_t when = g.launcher >= 0 ? trace.cpu[g.launcher].ts_ns : g.ts_ns;
    // Iterations are sorted by start; find the last one starting at or before `when`.
    auto it = std::upper_bound(trace.iterations.begin(), trace.iterations.end(), when,
                               [](int64_t t, const Iteration& it) { return t < it.ts_ns; });
    if (it == trace.iterations.begin()) continue;
    --it;
    if (when < it->ts_ns + it->dur_ns) groups[it - trace.iterations.begin()].push_back(i);
  }
  return groups;
}

std::vector<GpuTimeline> IterationTimelines(const TraceData& trace) {
  const std::vector<std::vector<uint32_t>> groups = GpuEventsByIteration(trace);
  std::vector<GpuTimeline> out(groups.size());
  // Each step's window opens at its first GPU activity (never before the previous step's)
  // and closes where the next step with GPU work opens; the last one at its last activity.
  std::vector<Interval> windows(groups.size(), Interval{0, -1});
  int64_t opened = INT64_MIN;
  size_t previous = groups.size();
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].empty()) continue;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (uint32_t g : groups[i]) {
      first = std::min(first, trace.gpu[g].ts_ns);
      last = std::max(last, trace.gpu[g].end_ns());
    }
    opened = std::max(opened, first);
    windows[i] = {opened, std::max(last, opened)};
    if (previous < groups.size()) windows[previous].end = opened;
    previous = i;
  }
  if (previous == groups.size()) return out;  // no step has GPU work
  const MergedActivity all = MergeActivity(trace, TimelineEvents(trace));
  for (size_t i = 0; i < groups.size(); ++i) {
    if (windows[i].end >= windows[i].begin) out[i] = Summarize(all, &windows[i]);
  }
  return out;
}

double MeanIterationNs(const TraceData& trace, const GpuTimeline& timeline) {
  if (trace.iterations.empty()) return static_cast<double>(timeline.total_ns);
  double sum = 0;
  for (const Iteration& it : trace.iterations) sum += static_cast<double>(it.dur_ns);
  return sum / static_cast<double>(trace.iterations.size());
}

}  // namespace sextant
