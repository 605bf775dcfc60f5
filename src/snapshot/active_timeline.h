// The "active memory timeline" of one device: every allocation the trace knows of drawn as a
// band over time, stacked the way PyTorch's viewer stacks them (torch/utils/viz/MemoryViz.js,
// process_alloc_data; `python -m torch.cuda._memory_viz trace_plot`):
// - a new allocation goes on top of the stack and keeps its vertical offset for its lifetime;
// - when one is freed, every allocation above it drops down by its size;
// - allocations alive before the trace began start the stack: those alive at snapshot time
//   that the trace never allocated at the bottom, then those whose free is in the trace, the
//   one freed first on top;
// - only the largest allocations get a band of their own; the rest are merged into one
//   "smaller allocations" band stacked above them.
// Allocations, sizes and lifetimes follow the allocated timeline of snapshot_analysis.h exactly
// (requested bytes, alive from `alloc` to `free_completed`), so at every timeline point the
// bands alive plus the merged bytes add up to DeviceAnalysis::timeline[i].allocated_bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "snapshot/memory_snapshot.h"
#include "snapshot/snapshot_analysis.h"

namespace sextant {

struct BandOffset {
  int64_t entry_index = -1;  // offset holds from the state after this entry (-1: the start)
  int64_t offset_bytes = 0;  // bottom of the band above the bottom of the stack
};

struct ActiveBand {
  int64_t address = 0;
  int64_t size = 0;
  StackId stack = 0;                // allocation stack; for `before_trace`, the stack of its free
  bool before_trace = false;        // known only from its free (allocated before recording began)
  int64_t alloc_entry = -1;         // trace entry of the `alloc`; -1: alive from the start
  int64_t free_entry = -1;          // trace entry of the `free_completed`; -1: alive at the end
  std::vector<BandOffset> offsets;  // first at the allocation, then one per drop
};

struct ActiveTimelineOptions {
  size_t max_bands = 3000;  // the largest allocations drawn as bands of their own
  // Bound on all bands' offset changes together (each drop of each band is one); when the
  // largest `max_bands` allocations would need more, fewer bands are drawn.
  size_t max_offset_changes = 40000;
};

struct ActiveTimeline {
  int64_t allocations = 0;           // every allocation the replay knows of
  int64_t smallest_drawn_bytes = 0;  // size of the smallest drawn band; 0 if none
  int64_t largest_merged_bytes = 0;  // size of the largest merged allocation; 0 if none
  int64_t merged_allocations = 0;    // allocations - bands.size()
  std::vector<ActiveBand> bands;     // the drawn allocations, in the order they were stacked
  // Bytes of merged allocations alive at each timeline point: merged_bytes[i] belongs to
  // DeviceAnalysis::timeline[i] (the state after entry i - 1).
  std::vector<int64_t> merged_bytes;
};

// `device` must be AnalyzeSnapshot's result for one device of `snapshot`.
ActiveTimeline BuildActiveTimeline(const MemorySnapshot& snapshot, const DeviceAnalysis& device,
                                   const ActiveTimelineOptions& options = {});

// Bands alive in the state after `entry_index` (-1: the start), as indices into `bands`.
std::vector<size_t> BandsAliveAt(const ActiveTimeline& timeline, int64_t entry_index);

// A band's offset in the state after `entry_index`; the band must be alive then.
int64_t BandOffsetAt(const ActiveBand& band, int64_t entry_index);

}  // namespace sextant
