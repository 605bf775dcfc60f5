#include "snapshot/active_timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace sextant {
namespace {

// One allocation of the replay, before the choice of which get a band.
struct TimelineAllocation {
  int64_t address = 0;
  int64_t size = 0;
  StackId stack = 0;
  bool before_trace = false;
  int64_t alloc_entry = -1;
  int64_t free_entry = -1;
};

bool IsActiveBlock(BlockState s) {
  return s == BlockState::kActiveAllocated || s == BlockState::kActivePendingFree;
}

// The allocations of one device's trace, found exactly as AnalyzeDevice finds them, the trace
// entry that allocates or frees each (`entry_allocation`, -1 for other entries), and the order
// the ones alive at the start are stacked in.
struct Replay {
  std::vector<TimelineAllocation> allocations;
  std::vector<int64_t> entry_allocation;
  std::vector<int64_t> initial_stack;  // bottom first
};

Replay ReplayAllocations(const MemorySnapshot& snapshot, int64_t device,
                         const std::vector<TraceEntry>& trace) {
  Replay r;
  r.entry_allocation.assign(trace.size(), -1);
  std::unordered_map<int64_t, int64_t> live;  // address -> allocation
  live.reserve(trace.size() / 2 + 16);
  std::vector<int64_t> known_from_free;  // in the order their frees appear
  for (size_t i = 0; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    const auto entry = static_cast<int64_t>(i);
    if (e.action == TraceAction::kAlloc) {
      // An address allocated again without a free: the analysis keeps counting the first
      // allocation to the end, and so does its band.
      live[e.addr] = static_cast<int64_t>(r.allocations.size());
      r.entry_allocation[i] = static_cast<int64_t>(r.allocations.size());
      r.allocations.push_back(TimelineAllocation{e.addr, e.size, e.stack, false, entry, -1});
    } else if (e.action == TraceAction::kFreeRequested || e.action == TraceAction::kFreeCompleted) {
      auto it = live.find(e.addr);
      if (it == live.end()) {
        auto id = static_cast<int64_t>(r.allocations.size());
        r.allocations.push_back(TimelineAllocation{e.addr, e.size, e.stack, true, -1, -1});
        known_from_free.push_back(id);
        it = live.emplace(e.addr, id).first;
      }
      if (e.action == TraceAction::kFreeCompleted) {
        r.allocations[it->second].free_entry = entry;
        r.entry_allocation[i] = it->second;
        live.erase(it);
      }
    }
  }
  // Blocks active at snapshot time that the trace never allocated were alive throughout; the
  // last block listed at an address wins, as in the analysis.
  std::map<int64_t, std::pair<int64_t, StackId>> final_blocks;
  for (const auto& s : snapshot.segments) {
    if (s.device != device) continue;
    for (const auto& b : s.blocks) {
      if (IsActiveBlock(b.state)) final_blocks[b.address] = {b.requested_size, b.stack};
    }
  }
  for (const auto& [address, block] : final_blocks) {
    if (live.count(address)) continue;
    r.initial_stack.push_back(static_cast<int64_t>(r.allocations.size()));
    r.allocations.push_back(TimelineAllocation{address, block.first, block.second, false, -1, -1});
  }
  // Above them, those known from their frees, the first freed on top, so that frees at the
  // start of the trace move nothing else.
  r.initial_stack.insert(r.initial_stack.end(), known_from_free.rbegin(), known_from_free.rend());
  return r;
}

// Stacks the allocations through the trace. With `out`, records the drawn bands and the
// merged bytes; without, only counts offset changes and stops once past `budget`.
size_t Stack(const Replay& r, const std::vector<TraceEntry>& trace, const std::vector<char>& drawn,
             size_t budget, ActiveTimeline* out) {
  const size_t n = r.allocations.size();
  std::vector<int64_t> stack;                // drawn allocations, bottom first
  std::vector<size_t> position(n, 0);        // index in `stack`
  std::vector<int64_t> offset(n, 0);         // current offset of a drawn allocation
  std::vector<size_t> band(out ? n : 0, 0);  // band index of a drawn allocation
  int64_t drawn_total = 0, merged = 0;
  size_t changes = 0;
  auto push = [&](int64_t id, int64_t entry) {
    const TimelineAllocation& a = r.allocations[id];
    if (!drawn[id]) {
      merged += a.size;
      return;
    }
    position[id] = stack.size();
    offset[id] = drawn_total;
    stack.push_back(id);
    drawn_total += a.size;
    if (out) {
      band[id] = out->bands.size();
      out->bands.push_back(ActiveBand{a.address,
                                      a.size,
                                      a.stack,
                                      a.before_trace,
                                      a.alloc_entry,
                                      a.free_entry,
                                      {BandOffset{entry, offset[id]}}});
    }
  };
  for (int64_t id : r.initial_stack) push(id, -1);
  if (out) {
    out->merged_bytes.reserve(trace.size() + 1);
    out->merged_bytes.push_back(merged);
  }
  for (size_t i = 0; i < trace.size(); ++i) {
    int64_t id = r.entry_allocation[i];
    if (id >= 0 && trace[i].action == TraceAction::kAlloc) {
      push(id, static_cast<int64_t>(i));
    } else if (id >= 0) {  // free_completed
      const int64_t size = r.allocations[id].size;
      if (!drawn[id]) {
        merged -= size;
      } else {
        size_t p = position[id];
        for (size_t j = p + 1; j < stack.size(); ++j) {
          int64_t above = stack[j];
          offset[above] -= size;
          position[above] = j - 1;
          if (out) {
            out->bands[band[above]].offsets.push_back(
                BandOffset{static_cast<int64_t>(i), offset[above]});
          }
        }
        changes += stack.size() - p - 1;
        stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(p));
        drawn_total -= size;
        if (!out && changes > budget) return changes;
      }
    }
    if (out) out->merged_bytes.push_back(merged);
  }
  return changes;
}

}  // namespace

ActiveTimeline BuildActiveTimeline(const MemorySnapshot& snapshot, const DeviceAnalysis& device,
                                   const ActiveTimelineOptions& options) {
  static const std::vector<TraceEntry> kNoTrace;
  const auto& trace =
      device.device >= 0 && device.device < static_cast<int64_t>(snapshot.device_traces.size())
          ? snapshot.device_traces[device.device]
          : kNoTrace;
  Replay r = ReplayAllocations(snapshot, device.device, trace);
  const size_t n = r.allocations.size();
  std::vector<int64_t> by_size(n);
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int64_t a, int64_t b) {
    return r.allocations[a].size > r.allocations[b].size;
  });
  size_t k = std::min(options.max_bands, n);
  std::vector<char> drawn(n, 0);
  while (true) {
    std::fill(drawn.begin(), drawn.end(), 0);
    for (size_t i = 0; i < k; ++i) drawn[by_size[i]] = 1;
    if (k == 0 ||
        Stack(r, trace, drawn, options.max_offset_changes, nullptr) <= options.max_offset_changes) {
      break;
    }
    k = k * 3 / 4;
  }

  ActiveTimeline out;
  out.allocations = static_cast<int64_t>(n);
  out.merged_allocations = static_cast<int64_t>(n - k);
  if (k > 0) out.smallest_drawn_bytes = r.allocations[by_size[k - 1]].size;
  if (k < n) out.largest_merged_bytes = r.allocations[by_size[k]].size;
  Stack(r, trace, drawn, options.max_offset_changes, &out);
  return out;
}

std::vector<size_t> BandsAliveAt(const ActiveTimeline& timeline, int64_t entry_index) {
  std::vector<size_t> alive;
  for (size_t i = 0; i < timeline.bands.size(); ++i) {
    const ActiveBand& b = timeline.bands[i];
    if (b.alloc_entry <= entry_index && (b.free_entry < 0 || b.free_entry > entry_index)) {
      alive.push_back(i);
    }
  }
  return alive;
}

int64_t BandOffsetAt(const ActiveBand& band, int64_t entry_index) {
  int64_t offset = band.offsets.front().offset_bytes;
  for (const BandOffset& o : band.offsets) {
    if (o.entry_index > entry_index) break;
    offset = o.offset_bytes;
  }
  return offset;
}

}  // namespace sextant
