#include "snapshot/snapshot_analysis.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "snapshot/call_site.h"
#include "util/error.h"

namespace sextant {
namespace {

constexpr const char* kBeforeTraceSite = "<allocated before recording began>";
constexpr size_t kFramesPerSite = 8;
// Reconstructing the allocator layout costs one backward pass per OOM event; a run that hit
// thousands of OOMs (caught and retried) needs the first few only.
constexpr size_t kMaxOomLayouts = 32;

// Sizes are bounded per entry when read, but a hostile file can repeat one entry billions of
// times; totals are checked rather than allowed to wrap.
int64_t Add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    ThrowUserError("byte totals overflow 64 bits: this is not a real allocator snapshot");
  }
  return r;
}
int64_t Sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    ThrowUserError("byte totals overflow 64 bits: this is not a real allocator snapshot");
  }
  return r;
}

bool IsActive(BlockState s) {
  return s == BlockState::kActiveAllocated || s == BlockState::kActivePendingFree;
}

struct LiveBlock {
  int64_t size = 0;
  StackId stack = 0;
  bool before_trace = false;
};

// The allocator's address-space layout at one moment: reserved ranges and occupied blocks.
struct Layout {
  std::map<int64_t, int64_t> ranges;  // address -> size
  std::map<int64_t, int64_t> blocks;  // address -> size

  void AddRange(int64_t addr, int64_t size, bool merge) {
    auto [it, inserted] = ranges.emplace(addr, size);
    if (!inserted) it->second = std::max(it->second, size);
    if (!merge) return;
    auto next = std::next(it);
    if (next != ranges.end() && it->first + it->second == next->first) {
      it->second += next->second;
      ranges.erase(next);
    }
    if (it != ranges.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        ranges.erase(it);
      }
    }
  }
  void RemoveRange(int64_t addr, int64_t size, bool carve) {
    if (!carve) {
      ranges.erase(addr);
      return;
    }
    auto it = ranges.upper_bound(addr);
    if (it == ranges.begin()) return;
    --it;
    int64_t start = it->first, end = it->first + it->second, cut_end = addr + size;
    if (addr >= end) return;
    ranges.erase(it);
    if (start < addr) ranges.emplace(start, addr - start);
    if (cut_end < end) ranges.emplace(cut_end, end - cut_end);
  }
  int64_t LargestFree() const {
    int64_t largest = 0;
    for (const auto& [start, size] : ranges) {
      int64_t cursor = start, end = start + size;
      for (auto b = blocks.lower_bound(start); b != blocks.end() && b->first < end; ++b) {
        largest = std::max(largest, b->first - cursor);
        cursor = std::max(cursor, b->first + b->second);
      }
      largest = std::max(largest, end - cursor);
    }
    return largest;
  }
};

// The layout just after trace entry `index`, rebuilt backwards from the final state as
// MemoryViz.js does (undoing each later entry).
Layout LayoutAfter(const std::vector<const SnapshotSegment*>& segments,
                   const std::vector<TraceEntry>& trace, int64_t index) {
  Layout layout;
  for (const SnapshotSegment* s : segments) {
    layout.ranges[s->address] = s->total_size;
    for (const auto& b : s->blocks) {
      if (IsActive(b.state)) layout.blocks[b.address] = b.size;
    }
  }
  for (int64_t i = static_cast<int64_t>(trace.size()) - 1; i > index; --i) {
    const TraceEntry& e = trace[i];
    switch (e.action) {
      case TraceAction::kAlloc: layout.blocks.erase(e.addr); break;
      case TraceAction::kFreeCompleted: layout.blocks[e.addr] = e.size; break;
      case TraceAction::kSegmentAlloc: layout.RemoveRange(e.addr, e.size, false); break;
      case TraceAction::kSegmentFree: layout.AddRange(e.addr, e.size, false); break;
      case TraceAction::kSegmentMap: layout.RemoveRange(e.addr, e.size, true); break;
      case TraceAction::kSegmentUnmap: layout.AddRange(e.addr, e.size, true); break;
      default: break;
    }
  }
  return layout;
}

void SummariseSegments(const std::vector<const SnapshotSegment*>& segments,
                       const MemorySnapshot& snapshot, DeviceAnalysis& out) {
  std::vector<LiveAllocation> alive;
  for (const SnapshotSegment* s : segments) {
    SegmentSummary sum;
    sum.address = s->address;
    sum.total_size = s->total_size;
    sum.stream = s->stream;
    sum.segment_type = s->segment_type;
    sum.is_expandable = s->is_expandable;
    sum.blocks = static_cast<int64_t>(s->blocks.size());
    // Free space is whatever the active blocks do not cover: inactive blocks, and for
    // expandable segments any range the blocks do not describe.
    int64_t cursor = s->address, end = s->address + s->total_size;
    for (const auto& b : s->blocks) {
      if (!IsActive(b.state)) continue;
      out.active_blocks += 1;
      sum.allocated_bytes = Add(sum.allocated_bytes, b.size);
      sum.largest_free_bytes = std::max(sum.largest_free_bytes, b.address - cursor);
      cursor = std::max(cursor, b.address + b.size);
      if (b.state == BlockState::kActivePendingFree) {
        out.pending_free_bytes = Add(out.pending_free_bytes, b.size);
      }
      out.requested_bytes = Add(out.requested_bytes, b.requested_size);
      alive.push_back(LiveAllocation{b.address, b.size, b.stack, false});
    }
    sum.largest_free_bytes = std::max(sum.largest_free_bytes, end - cursor);
    sum.free_bytes = sum.total_size - sum.allocated_bytes;
    out.segments += 1;
    out.blocks += sum.blocks;
    out.reserved_bytes = Add(out.reserved_bytes, sum.total_size);
    out.allocated_bytes = Add(out.allocated_bytes, sum.allocated_bytes);
    if (sum.allocated_bytes > 0)
      out.inactive_split_bytes = Add(out.inactive_split_bytes, sum.free_bytes);
    out.largest_free_block_bytes = std::max(out.largest_free_block_bytes, sum.largest_free_bytes);
    if (s->segment_type == "small") {
      out.small_segments += 1;
    } else {
      out.large_segments += 1;
    }
    out.segment_summaries.push_back(std::move(sum));
  }
  out.cached_free_bytes = out.reserved_bytes - out.allocated_bytes;
  std::stable_sort(
      out.segment_summaries.begin(), out.segment_summaries.end(),
      [](const SegmentSummary& a, const SegmentSummary& b) { return a.free_bytes > b.free_bytes; });
  out.sites_at_snapshot = GroupByCallSite(snapshot, alive);
}

DeviceAnalysis AnalyzeDevice(const MemorySnapshot& snapshot, int64_t device) {
  DeviceAnalysis out;
  out.device = device;
  std::vector<const SnapshotSegment*> segments;
  for (const auto& s : snapshot.segments) {
    if (s.device == device) segments.push_back(&s);
  }
  std::sort(
      segments.begin(), segments.end(),
      [](const SnapshotSegment* a, const SnapshotSegment* b) { return a->address < b->address; });
  SummariseSegments(segments, snapshot, out);

  static const std::vector<TraceEntry> kEmpty;
  const auto& trace = device < static_cast<int64_t>(snapshot.device_traces.size())
                          ? snapshot.device_traces[device]
                          : kEmpty;
  out.trace_entries = static_cast<int64_t>(trace.size());

  // Blocks alive in the final state, by address.
  std::unordered_map<int64_t, LiveBlock> final_blocks;
  for (const SnapshotSegment* s : segments) {
    for (const auto& b : s->blocks) {
      // Trace entries carry the size the program asked for, not the rounded block size.
      if (IsActive(b.state)) final_blocks[b.address] = LiveBlock{b.requested_size, b.stack, false};
    }
  }

  // Pass 1: net changes relative to the (not yet known) starting level, and the allocations
  // that predate the trace.
  std::unordered_map<int64_t, LiveBlock> live;
  live.reserve(trace.size() / 2 + 16);
  std::vector<LiveAllocation> before_trace;
  std::vector<int64_t> allocated_delta(trace.size()), reserved_delta(trace.size());
  int64_t allocated = 0, reserved = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    out.action_counts[static_cast<size_t>(e.action)] += 1;
    if (e.time_us >= 0) out.has_timestamps = true;
    switch (e.action) {
      case TraceAction::kAlloc:
        live[e.addr] = LiveBlock{e.size, e.stack, false};
        allocated = Add(allocated, e.size);
        break;
      case TraceAction::kFreeRequested:
      case TraceAction::kFreeCompleted: {
        auto it = live.find(e.addr);
        if (it == live.end()) {
          before_trace.push_back(LiveAllocation{e.addr, e.size, 0, true});
          it = live.emplace(e.addr, LiveBlock{e.size, 0, true}).first;
        }
        if (e.action == TraceAction::kFreeCompleted) {
          allocated = Sub(allocated, it->second.size);
          live.erase(it);
        }
        break;
      }
      case TraceAction::kSegmentAlloc:
      case TraceAction::kSegmentMap: reserved = Add(reserved, e.size); break;
      case TraceAction::kSegmentFree:
      case TraceAction::kSegmentUnmap: reserved = Sub(reserved, e.size); break;
      default: break;
    }
    allocated_delta[i] = allocated;
    reserved_delta[i] = reserved;
  }
  // Blocks alive at the end that the trace never allocated were alive throughout.
  std::vector<LiveAllocation> alive_throughout;
  for (const auto& [addr, block] : final_blocks) {
    if (!live.count(addr))
      alive_throughout.push_back(LiveAllocation{addr, block.size, block.stack, false});
  }
  std::sort(alive_throughout.begin(), alive_throughout.end(),
            [](const LiveAllocation& a, const LiveAllocation& b) { return a.address < b.address; });
  out.allocations_before_trace =
      static_cast<int64_t>(before_trace.size() + alive_throughout.size());
  for (const auto& a : before_trace) {
    out.initial_allocated_bytes = Add(out.initial_allocated_bytes, a.size);
  }
  for (const auto& a : alive_throughout) {
    out.initial_allocated_bytes = Add(out.initial_allocated_bytes, a.size);
  }
  out.initial_reserved_bytes = Sub(out.reserved_bytes, reserved);
  out.replay_mismatch_bytes = Sub(Add(out.initial_allocated_bytes, allocated), out.requested_bytes);

  // The timeline, absolute, and its peaks (first occurrence wins).
  out.timeline.reserve(trace.size() + 1);
  out.timeline.push_back(TimelinePoint{-1, trace.empty() ? -1 : trace.front().time_us,
                                       out.initial_allocated_bytes, out.initial_reserved_bytes});
  out.peak_allocated_bytes = out.initial_allocated_bytes;
  out.peak_reserved_bytes = out.initial_reserved_bytes;
  out.peak_time_us = out.timeline.front().time_us;
  for (size_t i = 0; i < trace.size(); ++i) {
    TimelinePoint p{static_cast<int64_t>(i), trace[i].time_us,
                    Add(out.initial_allocated_bytes, allocated_delta[i]),
                    Add(out.initial_reserved_bytes, reserved_delta[i])};
    if (p.allocated_bytes > out.peak_allocated_bytes) {
      out.peak_allocated_bytes = p.allocated_bytes;
      out.peak_entry_index = p.entry_index;
      out.peak_time_us = p.time_us;
    }
    out.peak_reserved_bytes = std::max(out.peak_reserved_bytes, p.reserved_bytes);
    out.timeline.push_back(p);
  }

  // Pass 2: replay up to the peak to list what was alive there.
  std::unordered_map<int64_t, LiveBlock> at_peak;
  for (const auto& a : before_trace) at_peak[a.address] = LiveBlock{a.size, a.stack, true};
  for (const auto& a : alive_throughout) at_peak[a.address] = LiveBlock{a.size, a.stack, false};
  for (int64_t i = 0; i <= out.peak_entry_index; ++i) {
    const TraceEntry& e = trace[i];
    if (e.action == TraceAction::kAlloc) {
      at_peak[e.addr] = LiveBlock{e.size, e.stack, false};
    } else if (e.action == TraceAction::kFreeCompleted) {
      at_peak.erase(e.addr);
    }
  }
  out.alive_at_peak.reserve(at_peak.size());
  for (const auto& [addr, b] : at_peak) {
    out.alive_at_peak.push_back(LiveAllocation{addr, b.size, b.stack, b.before_trace});
  }
  std::sort(out.alive_at_peak.begin(), out.alive_at_peak.end(),
            [](const LiveAllocation& a, const LiveAllocation& b) {
              return a.size != b.size ? a.size > b.size : a.address < b.address;
            });
  out.sites_at_peak = GroupByCallSite(snapshot, out.alive_at_peak);

  for (size_t i = 0; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    if (e.action != TraceAction::kOom) continue;
    OomEvent oom;
    oom.entry_index = static_cast<int64_t>(i);
    oom.time_us = e.time_us;
    oom.requested_bytes = e.size;
    oom.device_free_bytes = e.device_free;
    oom.allocated_bytes = out.timeline[i + 1].allocated_bytes;
    oom.reserved_bytes = out.timeline[i + 1].reserved_bytes;
    oom.stack = e.stack;
    oom.largest_free_block_bytes =
        out.ooms.size() < kMaxOomLayouts
            ? LayoutAfter(segments, trace, static_cast<int64_t>(i)).LargestFree()
            : -1;
    out.ooms.push_back(oom);
  }
  return out;
}

}  // namespace

std::vector<CallSiteTotal> GroupByCallSite(const MemorySnapshot& snapshot,
                                           const std::vector<LiveAllocation>& allocations) {
  std::vector<CallSiteTotal> sites;
  std::unordered_map<std::string, size_t> index_by_label;
  std::unordered_map<StackId, size_t> index_by_stack;
  for (const auto& a : allocations) {
    size_t idx;
    StackId key = a.before_trace ? -1 : a.stack;
    auto cached = index_by_stack.find(key);
    if (cached != index_by_stack.end()) {
      idx = cached->second;
    } else {
      std::string label = a.before_trace ? kBeforeTraceSite : CallSiteLabel(snapshot, a.stack);
      auto [it, inserted] = index_by_label.emplace(label, sites.size());
      if (inserted) {
        CallSiteTotal site;
        site.site = std::move(label);
        if (!a.before_trace) site.frames = SiteFrames(snapshot, a.stack, kFramesPerSite);
        sites.push_back(std::move(site));
      }
      idx = it->second;
      index_by_stack.emplace(key, idx);
    }
    sites[idx].bytes = Add(sites[idx].bytes, a.size);
    sites[idx].count += 1;
  }
  std::stable_sort(sites.begin(), sites.end(), [](const CallSiteTotal& a, const CallSiteTotal& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site;
  });
  return sites;
}

SnapshotAnalysis AnalyzeSnapshot(const MemorySnapshot& snapshot) {
  SnapshotAnalysis out;
  out.source = snapshot.source;
  out.legacy_schema = snapshot.legacy_schema;
  for (int64_t device : snapshot.Devices()) out.devices.push_back(AnalyzeDevice(snapshot, device));
  return out;
}

}  // namespace sextant
