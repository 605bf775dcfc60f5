// Activation recomputation: the forward ops that torch.utils.checkpoint reruns during
// backward, found by the recompute_fn Python frame they run under (the reader keeps those
// frames as TraceData::recompute_regions). TraceLens (TreePerfAnalyzer detect_recompute)
// marks the same ops, and splits its GPU timeline and op tables by the flag; `trace report`
// does the same whenever a trace has such frames.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

struct RecomputeFlags {
  std::vector<uint8_t> cpu;  // per trace.cpu event: it starts inside a recompute frame
  std::vector<uint8_t> gpu;  // per trace.gpu activity: launched from inside one
  bool any() const { return !cpu.empty(); }
};

// Empty flags when the trace has no recompute frame (recorded with with_stack=False, or no
// activation checkpointing).
RecomputeFlags MarkRecompute(const TraceData& trace);

// `events` split by the GPU flag: first the activities outside recomputation, then inside.
std::pair<std::vector<uint32_t>, std::vector<uint32_t>> SplitByRecompute(
    const RecomputeFlags& flags, const std::vector<uint32_t>& events);

}  // namespace sextant
