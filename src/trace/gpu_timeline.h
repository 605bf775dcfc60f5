// Where the GPU's time went: TraceLens's gpu_timeline definitions (TraceLens
// TreePerf/gpu_event_analyser.py, GPUEventAnalyser), so results can be checked against its
// golden reports. GPU activities of all devices and streams are merged per class:
//   communication = kernels whose name contains "nccl" or "rccl" (any case), or names a
//                   collective library outside NCCL (IsCommunicationKernelName)
//   computation   = every other kernel, plus memsets
//   memcpy        = memory copies
// exposed_communication = |comm \ comp|, exposed_memcpy = |memcpy \ comp \ comm|,
// busy = |comp ∪ comm ∪ memcpy|, total = last end − first start, idle = total − busy, so
// computation + exposed_communication + exposed_memcpy + idle = total.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

struct GpuTimeline {
  int64_t total_ns = 0;
  int64_t computation_ns = 0;
  int64_t communication_ns = 0;  // all communication, overlapped or not
  int64_t exposed_communication_ns = 0;
  int64_t memcpy_ns = 0;  // all copies
  int64_t exposed_memcpy_ns = 0;
  int64_t memset_ns = 0;  // included in computation, shown for information
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t first_start_ns = 0;
  int64_t last_end_ns = 0;
};

// TraceLens's gpu_timeline rows in its order, (type, nanoseconds): computation_time,
// exposed_comm_time, exposed_memcpy_time, busy_time, idle_time, total_time, total_comm_time,
// total_memcpy_time. The report, the diff and the golden tests name the rows from here.
std::vector<std::pair<std::string_view, int64_t>> TraceLensTimelineRows(const GpuTimeline& t);

bool IsCommunicationKernelName(std::string_view name);

// The GPU activities that belong to the profiled window: those whose launching runtime call
// is in the trace (and, when the trace has CPU->GPU flow events, carries one or is a graph
// launch — the rule TraceLens applies, so kernels still running from before the window are
// left out). A trace with no linked activity at all (GPU-only) uses every activity.
struct TimelineSelection {
  std::vector<uint32_t> events;  // indices into trace.gpu
  size_t graph_replayed = 0;     // of those, kernels replayed by a cudaGraphLaunch/hipGraphLaunch
  // Activities left out, and their summed duration: launched before the trace's window (no
  // launching runtime call in it), or by a call that carries no launch flow.
  size_t unlaunched = 0;
  int64_t unlaunched_ns = 0;
  size_t flowless = 0;
  int64_t flowless_ns = 0;
};
TimelineSelection SelectTimelineEvents(const TraceData& trace);
// One warning per kind of activity the selection left out, with how much GPU time: the
// timeline's totals change with it, so every report that prints a timeline says so.
std::vector<std::string> TimelineExclusionWarnings(const TimelineSelection& selection);
std::vector<uint32_t> TimelineEvents(const TraceData& trace);

// Over TimelineEvents(trace), or over the GPU events with the given indices.
GpuTimeline ComputeGpuTimeline(const TraceData& trace);
GpuTimeline ComputeGpuTimeline(const TraceData& trace, const std::vector<uint32_t>& gpu_indices);

// One iteration of a traced window, in ns: the mean ProfilerStep duration, else (a window
// without steps is one iteration) the timeline's GPU span.
double MeanIterationNs(const TraceData& trace, const GpuTimeline& timeline);

// TimelineEvents grouped by iteration: the ProfilerStep#N window containing the launching
// runtime call (or, for unlinked events, the GPU start). Index i matches trace.iterations[i].
std::vector<std::vector<uint32_t>> GpuEventsByIteration(const TraceData& trace);

// One timeline per iteration (index i matches trace.iterations[i]): the trace's timeline inside
// the step's GPU window, which opens at the first activity of the step (GpuEventsByIteration)
// and closes where the next step's window opens (the last step: at its last activity's end).
// A step's activities may still run after the next step's first one starts (a prefetch issued
// early); the windows do not overlap, so the steps' rows add up to the timeline over their
// span instead of counting that time once per step (and as idle in the next). A step without
// GPU activity has an empty timeline.
std::vector<GpuTimeline> IterationTimelines(const TraceData& trace);

}  // namespace sextant
