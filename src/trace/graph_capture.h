// CUDA/HIP-graph replays attributed to the ops that recorded them. A trace of graph replays
// holds one cudaGraphLaunch/hipGraphLaunch per replay and the kernels it ran, but not the ops
// (with their shapes) that built the graph: those are in a *capture* trace, profiled while
// the graph was recorded (vLLM, SGLang and TraceLens's inference mode write one). Between a
// stream's BeginCapture and EndCapture, each launch call records one graph node, in order,
// inside the op that issued it. The replayed kernels of a launch, in time order, are matched to
// the nodes of a captured graph by kernel name (or by position where the capture names none),
// and each kernel takes the captured op — imported into the replay trace with its ancestors —
// as its op. The same matching TraceLens applies (Trace2Tree/trace_capture_merge_experimental.py).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

struct GraphAttribution {
  size_t graphs_captured = 0;     // capture windows found in the capture traces
  size_t launches = 0;            // graph launches in the replay trace that replayed kernels
  size_t launches_matched = 0;    // of those, matched to a captured graph
  size_t kernels = 0;             // kernels replayed by the launches
  size_t kernels_attributed = 0;  // of those, given a captured op
  size_t ops_imported = 0;        // captured ops (and ancestors) copied into the replay trace
};

// Gives the replayed kernels of `replay` the ops of the matching captured graphs. Appends the
// captured ops to replay.cpu on threads of their own (existing indices stay valid), adds a
// warning to replay.warnings for launches no captured graph matches, and counts the kernels
// it attributed in replay.graph_kernels_attributed.
GraphAttribution AttributeGraphReplays(TraceData& replay,
                                       const std::vector<const TraceData*>& captures);

}  // namespace sextant
