// Analyses of one allocator snapshot, per device: replay of the trace into allocated and
// reserved bytes over time, the peak and what was alive at it (grouped by call site),
// fragmentation and the state at snapshot time, and out-of-memory events.
//
// Semantics follow PyTorch's allocator and its viewer (torch/utils/viz/MemoryViz.js):
// - trace entries record the size the program requested (c10 CUDACachingAllocator records
//   the unrounded size), so the timeline is in requested bytes, as the viewer plots it; the
//   state at snapshot time gives both block bytes (rounded, what the allocator holds) and
//   requested bytes;
// - an allocation occupies memory from `alloc` until `free_completed`; a block whose free was
//   requested but is waiting on other streams (`free_requested`, record_stream) still counts,
//   as it does in the viewer's "Active Memory Timeline";
// - reserved memory grows at `segment_alloc`/`segment_map` and shrinks at
//   `segment_free`/`segment_unmap` (cudaMalloc/cudaFree, or expandable-segment mapping);
// - the trace is a ring buffer, so a free whose allocation is not in the trace was allocated
//   before recording began; together with blocks alive in the final state that the trace never
//   allocated, those give the level the timeline starts from. The replay therefore ends exactly
//   at the state the snapshot itself records when the two are consistent.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/memory_snapshot.h"

namespace sextant {

struct TimelinePoint {
  int64_t entry_index = -1;  // -1: the state before the first trace entry
  int64_t time_us = -1;
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};

struct LiveAllocation {
  int64_t address = 0;
  int64_t size = 0;
  StackId stack = 0;
  bool before_trace = false;  // allocated before the trace's first entry (stack unknown)
};

struct CallSiteTotal {
  std::string site;             // CallSiteLabel, or "<allocated before recording began>"
  std::vector<FrameId> frames;  // one representative stack from its call-site frame outwards
  int64_t bytes = 0;
  int64_t count = 0;
};

struct SegmentSummary {
  int64_t address = 0;
  int64_t total_size = 0;
  int64_t allocated_bytes = 0;  // active blocks (allocated or pending free)
  int64_t free_bytes = 0;       // total_size - allocated_bytes
  int64_t largest_free_bytes = 0;
  int64_t stream = 0;
  int64_t blocks = 0;
  std::string segment_type;
  bool is_expandable = false;
};

struct OomEvent {
  int64_t entry_index = 0;
  int64_t time_us = -1;
  int64_t requested_bytes = 0;
  int64_t device_free_bytes = -1;
  int64_t allocated_bytes = 0;  // at the moment of the failure
  int64_t reserved_bytes = 0;
  int64_t largest_free_block_bytes = 0;  // largest free range inside reserved segments then
  StackId stack = 0;
};

struct DeviceAnalysis {
  int64_t device = 0;
  int64_t trace_entries = 0;
  std::array<int64_t, 10> action_counts{};  // indexed by TraceAction
  bool has_timestamps = false;

  std::vector<TimelinePoint> timeline;  // initial state, then one point per trace entry
  int64_t initial_allocated_bytes = 0;
  int64_t initial_reserved_bytes = 0;
  // Allocations alive when recording began: freed in the trace without being allocated in it,
  // or alive at snapshot time and never allocated in it.
  int64_t allocations_before_trace = 0;

  int64_t peak_allocated_bytes = 0;
  int64_t peak_entry_index = -1;
  int64_t peak_time_us = -1;
  int64_t peak_reserved_bytes = 0;
  std::vector<LiveAllocation> alive_at_peak;
  std::vector<CallSiteTotal> sites_at_peak;  // by bytes, descending

  // State at snapshot time, from the snapshot's segments.
  int64_t segments = 0;
  int64_t blocks = 0;         // every block of every segment, free ones included
  int64_t active_blocks = 0;  // the blocks that hold an allocation (allocated or pending free)
  int64_t reserved_bytes = 0;
  int64_t allocated_bytes = 0;  // active_allocated + active_pending_free blocks
  int64_t pending_free_bytes = 0;
  int64_t requested_bytes = 0;    // bytes the program asked for in those blocks (before rounding)
  int64_t cached_free_bytes = 0;  // reserved - allocated: every cached free byte
  // The part of it inside segments that still hold an allocation: torch.cuda.empty_cache()
  // cannot return it (PyTorch's memory_stats "inactive_split"); the rest is whole free
  // segments, which it can.
  int64_t inactive_split_bytes = 0;
  int64_t largest_free_block_bytes = 0;
  int64_t large_segments = 0, small_segments = 0;
  std::vector<SegmentSummary> segment_summaries;  // by free bytes, descending
  std::vector<CallSiteTotal> sites_at_snapshot;

  // Replayed end level minus `requested_bytes`; 0 for a consistent snapshot.
  int64_t replay_mismatch_bytes = 0;

  std::vector<OomEvent> ooms;
};

struct SnapshotAnalysis {
  std::string source;
  bool legacy_schema = false;
  std::vector<DeviceAnalysis> devices;
};

SnapshotAnalysis AnalyzeSnapshot(const MemorySnapshot& snapshot);

// Groups allocations by call site, largest total first.
std::vector<CallSiteTotal> GroupByCallSite(const MemorySnapshot& snapshot,
                                           const std::vector<LiveAllocation>& allocations);

}  // namespace sextant
