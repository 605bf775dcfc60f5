#include "snapshot/active_timeline.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "snapshot/memory_snapshot.h"
#include "snapshot/snapshot_analysis.h"
#include "snapshot/snapshot_report.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

// Checks the stack at the state after `entry` (-1: the start): the bands alive tile
// [0, drawn total) with no gap and no overlap, and drawn + merged bytes is the analysis's
// allocated level there. Returns the stack height.
int64_t CheckStackAt(const ActiveTimeline& t, const DeviceAnalysis& d, int64_t entry) {
  std::vector<std::pair<int64_t, int64_t>> spans;  // offset, size
  for (size_t i : BandsAliveAt(t, entry)) {
    spans.emplace_back(BandOffsetAt(t.bands[i], entry), t.bands[i].size);
  }
  std::sort(spans.begin(), spans.end());
  int64_t top = 0;
  for (const auto& [offset, size] : spans) {
    EXPECT_EQ(offset, top) << "gap or overlap in the stack after entry " << entry;
    top = offset + size;
  }
  int64_t height = top + t.merged_bytes[static_cast<size_t>(entry + 1)];
  EXPECT_EQ(height, d.timeline[static_cast<size_t>(entry + 1)].allocated_bytes)
      << "after entry " << entry;
  return height;
}

TraceEntry Entry(TraceAction action, int64_t addr, int64_t size, int64_t time_us) {
  return TraceEntry{action, addr, size, 0, time_us, -1, 0};
}

// P (1,000 B) is alive at snapshot time and never in the trace; Q (200 B) is known only from
// its free; A 300, B 500, C 400 are allocated in the trace, s1 10 and s2 20 are small.
MemorySnapshot HandBuiltSnapshot() {
  MemorySnapshot s;
  s.stacks.emplace_back();
  SnapshotSegment seg;
  seg.address = 0x1000;
  seg.total_size = 0x10000;
  seg.blocks.push_back(SnapshotBlock{0x1000, 1024, 1000, BlockState::kActiveAllocated, 0});
  seg.blocks.push_back(SnapshotBlock{0x1400, 0x4c00, 0x4c00, BlockState::kInactive, 0});
  seg.blocks.push_back(SnapshotBlock{0x6000, 512, 400, BlockState::kActiveAllocated, 0});
  s.segments.push_back(seg);
  s.device_traces.resize(1);
  auto& t = s.device_traces[0];
  t.push_back(Entry(TraceAction::kAlloc, 0x2000, 300, 100));           // 0: A
  t.push_back(Entry(TraceAction::kAlloc, 0x3000, 500, 200));           // 1: B
  t.push_back(Entry(TraceAction::kAlloc, 0x4000, 10, 300));            // 2: s1
  t.push_back(Entry(TraceAction::kFreeRequested, 0x5000, 200, 400));   // 3: Q, not in the trace
  t.push_back(Entry(TraceAction::kFreeCompleted, 0x5000, 200, 500));   // 4: Q gone
  t.push_back(Entry(TraceAction::kAlloc, 0x6000, 400, 600));           // 5: C
  t.push_back(Entry(TraceAction::kFreeCompleted, 0x2000, 300, 700));   // 6: A gone
  t.push_back(Entry(TraceAction::kAlloc, 0x7000, 20, 800));            // 7: s2
  t.push_back(Entry(TraceAction::kFreeRequested, 0x3000, 500, 900));   // 8: B still counts
  t.push_back(Entry(TraceAction::kFreeCompleted, 0x4000, 10, 1000));   // 9: s1 gone
  t.push_back(Entry(TraceAction::kFreeCompleted, 0x3000, 500, 1100));  // 10: B gone
  t.push_back(Entry(TraceAction::kFreeCompleted, 0x7000, 20, 1200));   // 11: s2 gone
  return s;
}

std::vector<std::pair<int64_t, int64_t>> Offsets(const ActiveBand& b) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& o : b.offsets) out.emplace_back(o.entry_index, o.offset_bytes);
  return out;
}
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

TEST(ActiveTimelineTest, HandBuiltSnapshotStacksLikeTheViewer) {
  MemorySnapshot s = HandBuiltSnapshot();
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  ASSERT_EQ(a.devices.size(), 1u);
  const DeviceAnalysis& d = a.devices[0];
  // Levels by hand: start P + Q = 1200; +300 = 1500, +500 = 2000, +10 = 2010, 2010 (free
  // requested), -200 = 1810, +400 = 2210 (peak, entry 5), -300 = 1910, +20 = 1930, 1930, -10 =
  // 1920, -500 = 1420, -20 = 1400 = P + C, the state at snapshot time.
  ASSERT_EQ(d.timeline.size(), 13u);
  EXPECT_EQ(d.initial_allocated_bytes, 1200);
  EXPECT_EQ(d.peak_allocated_bytes, 2210);
  EXPECT_EQ(d.peak_entry_index, 5);
  EXPECT_EQ(d.replay_mismatch_bytes, 0);

  // Seven allocations; the five largest get bands: P 1000, B 500, C 400, A 300, Q 200; s2 20
  // and s1 10 are merged.
  ActiveTimeline t = BuildActiveTimeline(s, d, {.max_bands = 5, .max_offset_changes = 1000});
  EXPECT_EQ(t.allocations, 7);
  EXPECT_EQ(t.merged_allocations, 2);
  EXPECT_EQ(t.smallest_drawn_bytes, 200);
  EXPECT_EQ(t.largest_merged_bytes, 20);
  ASSERT_EQ(t.bands.size(), 5u);
  // Stacked in this order: P at the bottom (alive throughout), Q above it (known from its
  // free), then A, B, C as they are allocated, each on top of the drawn ones.
  const ActiveBand &p = t.bands[0], &q = t.bands[1], &ba = t.bands[2], &bb = t.bands[3],
                   &bc = t.bands[4];
  EXPECT_EQ(p.address, 0x1000);
  EXPECT_EQ(p.size, 1000);  // requested bytes, not the 1024-byte block
  EXPECT_EQ(p.alloc_entry, -1);
  EXPECT_EQ(p.free_entry, -1);
  EXPECT_EQ(Offsets(p), (Pairs{{-1, 0}}));
  EXPECT_TRUE(q.before_trace);
  EXPECT_EQ(q.address, 0x5000);
  EXPECT_EQ(q.free_entry, 4);
  EXPECT_EQ(Offsets(q), (Pairs{{-1, 1000}}));
  // A on top of P + Q at 1200; Q's free (entry 4) drops it by 200 to 1000.
  EXPECT_EQ(ba.alloc_entry, 0);
  EXPECT_EQ(ba.free_entry, 6);
  EXPECT_EQ(Offsets(ba), (Pairs{{0, 1200}, {4, 1000}}));
  // B at 1500; drops 200 at entry 4 (1300) and 300 when A goes at entry 6 (1000). Its free
  // request at entry 8 does not end it: it goes at entry 10.
  EXPECT_EQ(bb.alloc_entry, 1);
  EXPECT_EQ(bb.free_entry, 10);
  EXPECT_EQ(Offsets(bb), (Pairs{{1, 1500}, {4, 1300}, {6, 1000}}));
  // C at 1000 + 300 + 500 = 1800; -300 at entry 6 (1500), -500 at entry 10 (1000); alive at
  // the end, on top of P.
  EXPECT_EQ(bc.alloc_entry, 5);
  EXPECT_EQ(bc.free_entry, -1);
  EXPECT_EQ(Offsets(bc), (Pairs{{5, 1800}, {6, 1500}, {10, 1000}}));
  // Merged bytes per point (start, then after each entry): s1 from entry 2 to 9, s2 from 7
  // to 11.
  EXPECT_EQ(t.merged_bytes, (std::vector<int64_t>{0, 0, 0, 10, 10, 10, 10, 10, 30, 30, 20, 20, 0}));

  // At the peak (after entry 5): P 0-1000, A 1000-1300, B 1300-1800, C 1800-2200, and 10
  // merged bytes: 2210.
  std::vector<size_t> at_peak = BandsAliveAt(t, d.peak_entry_index);
  EXPECT_EQ(at_peak, (std::vector<size_t>{0, 2, 3, 4}));
  EXPECT_EQ(CheckStackAt(t, d, d.peak_entry_index), 2210);
  for (int64_t e = -1; e < static_cast<int64_t>(d.trace_entries); ++e) CheckStackAt(t, d, e);
}

TEST(ActiveTimelineTest, OffsetChangeBudgetDrawsFewerBands) {
  MemorySnapshot s = HandBuiltSnapshot();
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  const DeviceAnalysis& d = a.devices[0];
  // Five bands drop 2 (A, B at entry 4) + 2 (B, C at 6) + 1 (C at 10) = 5 times: over a
  // budget of 2. Three quarters of five is three bands, P, B and C, whose only drop is C's
  // when B goes: B sits on P at 1000, C on both at 1500, then at 1000.
  ActiveTimeline t = BuildActiveTimeline(s, d, {.max_bands = 5, .max_offset_changes = 2});
  ASSERT_EQ(t.bands.size(), 3u);
  EXPECT_EQ(t.merged_allocations, 4);
  EXPECT_EQ(t.smallest_drawn_bytes, 400);
  EXPECT_EQ(t.largest_merged_bytes, 300);
  EXPECT_EQ(t.bands[1].size, 500);
  EXPECT_EQ(Offsets(t.bands[1]), (Pairs{{1, 1000}}));
  EXPECT_EQ(Offsets(t.bands[2]), (Pairs{{5, 1500}, {10, 1000}}));
  for (int64_t e = -1; e < static_cast<int64_t>(d.trace_entries); ++e) CheckStackAt(t, d, e);
}

TEST(ActiveTimelineTest, JsonCarriesBandsStacksAndMergedBytes) {
  MemorySnapshot s = HandBuiltSnapshot();
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  SnapshotReportOptions o;
  o.active_bands = 5;
  nlohmann::json j = ActiveTimelineJson(s, a.devices[0], o);
  EXPECT_EQ(j["allocations"], 7);
  EXPECT_EQ(j["bands_drawn"], 5);
  ASSERT_EQ(j["bands"].size(), 5u);
  // B: address, size, stack, alloc entry and time since the first entry (200 - 100 us), free
  // entry and time (1100 - 100), then its offset at allocation and the entries of its drops.
  EXPECT_EQ(j["t0_us"], 100);
  const auto& b = j["bands"][3];
  EXPECT_EQ(b[0], 0x3000);
  EXPECT_EQ(b[1], 500);
  EXPECT_EQ(b[3], 1);
  EXPECT_EQ(b[4], 100);
  EXPECT_EQ(b[5], 10);
  EXPECT_EQ(b[6], 1000);
  EXPECT_EQ(b[7], (std::vector<int64_t>{1500, 4, 6}));
  EXPECT_EQ(j["bands"][0][4], -1);  // P: alive from the start
  EXPECT_EQ(j["bands"][4][6], -1);  // C: never freed
  EXPECT_EQ(j["stacks"][j["bands"][1][2].get<size_t>()]["site"],
            "<allocated before recording began>");
  // 13 points, under the 4,000 kept: all there.
  ASSERT_EQ(j["merged"].size(), 13u);
  EXPECT_EQ(j["merged"][8], (std::vector<int64_t>{7, 30}));
}

TEST(ActiveTimelineTest, CorpusStackHeightAtThePeakIsThePeak) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  for (const char* name :
       {"silmont2000-assignment2-systems/mem_snapshot.pickle",
        "kkaitlyn111-cs336-a2-systems/memory_ctx128_fullstep.pickle",
        "Yiyi-philosophy-LLM-inference/oom_snapshot.pickle", "SnapViewer/memory.pickle"}) {
    std::string path = CorpusPath("snapshots/") + name;
    SCOPED_TRACE(path);
    MemorySnapshot s = LoadMemorySnapshot(path);
    SnapshotAnalysis a = AnalyzeSnapshot(s);
    ASSERT_FALSE(a.devices.empty());
    const DeviceAnalysis& d = a.devices[0];
    ActiveTimeline t = BuildActiveTimeline(s, d);
    EXPECT_LE(t.bands.size(), 3000u);
    EXPECT_EQ(t.merged_bytes.size(), d.timeline.size());
    EXPECT_EQ(CheckStackAt(t, d, d.peak_entry_index), d.peak_allocated_bytes);
    // The layout everywhere else, at up to ~500 points spread over the trace.
    int64_t step = std::max<int64_t>(1, d.trace_entries / 500);
    for (int64_t e = -1; e < d.trace_entries; e += step) CheckStackAt(t, d, e);
    CheckStackAt(t, d, d.trace_entries - 1);
  }
}

}  // namespace
}  // namespace sextant
