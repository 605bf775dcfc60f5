#include "snapshot/memory_snapshot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "snapshot/call_site.h"
#include "snapshot/snapshot_analysis.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

using namespace std::string_literals;

std::string Fixture(const char* name) {
  return std::string(SEXTANT_SOURCE_DIR) + "/tests/data/snapshot/" + name;
}

std::string ErrorOf(std::string_view bytes) {
  try {
    ParseMemorySnapshot(bytes, "x.pickle");
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MemorySnapshotTest, ReadsCurrentSchemaWithTwoDevices) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  EXPECT_FALSE(s.legacy_schema);
  ASSERT_EQ(s.segments.size(), 4u);
  EXPECT_EQ(s.Devices(), (std::vector<int64_t>{0, 1}));
  const SnapshotSegment& a = s.segments[0];
  EXPECT_EQ(a.address, 0x100000);
  EXPECT_EQ(a.total_size, 4 << 20);
  ASSERT_EQ(a.blocks.size(), 3u);
  EXPECT_EQ(a.blocks[2].state, BlockState::kActivePendingFree);
  EXPECT_EQ(a.blocks[2].requested_size, 2000000);
  EXPECT_EQ(s.segments[2].segment_type, "small");
  ASSERT_EQ(s.device_traces.size(), 2u);
  ASSERT_EQ(s.device_traces[0].size(), 16u);
  EXPECT_TRUE(s.device_traces[1].empty());
  const TraceEntry& oom = s.device_traces[0][9];
  EXPECT_EQ(oom.action, TraceAction::kOom);
  EXPECT_EQ(oom.size, 8 << 20);
  EXPECT_EQ(oom.device_free, 1 << 20);
  EXPECT_EQ(oom.time_us, 1900);
  EXPECT_EQ(s.device_traces[0][12].action, TraceAction::kSegmentMap);
  EXPECT_EQ(s.device_traces[0][13].action, TraceAction::kSegmentUnmap);
  // The block and the trace entry share one Python list, so they share one interned stack.
  EXPECT_EQ(a.blocks[0].stack, s.device_traces[0][1].stack);
  EXPECT_NE(a.blocks[0].stack, 0);
  EXPECT_EQ(CallSiteLabel(s, a.blocks[0].stack), "make_weights (proj/train.py:10)");
  ASSERT_EQ(s.allocator_settings.size(), 2u);
  EXPECT_EQ(s.allocator_settings[0].second, "expandable_segments:True");
  EXPECT_EQ(s.allocator_settings[1].second, "-1");
}

TEST(MemorySnapshotTest, GzipAndProtocol0GiveTheSameModel) {
  MemorySnapshot plain = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  MemorySnapshot gz = LoadMemorySnapshot(Fixture("two_devices_oom.pickle.gz"));
  ASSERT_EQ(gz.segments.size(), plain.segments.size());
  ASSERT_EQ(gz.device_traces[0].size(), plain.device_traces[0].size());
  for (size_t i = 0; i < plain.device_traces[0].size(); ++i) {
    EXPECT_EQ(gz.device_traces[0][i].addr, plain.device_traces[0][i].addr);
    EXPECT_EQ(gz.device_traces[0][i].size, plain.device_traces[0][i].size);
  }
  MemorySnapshot p0 = LoadMemorySnapshot(Fixture("state_only_p0.pickle"));
  ASSERT_EQ(p0.segments.size(), 2u);
  EXPECT_TRUE(p0.device_traces.empty());
  EXPECT_EQ(p0.segments[0].blocks[0].size, 1 << 20);
  EXPECT_EQ(CallSiteLabel(p0, p0.segments[0].blocks[2].stack), "forward (proj/model.py:20)");
}

TEST(MemorySnapshotTest, ReadsLegacyHistorySchema) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  MemorySnapshot s =
      LoadMemorySnapshot(CorpusPath("snapshots/Yiyi-philosophy-LLM-inference/oom_snapshot.pickle"));
  EXPECT_TRUE(s.legacy_schema);
  ASSERT_EQ(s.segments.size(), 176u);
  // Legacy blocks have no address: they tile the segment from its start.
  const SnapshotSegment& seg = s.segments[0];
  EXPECT_EQ(seg.blocks[0].address, seg.address);
  ASSERT_EQ(s.device_traces.size(), 1u);
  EXPECT_EQ(s.device_traces[0][0].action, TraceAction::kSnapshot);
  EXPECT_EQ(s.device_traces[0][0].time_us, -1);
  // First block's history names pytorch_backend.py:190 'allocate' as the innermost frame.
  ASSERT_FALSE(s.Stack(seg.blocks[0].stack).empty());
  const StackFrame& top = s.frames[s.Stack(seg.blocks[0].stack)[0]];
  EXPECT_EQ(top.name, "allocate");
  EXPECT_EQ(top.line, 190);
}

TEST(MemorySnapshotTest, JsonTextIsNamedAsSuch) {
  EXPECT_EQ(ErrorOf("  {\"traceEvents\": []}"s),
            "x.pickle at byte 2: JSON text, not a pickle: a memory snapshot is the pickle "
            "torch.cuda.memory._dump_snapshot writes (a profiler trace goes to `sextant trace "
            "report`)");
}

TEST(MemorySnapshotTest, WrongShapesAreLocatedErrors) {
  // pickle.dumps([1], protocol=2): a list must hold segments
  EXPECT_EQ(ErrorOf("\x80\x02]q\x00K\x01"
                    "a."s),
            "x.pickle: '[0]': expected a dict, found int");
  // pickle.dumps(1, protocol=2)
  EXPECT_EQ(ErrorOf("\x80\x02K\x01."s),
            "x.pickle: the top level is a int, not a dict: not a memory snapshot");
  // pickle.dumps({'x': 1}, protocol=2)
  EXPECT_EQ(ErrorOf("\x80\x02}q\x00X\x01\x00\x00\x00xq\x01K\x01s."s),
            "x.pickle: has neither 'segments' nor 'device_traces': not a memory snapshot");
  // pickle.dumps({'segments': [{'address': 'a'}]}, protocol=2)
  EXPECT_EQ(ErrorOf("\x80\x02}q\x00X\x08\x00\x00\x00segmentsq\x01]q\x02}q\x03X\x07\x00\x00\x00"
                    "addressq\x04X\x01\x00\x00\x00"
                    "aq\x05sas."s),
            "x.pickle: 'segments[0].address': expected an integer, found str");
  // pickle.dumps({'device_traces': [[{'action': 'alloc', 'size': -5}]]}, protocol=2)
  EXPECT_EQ(ErrorOf("\x80\x02}q\x00X\r\x00\x00\x00"
                    "device_tracesq\x01]q\x02]q\x03}q\x04(X\x06"
                    "\x00\x00\x00"
                    "actionq\x05X\x05\x00\x00\x00"
                    "allocq\x06X\x04\x00\x00\x00"
                    "sizeq\x07J\xfb\xff\xff\xffuaas."s),
            "x.pickle: 'device_traces[0][0].size': negative size -5");
  EXPECT_NE(ErrorOf("cos\nsystem\n.").find("'GLOBAL': refused"), std::string::npos);
}

TEST(MemorySnapshotTest, ImplausibleAddressesAndSizesAreRefused) {
  // pickle.dumps({'device_traces': [[{'action': 'alloc', 'addr': -1, 'size': 1}]]}, protocol=2)
  EXPECT_EQ(ErrorOf("\x80\x02}q\x00X\r\x00\x00\x00"
                    "device_tracesq\x01]q\x02]q\x03}q\x04(X\x06"
                    "\x00\x00\x00"
                    "actionq\x05X\x05\x00\x00\x00"
                    "allocq\x06X\x04\x00\x00\x00"
                    "addrq\x07J\xff\xff\xff\xffX\x04\x00\x00\x00sizeq\x08K\x01uaas."s),
            "x.pickle: 'device_traces[0][0]': negative address -1");
  // ... with 'addr': 1, 'size': 2**60
  EXPECT_EQ(ErrorOf("\x80\x02}q\x00X\r\x00\x00\x00"
                    "device_tracesq\x01]q\x02]q\x03}q\x04(X\x06"
                    "\x00\x00\x00"
                    "actionq\x05X\x05\x00\x00\x00"
                    "allocq\x06X\x04\x00\x00\x00"
                    "addrq\x07K\x01X\x04\x00\x00\x00sizeq\x08\x8a\x08\x00\x00\x00\x00\x00\x00\x00"
                    "\x10uaas."s),
            "x.pickle: 'device_traces[0][0]': implausible size 1152921504606846976");
}

TEST(MemorySnapshotTest, ReadsABareListOfSegments) {
  // pickle.dumps([{'device': 0, 'address': 4096, 'total_size': 2048, 'stream': 0,
  //   'blocks': [{'size': 2048, 'state': 'active_allocated'}]}], protocol=2)
  MemorySnapshot s = ParseMemorySnapshot(
      "\x80\x02]q\x00}q\x01(X\x06\x00\x00\x00"
      "deviceq\x02K\x00X\x07\x00\x00\x00"
      "addressq\x03M\x00\x10X\n\x00\x00\x00total_sizeq\x04M\x00\x08X\x06\x00\x00\x00streamq\x05"
      "K\x00X\x06\x00\x00\x00"
      "blocksq\x06]q\x07}q\x08(X\x04\x00\x00\x00sizeq\tM\x00\x08X\x05"
      "\x00\x00\x00stateq\nX\x10\x00\x00\x00"
      "active_allocatedq\x0buaua."s,
      "list.pickle");
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].address, 4096);
  EXPECT_EQ(s.segments[0].blocks[0].address, 4096);
  EXPECT_EQ(s.segments[0].blocks[0].state, BlockState::kActiveAllocated);
}

std::string Str(std::string_view s) {  // SHORT_BINUNICODE
  return "\x8c"s + static_cast<char>(s.size()) + std::string(s);
}

TEST(MemorySnapshotTest, ASegmentNamedAgainByMemoReferenceIsOneSegment) {
  // {'segments': [S, S, S]}: S (memo 0) is one dict of 1024 bytes at 1 MiB with a 512-byte
  // active block and a 512-byte inactive one, appended once and then twice more by BINGET 0.
  // PyTorch writes every segment as a fresh dict; three references to one object are one
  // segment of memory, not three.
  std::string p = "\x80\x02}" + Str("segments") + "]}(" + Str("address") + "J\x00\x00\x10\x00"s +
                  Str("total_size") + "J\x00\x04\x00\x00"s + Str("blocks") + "](}(" + Str("size") +
                  "M\x00\x02"s + Str("state") + Str("active_allocated") + "u}(" + Str("size") +
                  "M\x00\x02"s + Str("state") + Str("inactive") + "ueu" + "q\x00"s + "a" +
                  "h\x00"s + "a" + "h\x00"s + "a" + "s.";
  MemorySnapshot s = ParseMemorySnapshot(p, "x.pickle");
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].blocks.size(), 2u);
  EXPECT_EQ(s.segments[0].blocks[1].address, (1 << 20) + 512);  // blocks tile the segment
  EXPECT_EQ(s.repeated_references, 2);
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].segments, 1);
  EXPECT_EQ(a.devices[0].reserved_bytes, 1024);
  EXPECT_EQ(a.devices[0].allocated_bytes, 512);
}

TEST(MemorySnapshotTest, RepeatedTraceEntriesAndTracesAreReadOnce) {
  // {'device_traces': [T, T]} with T = [E, E] and E = {'action': 'alloc', 'addr': 4096,
  // 'size': 100} (E is memo 0, T memo 1): one alloc on device 0, and device 1's trace is
  // device 0's object, not a second device's events.
  std::string p = "\x80\x02}" + Str("device_traces") + "]]}(" + Str("action") + Str("alloc") +
                  Str("addr") + "M\x00\x10"s + Str("size") + "Kdu" + "q\x00"s + "a" + "h\x00"s +
                  "a" + "q\x01"s + "a" + "h\x01"s + "a" + "s.";
  MemorySnapshot s = ParseMemorySnapshot(p, "x.pickle");
  ASSERT_EQ(s.device_traces.size(), 2u);
  ASSERT_EQ(s.device_traces[0].size(), 1u);
  EXPECT_EQ(s.device_traces[0][0].addr, 4096);
  EXPECT_EQ(s.device_traces[0][0].size, 100);
  EXPECT_TRUE(s.device_traces[1].empty());
  EXPECT_EQ(s.repeated_references, 2);
  EXPECT_EQ(s.Devices(), (std::vector<int64_t>{0}));
}

TEST(MemorySnapshotTest, SharedFramesAreNotRepeats) {
  // Two fresh block dicts whose 'frames' is one list (memo 0), as PyTorch shares frames.
  std::string frames = "]}(" + Str("name") + Str("f") + Str("filename") + Str("a.py") +
                       Str("line") + "K\x03ua";  // [{'name': 'f', 'filename': 'a.py', 'line': 3}]
  std::string p = "\x80\x02]}(" + Str("address") + "J\x00\x00\x10\x00"s + Str("total_size") +
                  "J\x00\x04\x00\x00"s + Str("blocks") + "](}(" + Str("size") + "M\x00\x02"s +
                  Str("state") + Str("active_allocated") + Str("frames") + frames + "q\x00u}("s +
                  Str("size") + "M\x00\x02"s + Str("state") + Str("active_allocated") +
                  Str("frames") + "h\x00ueua."s;
  MemorySnapshot s = ParseMemorySnapshot(p, "x.pickle");
  ASSERT_EQ(s.segments.size(), 1u);
  ASSERT_EQ(s.segments[0].blocks.size(), 2u);
  EXPECT_EQ(s.repeated_references, 0);
  EXPECT_NE(s.segments[0].blocks[0].stack, 0);
  EXPECT_EQ(s.segments[0].blocks[0].stack, s.segments[0].blocks[1].stack);
  EXPECT_EQ(CallSiteLabel(s, s.segments[0].blocks[0].stack), "f (a.py:3)");
}

TEST(MemorySnapshotTest, OneLongStringNamedByManyFramesHitsTheTextBudget) {
  // One 4096-byte name (BINUNICODE, memo 0) used by 20000 frame dicts with distinct lines, one
  // per block: about 30 bytes of pickle each, but 20000 x 2 x 4 KiB = 160 MiB of text to copy
  // (a frame's text is its content key and its StackFrame), beyond 64 MiB + 8 x the file.
  std::string p = "\x80\x02]}(" + Str("address") + "J\x00\x00\x10\x00"s + Str("total_size") +
                  "J\x00\x00\x00\x01"s + Str("blocks") + "](";
  std::string name = "X\x00\x10\x00\x00"s + std::string(4096, 'n') + "q\x00"s;
  for (int i = 0; i < 20000; ++i) {
    std::string line = "M"s + static_cast<char>(i & 0xFF) + static_cast<char>(i >> 8);
    p += "}(" + Str("size") + "K\x01"s + Str("frames") + "]}(" + Str("name") +
         (i == 0 ? name : "h\x00"s) + Str("line") + line + "uau";
  }
  p += "eua.";
  std::string error = ErrorOf(p);
  EXPECT_EQ(error.rfind("x.pickle: '[0].blocks[", 0), 0u) << error;  // a bare list of segments
  std::string budget = std::to_string((int64_t{64} << 20) + 8 * static_cast<int64_t>(p.size()));
  EXPECT_NE(error.find("more than " + budget + " bytes of text copied out of a " +
                       std::to_string(p.size()) +
                       " byte pickle: memo references repeat long "
                       "strings; not a real allocator snapshot"),
            std::string::npos)
      << error;
}

TEST(MemorySnapshotTest, MissingFileIsAUserError) {
  EXPECT_THROW(LoadMemorySnapshot("/nonexistent/x.pickle"), UserError);
}

TEST(MemorySnapshotTest, ACutGzipSnapshotIsAnErrorNotAPartialModel) {
  std::ifstream in(Fixture("two_devices_oom.pickle.gz"), std::ios::binary);
  std::string gz(std::istreambuf_iterator<char>(in), {});
  std::string cut = (std::filesystem::temp_directory_path() / "sextant_cut.pickle.gz").string();
  std::ofstream(cut, std::ios::binary) << gz.substr(0, gz.size() / 2);
  try {
    LoadMemorySnapshot(cut);
    ADD_FAILURE() << "a cut snapshot was accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), cut + ": gzip stream ends early (file truncated)");
  }
  std::filesystem::remove(cut);
}

}  // namespace
}  // namespace sextant
