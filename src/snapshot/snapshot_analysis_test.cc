#include "snapshot/snapshot_analysis.h"

#include <algorithm>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "snapshot/call_site.h"
#include "snapshot/memory_snapshot.h"
#include "snapshot/pickle_reader.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

const char* const kCorpus[] = {
    "SnapViewer/memory.pickle",
    "Yiyi-philosophy-LLM-inference/1.3b_snapshot.pickle",
    "Yiyi-philosophy-LLM-inference/oom_snapshot.pickle",
    "kkaitlyn111-cs336-a2-systems/memory_2.7b_forward.pickle",
    "kkaitlyn111-cs336-a2-systems/memory_ctx128_forward.pickle",
    "kkaitlyn111-cs336-a2-systems/memory_ctx128_fullstep.pickle",
    "kkaitlyn111-cs336-a2-systems/memory_ctx256_forward.pickle",
    "kkaitlyn111-cs336-a2-systems/memory_ctx512_forward.pickle",
    "silmont2000-assignment2-systems/mem_snapshot.pickle",
    "silmont2000-assignment2-systems/memory_forward_bf16_128.pickle",
    "silmont2000-assignment2-systems/memory_forward_fp32_128.pickle",
};

std::string SnapshotPath(const char* name) { return CorpusPath("snapshots/") + name; }

int64_t IntAt(const PickleDocument& doc, PickleValue dict, const char* key, int64_t fallback = 0) {
  const PickleValue* v = doc.Find(dict, key);
  return v && v->kind == PickleKind::kInt ? v->integer : fallback;
}

// What the snapshot says about itself, read straight from the pickle's dicts, and a plain
// replay of device 0's trace: the reference the analysis is checked against.
struct Reference {
  int64_t reserved = 0;          // sum of segments' total_size
  int64_t active = 0;            // sum of segments' active_size
  int64_t active_blocks = 0;     // sum of sizes of blocks in an active state
  int64_t active_requested = 0;  // sum of their requested sizes
  int64_t segments = 0, blocks = 0;
  int64_t peak = 0;
  int64_t end_level = 0;
};

Reference ComputeReference(const std::string& path) {
  std::string bytes(InputText::Load(path).text());
  PickleDocument doc = ReadPickle(bytes, path);
  Reference ref;
  std::map<int64_t, int64_t> final_alive;  // address -> size
  for (PickleValue seg : doc.Items(*doc.Find(doc.root, "segments"))) {
    ref.segments += 1;
    ref.reserved += IntAt(doc, seg, "total_size");
    ref.active += IntAt(doc, seg, "active_size");
    int64_t addr = IntAt(doc, seg, "address");
    for (PickleValue block : doc.Items(*doc.Find(seg, "blocks"))) {
      ref.blocks += 1;
      int64_t size = IntAt(doc, block, "size");
      int64_t block_addr = IntAt(doc, block, "address", addr);
      std::string state(doc.Text(*doc.Find(block, "state")));
      if (state == "active_allocated" || state == "active_pending_free") {
        int64_t requested = IntAt(doc, block, "requested_size");
        ref.active_blocks += size;
        ref.active_requested += requested;
        final_alive[block_addr] = requested;  // trace entries carry requested sizes
      }
      addr = block_addr + size;
    }
  }
  // Replay, first pass: a free of something never allocated in the trace was allocated
  // before it started; so was a block alive at the end that the trace never allocated.
  const auto& entries = doc.Items(doc.Items(*doc.Find(doc.root, "device_traces"))[0]);
  std::map<int64_t, int64_t> alive;
  int64_t start = 0;
  for (PickleValue e : entries) {
    std::string action(doc.Text(*doc.Find(e, "action")));
    int64_t addr = IntAt(doc, e, "addr"), size = IntAt(doc, e, "size");
    if (action == "alloc") alive[addr] = size;
    if (action == "free_requested" || action == "free_completed") {
      if (!alive.count(addr)) {
        alive[addr] = size;
        start += size;
      }
      if (action == "free_completed") alive.erase(addr);
    }
  }
  for (const auto& [addr, size] : final_alive) {
    if (!alive.count(addr)) start += size;
  }
  // Second pass: memory is held from alloc to free_completed.
  int64_t level = start;
  ref.peak = start;
  alive.clear();
  for (PickleValue e : entries) {
    std::string action(doc.Text(*doc.Find(e, "action")));
    int64_t addr = IntAt(doc, e, "addr"), size = IntAt(doc, e, "size");
    if (action == "alloc") {
      alive[addr] = size;
      level += size;
    } else if (action == "free_completed") {
      level -= alive.count(addr) ? alive[addr] : size;
      alive.erase(addr);
    }
    ref.peak = std::max(ref.peak, level);
  }
  ref.end_level = level;
  return ref;
}

TEST(SnapshotAnalysisTest, EveryCorpusSnapshotAgreesWithPlainReplayAndItsOwnState) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  for (const char* name : kCorpus) {
    std::string path = SnapshotPath(name);
    SCOPED_TRACE(path);
    Reference ref = ComputeReference(path);
    SnapshotAnalysis a = AnalyzeSnapshot(LoadMemorySnapshot(path));
    ASSERT_EQ(a.devices.size(), 1u);
    const DeviceAnalysis& d = a.devices[0];
    EXPECT_EQ(d.device, 0);
    EXPECT_EQ(d.segments, ref.segments);
    EXPECT_EQ(d.blocks, ref.blocks);
    EXPECT_EQ(d.reserved_bytes, ref.reserved);
    EXPECT_EQ(d.allocated_bytes, ref.active_blocks);
    EXPECT_EQ(d.cached_free_bytes, ref.reserved - ref.active_blocks);
    // SnapViewer's file is a hand-made sample whose segment totals and trace addresses do not
    // match its blocks; every real snapshot is self-consistent, and then the replay must end
    // exactly at the recorded state.
    bool synthetic = std::string(name).rfind("SnapViewer/", 0) == 0;
    if (!synthetic) {
      EXPECT_EQ(ref.active_blocks, ref.active);
      EXPECT_EQ(d.replay_mismatch_bytes, 0);
    }
    EXPECT_EQ(d.peak_allocated_bytes, ref.peak);
    EXPECT_EQ(d.timeline.back().allocated_bytes, ref.end_level);
    EXPECT_EQ(d.requested_bytes, ref.active_requested);
    EXPECT_EQ(d.replay_mismatch_bytes, ref.end_level - ref.active_requested);
    EXPECT_EQ(d.timeline.back().reserved_bytes, ref.reserved);
    EXPECT_GE(d.peak_reserved_bytes, d.reserved_bytes);
    int64_t alive_sum = 0;
    for (const auto& l : d.alive_at_peak) alive_sum += l.size;
    EXPECT_EQ(alive_sum, d.peak_allocated_bytes);
    int64_t site_sum = 0;
    for (const auto& s : d.sites_at_peak) site_sum += s.bytes;
    EXPECT_EQ(site_sum, d.peak_allocated_bytes);
  }
}

std::string Fixture(const char* name) {
  return std::string(SEXTANT_SOURCE_DIR) + "/tests/data/snapshot/" + name;
}

// Expected values worked out by hand from the events in tests/data/snapshot/make_fixtures.py.
TEST(SnapshotAnalysisTest, HandCheckedFixtureReplay) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  ASSERT_EQ(a.devices.size(), 2u);
  const DeviceAnalysis& d = a.devices[0];
  // Before the trace: block C+512K (400,000 B, freed at entry 11 without an alloc) and the
  // block at C (500,000 B requested, alive at the end, never allocated in the trace).
  EXPECT_EQ(d.initial_allocated_bytes, 900000);
  EXPECT_EQ(d.allocations_before_trace, 2);
  // Reserved at the end is 4 + 2 + 1 MiB; the trace adds 4 + 2 (+2 -2 mapped, +1 -1) MiB.
  EXPECT_EQ(d.reserved_bytes, 7340032);
  EXPECT_EQ(d.initial_reserved_bytes, 1048576);
  // Levels: 900000, +1000000, +1048576, +2000000, -1048576 (entry 6), +2000000 (entry 7).
  EXPECT_EQ(d.peak_allocated_bytes, 5900000);
  EXPECT_EQ(d.peak_entry_index, 7);
  EXPECT_EQ(d.peak_time_us, 1700);
  EXPECT_EQ(d.peak_reserved_bytes, 9437184);  // 7 MiB + 2 MiB mapped at entry 12
  ASSERT_EQ(d.timeline.size(), 17u);
  EXPECT_EQ(d.timeline[6].allocated_bytes, 4948576);  // after entry 5 (free requested only)
  EXPECT_EQ(d.timeline[7].allocated_bytes, 3900000);  // after entry 6 (free completed)
  EXPECT_EQ(d.timeline.back().allocated_bytes, 3500000);
  EXPECT_EQ(d.replay_mismatch_bytes, 0);
  EXPECT_EQ(d.action_counts[static_cast<size_t>(TraceAction::kAlloc)], 4);
  EXPECT_EQ(d.action_counts[static_cast<size_t>(TraceAction::kOom)], 1);

  ASSERT_EQ(d.alive_at_peak.size(), 5u);
  ASSERT_EQ(d.sites_at_peak.size(), 5u);
  EXPECT_EQ(d.sites_at_peak[0].site, "forward (proj/model.py:20)");
  EXPECT_EQ(d.sites_at_peak[0].bytes, 2000000);
  EXPECT_EQ(d.sites_at_peak[1].site, "forward (proj/model.py:30)");
  EXPECT_EQ(d.sites_at_peak[2].site, "make_weights (proj/train.py:10)");
  EXPECT_EQ(d.sites_at_peak[3].site, "load (proj/data.py:5)");
  EXPECT_EQ(d.sites_at_peak[4].site, "<allocated before recording began>");
  EXPECT_EQ(d.sites_at_peak[4].bytes, 400000);
  // A site's frames run from its call-site frame outwards: the allocator frame inside it and
  // the hidden unwinder frame are left out.
  ASSERT_EQ(d.sites_at_peak[0].frames.size(), 3u);
  EXPECT_EQ(s.frames[d.sites_at_peak[0].frames[0]].name, "forward");

  // At snapshot time: active blocks 1 MiB + 2 MiB (pending free) + 512 KiB.
  EXPECT_EQ(d.allocated_bytes, 3670016);
  EXPECT_EQ(d.pending_free_bytes, 2097152);
  EXPECT_EQ(d.requested_bytes, 3500000);
  EXPECT_EQ(d.cached_free_bytes, 3670016);
  // Cached free space inside segments that hold an allocation: A's inactive 1 MiB and C's
  // inactive 512 KiB; B (2 MiB, all free) is what empty_cache() could return.
  EXPECT_EQ(d.inactive_split_bytes, 1048576 + 524288);
  EXPECT_EQ(d.blocks, 6);
  EXPECT_EQ(d.active_blocks, 3);
  EXPECT_EQ(d.largest_free_block_bytes, 2097152);  // segment B, empty
  EXPECT_EQ(d.segments, 3);
  EXPECT_EQ(d.small_segments, 1);
  ASSERT_EQ(d.segment_summaries.size(), 3u);
  EXPECT_EQ(d.segment_summaries[0].address, 0x1000000);  // most free first

  // OOM at entry 9: 8 MiB requested, driver had 1 MiB; allocated 3,900,000 and 7 MiB
  // reserved; largest free range then: the whole of segment B.
  ASSERT_EQ(d.ooms.size(), 1u);
  EXPECT_EQ(d.ooms[0].entry_index, 9);
  EXPECT_EQ(d.ooms[0].requested_bytes, 8388608);
  EXPECT_EQ(d.ooms[0].device_free_bytes, 1048576);
  EXPECT_EQ(d.ooms[0].allocated_bytes, 3900000);
  EXPECT_EQ(d.ooms[0].reserved_bytes, 7340032);
  EXPECT_EQ(d.ooms[0].largest_free_block_bytes, 2097152);
  EXPECT_EQ(CallSiteLabel(s, d.ooms[0].stack), "forward (proj/model.py:20)");

  // Device 1 has one block and no trace: its peak is its state.
  const DeviceAnalysis& d1 = a.devices[1];
  EXPECT_EQ(d1.device, 1);
  EXPECT_EQ(d1.trace_entries, 0);
  EXPECT_EQ(d1.peak_allocated_bytes, 1048576);
  EXPECT_EQ(d1.peak_entry_index, -1);
  EXPECT_EQ(d1.sites_at_peak[0].site, "<no stack recorded>");
}

TEST(SnapshotAnalysisTest, StateOnlySnapshotHasNoTimelineButAState) {
  SnapshotAnalysis a = AnalyzeSnapshot(LoadMemorySnapshot(Fixture("state_only_p0.pickle")));
  ASSERT_EQ(a.devices.size(), 1u);
  const DeviceAnalysis& d = a.devices[0];
  EXPECT_EQ(d.trace_entries, 0);
  EXPECT_EQ(d.timeline.size(), 1u);
  EXPECT_EQ(d.reserved_bytes, 6291456);
  EXPECT_EQ(d.allocated_bytes, 3145728);
  EXPECT_EQ(d.peak_allocated_bytes, 3000000);  // requested bytes of the two active blocks
}

TEST(SnapshotAnalysisTest, ExpandableSegmentMapAndUnmapMoveReservedAndLayout) {
  // One expandable segment mapped in two 2 MiB steps, with one 1 MiB block, then the second
  // step unmapped; an OOM in between sees 4 MiB mapped with 3 MiB free in one range.
  MemorySnapshot s;
  s.stacks.emplace_back();
  SnapshotSegment seg;
  seg.address = 0x10000000;
  seg.total_size = 2 << 20;
  seg.is_expandable = true;
  seg.blocks.push_back(
      SnapshotBlock{0x10000000, 1 << 20, 1 << 20, BlockState::kActiveAllocated, 0});
  seg.blocks.push_back(SnapshotBlock{0x10100000, 1 << 20, 1 << 20, BlockState::kInactive, 0});
  s.segments.push_back(seg);
  s.device_traces.resize(1);
  auto& t = s.device_traces[0];
  t.push_back(TraceEntry{TraceAction::kSegmentMap, 0x10000000, 2 << 20, 0, -1, -1, 0});
  t.push_back(TraceEntry{TraceAction::kAlloc, 0x10000000, 1 << 20, 0, -1, -1, 0});
  t.push_back(TraceEntry{TraceAction::kSegmentMap, 0x10200000, 2 << 20, 0, -1, -1, 0});
  t.push_back(TraceEntry{TraceAction::kOom, 0, 8 << 20, 0, -1, 0, 0});
  t.push_back(TraceEntry{TraceAction::kSegmentUnmap, 0x10200000, 2 << 20, 0, -1, -1, 0});
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  const DeviceAnalysis& d = a.devices[0];
  EXPECT_EQ(d.initial_reserved_bytes, 0);
  EXPECT_EQ(d.peak_reserved_bytes, 4 << 20);
  ASSERT_EQ(d.ooms.size(), 1u);
  EXPECT_EQ(d.ooms[0].reserved_bytes, 4 << 20);
  EXPECT_EQ(d.ooms[0].largest_free_block_bytes, 3 << 20);
  EXPECT_EQ(d.replay_mismatch_bytes, 0);
}

}  // namespace
}  // namespace sextant
