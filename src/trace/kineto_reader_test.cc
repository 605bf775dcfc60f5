#include "trace/kineto_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "util/compressed_file.h"
#include "util/error.h"

namespace sextant {
namespace {

TraceData Parse(std::string_view json) {
  return ParseKinetoTrace(InputText::FromString(json), "test.json");
}

TEST(MicrosecondsTest, ParsesIntegersAndThreeDecimalsExactly) {
  int64_t ns = 0;
  ASSERT_TRUE(ParseMicrosecondsToNs("1419247332972.313", &ns));
  EXPECT_EQ(ns, 1419247332972313);
  ASSERT_TRUE(ParseMicrosecondsToNs("1610366387140599", &ns));
  EXPECT_EQ(ns, 1610366387140599000);
  ASSERT_TRUE(ParseMicrosecondsToNs("2.5", &ns));
  EXPECT_EQ(ns, 2500);
  ASSERT_TRUE(ParseMicrosecondsToNs("0.0015", &ns));  // rounds to the nearest ns
  EXPECT_EQ(ns, 2);
  ASSERT_TRUE(ParseMicrosecondsToNs("-3", &ns));
  EXPECT_EQ(ns, -3000);
  ASSERT_TRUE(ParseMicrosecondsToNs("1e3", &ns));
  EXPECT_EQ(ns, 1000000);
  EXPECT_FALSE(ParseMicrosecondsToNs("\"12\"", &ns));
  EXPECT_FALSE(ParseMicrosecondsToNs("", &ns));
  EXPECT_FALSE(ParseMicrosecondsToNs("99999999999999999999", &ns));
  // Digits are read eight at a time where they can be; the bound of ~292 years in ns holds
  // at the same digit as reading them one by one: 922337203685477 (INT64_MAX / 10000) is
  // the largest value that may take one more digit.
  ASSERT_TRUE(ParseMicrosecondsToNs("9223372036854775", &ns));
  EXPECT_EQ(ns, 9223372036854775000);
  EXPECT_FALSE(ParseMicrosecondsToNs("9223372036854780", &ns));
  EXPECT_FALSE(ParseMicrosecondsToNs("92233719999999999", &ns));
  // INT64_MAX ns is 9223372036854775.807 us: a time past it is refused, never wrapped.
  ASSERT_TRUE(ParseMicrosecondsToNs("9223372036854775.807", &ns));
  EXPECT_EQ(ns, INT64_MAX);
  EXPECT_FALSE(ParseMicrosecondsToNs("9223372036854775.808", &ns));
  EXPECT_FALSE(ParseMicrosecondsToNs("9223372036854779", &ns));
  EXPECT_FALSE(ParseMicrosecondsToNs("-9223372036854779", &ns));
  ASSERT_TRUE(ParseMicrosecondsToNs("12345678.9", &ns));
  EXPECT_EQ(ns, 12345678900);
  ASSERT_TRUE(ParseMicrosecondsToNs("0000000100000002.001", &ns));
  EXPECT_EQ(ns, 100000002001);
  ASSERT_TRUE(ParseMicrosecondsToNs("87654321", &ns));
  EXPECT_EQ(ns, 87654321000);
  EXPECT_FALSE(ParseMicrosecondsToNs("1234567:", &ns));
  EXPECT_FALSE(ParseMicrosecondsToNs("12345678/", &ns));
  ASSERT_TRUE(ParseMicrosecondsToNs("1419247332972.313 \n      ", &ns));  // a raw token
  EXPECT_EQ(ns, 1419247332972313);
}

// A phase is one letter, however it is spelt: "X" as most writers put it, "\u0058" escaped,
// or with the space a pretty-printer leaves before the next key.
TEST(KinetoReaderTest, PhasesAreReadPlainOrEscaped) {
  TraceData t = Parse(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": 1},
    {"ph": "\u0058", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 20, "dur": 1},
    {"cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 30, "dur": 1, "ph": "X"  },
    {"ph": "XX", "cat": "cpu_op", "name": "d", "pid": 1, "tid": 1, "ts": 40, "dur": 1},
    {"ph": "i", "cat": "cpu_op", "name": "e", "pid": 1, "tid": 1, "ts": 50, "dur": 1}]})");
  std::vector<std::string_view> names;
  for (const CpuEvent& ev : t.cpu) names.push_back(t.Name(ev.name));
  // "XX" is read as its first letter, as before; an instant ("i") is not a complete event.
  EXPECT_EQ(names, (std::vector<std::string_view>{"a", "b", "c", "d"}));
}

TEST(KinetoReaderTest, NamesWithEscapesAnywhereAreUnescaped) {
  // Backslashes at the first, a middle, the eighth and ninth and the last byte of names
  // shorter than, as long as and longer than a word of eight bytes.
  const std::vector<std::pair<std::string, std::string>> names = {
      {R"(a\b)", "a\b"},
      {R"(\"quoted\")", "\"quoted\""},
      {R"(abcdefg\n)", "abcdefg\n"},
      {R"(abcdefgh\t)", "abcdefgh\t"},
      {R"(abcdefghijklmno\\)", "abcdefghijklmno\\"},
      {R"(abcdefghijklmnopq\u00e9)", "abcdefghijklmnopq\u00e9"},
      {"abcdefghijklmnop", "abcdefghijklmnop"},
      {"aten::linear_with_a_long_name_and_no_escape",
       "aten::linear_with_a_long_name_and_no_escape"}};
  std::string json = R"({"traceEvents": [)";
  for (size_t i = 0; i < names.size(); ++i) {
    json += fmt::format(R"({}{{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": 1, )"
                        R"("ts": {}, "dur": 1}})",
                        i ? ", " : "", names[i].first, 10 * (i + 1));
  }
  json += "]}";
  TraceData t = Parse(json);
  ASSERT_EQ(t.cpu.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(t.Name(t.cpu[i].name), names[i].second);
}

// A modern (2024+) CUDA trace in miniature: an op launching a kernel through cudaLaunchKernel,
// linked by correlation id, inside ProfilerStep#3.
constexpr const char* kModern = R"json({
 "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "warpSize": 32}],
 "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": 10, "ts": 100.000, "dur": 50.5},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 101.5, "dur": 10,
   "args": {"External id": 7, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 102, "dur": 3, "args": {"cbid": 211, "correlation": 55}},
  {"ph": "s", "id": 55, "pid": 10, "tid": 10, "ts": 102, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "python_function", "name": "skipped.py", "pid": 10, "tid": 10, "ts": 90, "dur": 100, "args": {"Python id": 1}},
  {"ph": "X", "cat": "kernel", "name": "sgemm \"q\" \u00e9", "pid": 0, "tid": 7, "ts": 110.25, "dur": 4.75,
   "args": {"External id": 7, "device": 0, "stream": 7, "correlation": 55}},
  {"ph": "f", "id": 55, "pid": 0, "tid": 7, "ts": 110.25, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)",
                     "pid" : 0, "tid" : 20, "ts" : 112, "dur" : 10, "args" : {
  "device" : 0, "stream" : 20, "correlation" : 56,
      "Collective name" : "allreduce",
                          "In msg nelems" : 1024,
                          "Out msg nelems" : 1024,
                          "Group size" : 8,
                          "dtype" : "BFloat16",
                                    "Process Group Name" : "0",
                                                           "Seq" : 4,
                                                           "Comms Id" : 18446744073709551615
}
},
  {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python3"}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 105}
 ],
 "baseTimeNanoseconds": 1700000000000000000
})json";

TEST(KinetoReaderTest, ReadsModernSchemaAndLinksLaunches) {
  TraceData t = Parse(kModern);
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.base_time_ns, 1700000000000000000);
  EXPECT_EQ(t.total_events, 10u);
  ASSERT_EQ(t.cpu.size(), 3u);  // python_function, metadata and instants are not kept
  ASSERT_EQ(t.gpu.size(), 2u);
  const GpuEvent& k = t.gpu[0];
  EXPECT_EQ(t.Name(k.name), "sgemm \"q\" \xc3\xa9");
  EXPECT_EQ(k.ts_ns, 110250);
  EXPECT_EQ(k.dur_ns, 4750);
  EXPECT_EQ(k.stream, 7);
  ASSERT_GE(k.launcher, 0);
  EXPECT_EQ(t.Name(t.cpu[k.launcher].name), "cudaLaunchKernel");
  EXPECT_TRUE(t.cpu[k.launcher].launch_flow);
  ASSERT_GE(k.op, 0);
  EXPECT_EQ(t.Name(t.cpu[k.op].name), "aten::mm");
  EXPECT_EQ(t.Name(t.Args(t.cpu[k.op]).input_dims), "[[2, 3], [3, 4]]");
  EXPECT_EQ(t.Name(t.cpu[t.cpu[k.op].parent].name), "ProfilerStep#3");
  ASSERT_EQ(t.iterations.size(), 1u);
  EXPECT_EQ(t.iterations[0].step, 3);
  EXPECT_EQ(t.iterations[0].dur_ns, 50500);
  const GpuEvent& nccl = t.gpu[1];
  ASSERT_GE(nccl.collective, 0);
  const CollectiveMeta& m = t.collectives[nccl.collective];
  EXPECT_EQ(t.Name(m.name), "allreduce");
  EXPECT_EQ(m.in_nelems, 1024);
  EXPECT_EQ(m.seq, 4);
  EXPECT_TRUE(m.has_comms_id);
  EXPECT_EQ(m.comms_id, 18446744073709551615ull);  // above INT64_MAX
  EXPECT_FALSE(t.truncated);
}

// The 2021 schema: capitalised categories, string tids ("stream 7"), integer timestamps,
// lower-case "external id", flows with cat "async" and no correlation on the runtime call,
// and a bare array at the top level.
constexpr const char* kLegacy = R"json([
  {"ph": "X", "cat": "Operator", "name": "aten::relu", "pid": 5, "tid": "1441273664", "ts": 1000, "dur": 20,
   "args": {"Input dims": [[4, 4]], "External id": 9}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": "1441273664", "ts": 1005, "dur": 4, "args": {"external id": 9}},
  {"ph": "s", "id": 77, "pid": 5, "tid": 1441273664, "ts": 1005, "cat": "async", "name": "launch"},
  {"ph": "X", "cat": "Kernel", "name": "relu_kernel", "pid": 0, "tid": "stream 7", "ts": 1030, "dur": 2, "args": {"external id": 9}},
  {"ph": "f", "id": 77, "pid": 0, "tid": "stream 7", "ts": 1030, "cat": "async", "name": "launch", "bp": "e"},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": "stream 7", "ts": 1040, "dur": 5, "args": {"bytes": 64}},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)",
                     "pid" : "Traces", "tid" : "PyTorch Profiler", "ts" : 900, "dur" : 500
}
])json";

// A thread's CPU events end up by start time, longest first, the input order kept among full
// ties, however out of order the file writes them (here four runs on thread 1).
TEST(KinetoReaderTest, CpuEventsAreOrderedByStartThenLongestFirstStably) {
  const TraceData t = Parse(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 30, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "other", "pid": 1, "tid": 2, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "a2", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 20, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "long", "pid": 1, "tid": 1, "ts": 20, "dur": 9},
    {"ph": "X", "cat": "cpu_op", "name": "z", "pid": 1, "tid": 1, "ts": 5, "dur": 1}
  ]})");
  std::vector<std::string> thread1;
  for (const CpuEvent& ev : t.cpu) {
    if (t.Name(ev.name) != "other") thread1.emplace_back(t.Name(ev.name));
  }
  EXPECT_EQ(thread1, (std::vector<std::string>{"z", "a", "a2", "long", "b", "c"}));
}

TEST(KinetoReaderTest, ReadsLegacySchemaWithFlowsAndStringTids) {
  TraceData t = Parse(kLegacy);
  ASSERT_EQ(t.gpu.size(), 2u);
  EXPECT_EQ(t.gpu[0].stream, 7);
  EXPECT_EQ(t.gpu[0].correlation, 77);  // recovered from the flow pair
  ASSERT_GE(t.gpu[0].launcher, 0);
  EXPECT_EQ(t.Name(t.cpu[t.gpu[0].op].name), "aten::relu");
  EXPECT_EQ(t.gpu[1].kind, GpuKind::kMemcpy);
  EXPECT_EQ(t.gpu[1].bytes, 64);
  EXPECT_EQ(t.gpu[1].op, -1);
  EXPECT_EQ(t.Name(t.Args(t.cpu[0]).input_dims), "[[4, 4]]");
  EXPECT_EQ(t.rank, -1);
}

// Flows are matched to the events at their points, the first flow read winning where several
// share a point: runtime calls and GPU activities without an id of their own take its id.
TEST(KinetoReaderTest, TheFirstFlowAtAPointGivesItsId) {
  std::string events;
  for (int i = 0; i < 300; ++i) {
    // Whole microseconds: every point's timestamp a multiple of 1000 ns.
    const std::string ts = std::to_string(1000 + 10 * i);
    events += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, )"
              R"("tid": 1, "ts": )" +
              ts + R"(, "dur": 4},)";
    events += R"({"ph": "s", "id": )" + std::to_string(100 + i) +
              R"(, "pid": 5, "tid": 1, "ts": )" + ts + R"(, "cat": "ac2g", "name": "ac2g"},)";
    events += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" + ts +
              R"(5, "dur": 2},)";
    events += R"({"ph": "f", "id": )" + std::to_string(100 + i) +
              R"(, "pid": 0, "tid": 7, "ts": )" + ts +
              R"(5, "cat": "ac2g", "name": "ac2g", "bp": "e"},)";
  }
  // Later flows at the first points: not taken.
  events += R"({"ph": "s", "id": 9, "pid": 5, "tid": 1, "ts": 1000, "cat": "ac2g", "name": "a"},)";
  events += R"({"ph": "f", "id": 9, "pid": 0, "tid": 7, "ts": 10005, "cat": "ac2g", "name": "a"})";
  const TraceData t = Parse(R"({"traceEvents": [)" + events + "]}");
  ASSERT_EQ(t.cpu.size(), 300u);
  ASSERT_EQ(t.gpu.size(), 300u);
  for (int i = 0; i < 300; ++i) {
    EXPECT_TRUE(t.cpu[i].launch_flow) << i;
    EXPECT_EQ(t.cpu[i].correlation(), 100 + i) << i;
    EXPECT_EQ(t.gpu[i].correlation, 100 + i) << i;
    EXPECT_EQ(t.gpu[i].launcher, i) << i;
  }
}

TEST(KinetoReaderTest, RocmMemoryKernelsAreMemoryOperations) {
  TraceData t = Parse(R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "__amd_rocclr_copyBuffer", "pid": 2, "tid": 0, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "__amd_rocclr_fillBufferAligned", "pid": 2, "tid": 0, "ts": 3, "dur": 1},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]})json");
  ASSERT_EQ(t.gpu.size(), 2u);
  EXPECT_EQ(t.gpu[0].kind, GpuKind::kMemcpy);
  EXPECT_EQ(t.gpu[1].kind, GpuKind::kMemset);
  EXPECT_EQ(t.gpu[0].device, 2);
  EXPECT_TRUE(t.rocm);
}

std::string ErrorOf(std::string_view json) {
  try {
    Parse(json);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// A list whose items are not event objects (HTA's memory timeline: a list of lists) is not a
// trace, and the error says that and which event, not a JSON type error. Kineto's own "Trace"
// span is not named as an unanalysed kind of device event.
TEST(KinetoReaderTest, EventsThatAreNotObjectsAreNotATrace) {
  EXPECT_NE(ErrorOf(R"([[-1, 1, 37888, 7], [-1, 1, 512, 7]])")
                .find("not a trace: event 0 is not a JSON object"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}, 5]})")
                .find("not a trace: event 1 is not a JSON object"),
            std::string::npos);
  const TraceData session = Parse(
      R"({"traceEvents": [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler", "ts": 0, "dur": 9}]})");
  EXPECT_TRUE(session.unread_categories.empty());
}

// Kineto's metadata events name processes and threads (what TraceLens prints as
// process_name / process_label / thread_name); other metadata and odd shapes are ignored.
TEST(KinetoReaderTest, ReadsProcessAndThreadNamesFromMetadata) {
  TraceData t = Parse(R"json({"traceEvents": [
    {"name": "process_name", "ph": "M", "ts": 1, "pid": 42, "tid": 0, "args": {"name": "python3"}},
    {"name": "process_labels", "ph": "M", "ts": 1, "pid": 42, "tid": 0, "args": {"labels": "CPU"}},
    {"name": "process_sort_index", "ph": "M", "ts": 1, "pid": 42, "tid": 0, "args": {"sort_index": 5}},
    {"name": "thread_name", "ph": "M", "ts": 1, "pid": 42, "tid": 7, "args": {"name": "thread 7 (python3)"}},
    {"name": "thread_name", "ph": "M", "ts": 1, "pid": 42, "tid": 8, "args": {"name": 17}},
    {"name": "process_name", "ph": "M", "pid": "Spans", "tid": 0, "args": []},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 42, "tid": 7, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 42, "tid": 8, "ts": 10, "dur": 5}
  ]})json");
  ASSERT_EQ(t.threads.size(), 2u);
  EXPECT_EQ(t.ProcessName(0), "python3");
  EXPECT_EQ(t.ProcessLabel(0), "CPU");
  EXPECT_EQ(t.ThreadName(0), "thread 7 (python3)");
  EXPECT_EQ(t.ThreadName(1), "");  // a name that is not a string is no name
  EXPECT_EQ(t.ProcessName(1), "python3");
  EXPECT_EQ(t.ThreadName(99), "");
  EXPECT_EQ(t.cpu.size(), 2u);  // metadata adds no events
}

// Integers take a short path for plain decimals (up to 18 digits, whitespace after them) and
// the general one for the rest; both read the same values.
TEST(KinetoReaderTest, ReadsIdsOfEveryLengthAndSpacing) {
  TraceData t = Parse(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 7 , "tid": -3 , "ts": 10, "dur": 5,
     "args": {"External id": 123456789012345678 , "Sequence number": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 7, "tid": -3, "ts": 20, "dur": 5,
     "args": {"External id": 1234567890123456789}},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 7, "tid": -3, "ts": 30, "dur": 5,
     "args": {"External id": "42"}}
  ]})json");
  ASSERT_EQ(t.cpu.size(), 3u);
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].pid, 7);
  EXPECT_EQ(t.threads[0].tid, -3);
  EXPECT_EQ(t.cpu[0].external_id, 123456789012345678);
  EXPECT_EQ(t.cpu[1].external_id, 1234567890123456789);
  EXPECT_EQ(t.cpu[2].external_id, 42);
}

TEST(KinetoReaderTest, RejectsNonTracesWithClearMessages) {
  EXPECT_NE(ErrorOf("").find("empty file"), std::string::npos);
  EXPECT_NE(ErrorOf("hello").find("not JSON"), std::string::npos);
  EXPECT_NE(ErrorOf(R"json({"nodes": [1, 2]})json").find("not a Kineto trace"), std::string::npos);
  EXPECT_NE(ErrorOf("42").find("not JSON"), std::string::npos);
  // An XPlane profile given to a command that reads only Kineto JSON says where it goes.
  try {
    ParseKinetoTrace(InputText::FromString("\x0a\x05plane"), "p.xplane.pb");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("XPlane profiles (.xplane.pb) are read by"),
              std::string::npos)
        << e.what();
  }
  std::string bad =
      ErrorOf(R"json({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1,, "dur": 2}]})json");
  EXPECT_NE(bad.find("test.json at byte 54: JSON error"), std::string::npos)
      << bad;  // the second comma
  // A string left open mid-document is found while simdjson indexes the whole text: there is
  // no byte to name, and "at byte 0" would send the reader to the wrong place.
  std::string unclosed =
      ErrorOf(R"json({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm, "ts": 1}]})json");
  EXPECT_NE(unclosed.find("test.json: JSON error"), std::string::npos) << unclosed;
  EXPECT_EQ(unclosed.find("at byte 0"), std::string::npos) << unclosed;
}

// What a reader can say instead of "JSON error" or "not JSON": the key that holds the wrong
// type, and the compression format a file is in when it is not one that is read.
TEST(KinetoReaderTest, WrongEventsTypeAndUnsupportedCompressionAreNamed) {
  EXPECT_EQ(ErrorOf(R"({"traceEvents": 5})"),
            "test.json at byte 16: 'traceEvents': expected an array of events, found a number");
  EXPECT_NE(ErrorOf(R"({"traceEvents": {"ph": "X"}})")
                .find("expected an array of events, found "
                      "an object"),
            std::string::npos);
  for (const auto& [magic, format] : {std::pair<std::string, std::string>{"BZh91AY&SY", "bzip2"},
                                      {std::string("\xFD"
                                                   "7zXZ\x00\x00",
                                                   8),
                                       "xz"},
                                      {std::string("PK\x03\x04\x14\x00", 6), "zip"}}) {
    EXPECT_EQ(ErrorOf(magic), "test.json: unsupported compression (" + format +
                                  "): gzip (.gz) and zstd (.zst) are read; decompress it, or "
                                  "recompress it with one of those");
  }
}

// A file named .gz whose bytes are not gzip: the error says both what the name promises and
// what the bytes are, not only that they are not JSON. Plain JSON under that name is read.
TEST(KinetoReaderTest, AFileNamedGzThatIsNotGzipIsSaidToBeSo) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "sextant_not_gzip.json.gz").string();
  std::ofstream(path) << "hello, not a trace";
  std::string message;
  try {
    ReadKinetoTrace(path);
  } catch (const UserError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, path +
                         ": named .gz, but not gzip: it starts with 68 65 6c 6c 6f 2c 20 6e "
                         "(\"hello, n\"), not gzip's 1f 8b; as plain text it is not JSON either (a "
                         "Kineto trace starts with '{' or '[')");
  std::ofstream(path) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1,
                            "dur": 3, "pid": 0, "tid": 7}]})";
  EXPECT_EQ(ReadKinetoTrace(path).gpu.size(), 1u);
  std::filesystem::remove(path);
}

// A UTF-8 byte-order mark before the JSON (some Windows tools write one) is skipped; byte
// offsets in messages still count it.
TEST(KinetoReaderTest, AByteOrderMarkIsSkipped) {
  const TraceData t = Parse(
      "\xEF\xBB\xBF{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
      "\"ts\": 1, \"dur\": 3, \"pid\": 0, \"tid\": 7}]}");
  ASSERT_EQ(t.gpu.size(), 1u);
  EXPECT_EQ(t.gpu[0].dur_ns, 3000);
  EXPECT_EQ(ErrorOf("\xEF\xBB\xBF{\"traceEvents\": 5}"),
            "test.json at byte 19: 'traceEvents': expected an array of events, found a number");
}

// simdjson validates UTF-8 and nesting over the whole text before it parses: the message
// still names where the first invalid byte is, or that the document ends open.
TEST(KinetoReaderTest, InvalidUtf8AndAnOpenDocumentAreLocated) {
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{\"name\": \"ab\xff\"}]}"),
            "test.json at byte 29: JSON error: The input is not valid UTF-8");
  const std::string open(1000, '[');
  EXPECT_EQ(ErrorOf("{\"traceEvents\": " + open),
            "test.json at byte 1016: JSON error: " +
                std::string(simdjson::error_message(simdjson::INCOMPLETE_ARRAY_OR_OBJECT)));
}

// An activity that cannot be placed in time is left out, but never silently: the warning
// counts them and points at the first.
TEST(KinetoReaderTest, EventsWithoutANumericTimestampAreCountedInAWarning) {
  const std::string text =
      R"json({"traceEvents": [)json"
      R"json({"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "b", "ts": "soon", "dur": 2},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "c", "dur": 2},)json"
      R"json({"ph": "i", "cat": "kernel", "name": "instant"}]})json";
  const TraceData t = Parse(text);
  EXPECT_EQ(t.gpu.size(), 1u);
  ASSERT_EQ(t.warnings.size(), 1u);
  // The byte named lies inside the second event's object.
  const std::string prefix =
      "2 events with a missing, non-numeric or out-of-range \"ts\" left out (the first near "
      "byte ";
  ASSERT_EQ(t.warnings[0].substr(0, prefix.size()), prefix);
  const size_t byte = std::stoul(t.warnings[0].substr(prefix.size()));
  EXPECT_GT(byte, text.find("\"name\": \"b\""));
  EXPECT_LE(byte, text.find("\"name\": \"c\""));
  // A complete event without a usable duration is kept, lasting 0, and counted.
  const TraceData no_dur =
      Parse(R"json({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": "x"}]})json");
  ASSERT_EQ(no_dur.gpu.size(), 1u);
  EXPECT_EQ(no_dur.gpu[0].dur_ns, 0);
  ASSERT_EQ(no_dur.warnings.size(), 1u);
  EXPECT_EQ(no_dur.warnings[0].rfind("1 complete event with a missing, non-numeric or "
                                     "out-of-range \"dur\" counted as lasting 0 us (the first "
                                     "near byte ",
                                     0),
            0u)
      << no_dur.warnings[0];
  EXPECT_TRUE(Parse(R"json({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2}]})json")
                  .warnings.empty());
}

// Events whose times cannot be right are left out of the timeline and said once per file,
// with a count and the first of them: a negative duration, and a start a day or more from
// the rest of the trace (which would stretch the GPU span to years).
TEST(KinetoReaderTest, EventsWithImpossibleTimesAreLeftOutWithAWarning) {
  const TraceData negative = Parse(
      R"json({"traceEvents": [)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": -50},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 200, "dur": 5}]})json");
  ASSERT_EQ(negative.gpu.size(), 1u);
  EXPECT_EQ(negative.Name(negative.gpu[0].name), "k2");
  ASSERT_EQ(negative.warnings.size(), 1u);
  const std::string prefix =
      "1 event with a negative or over-long (> 2^40 ns, 18 minutes) \"dur\" left out of the "
      "timeline (the first: \"k\" with dur -50.000 us near byte ";
  EXPECT_EQ(negative.warnings[0].substr(0, prefix.size()), prefix) << negative.warnings[0];

  // 10^15 us is 10^18 ns: 277,777.8 hours after the median start (k3's, 300 us).
  const TraceData far = Parse(
      R"json({"traceEvents": [)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 50},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 300, "dur": 50},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1000000000000000.0, "dur": 5}]})json");
  ASSERT_EQ(far.gpu.size(), 2u);
  EXPECT_EQ(far.Name(far.gpu[0].name), "k");
  EXPECT_EQ(far.Name(far.gpu[1].name), "k3");
  ASSERT_EQ(far.warnings.size(), 1u);
  EXPECT_EQ(far.warnings[0],
            "1 event more than 24 hours from the trace's median timestamp left out of the "
            "timeline: their \"ts\" cannot be right (the first: GPU event \"k2\" at ts "
            "1000000000000000.000 us, 277777.8 hours from the median event)");
  // A trace that spans minutes is left whole.
  const TraceData fine = Parse(
      R"json({"traceEvents": [)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 50},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 600000000, "dur": 5}]})json");
  EXPECT_EQ(fine.gpu.size(), 2u);
  EXPECT_TRUE(fine.warnings.empty());
}

TEST(KinetoReaderTest, TruncatedTraceKeepsCompleteEventsWithWarning) {
  std::string text(kModern);
  // Cut inside the NCCL kernel's name: the string is left open.
  std::string cut = text.substr(0, text.find("ncclDevKernel") + 6);
  TraceData t = Parse(cut);
  EXPECT_TRUE(t.truncated);
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_NE(t.warnings[0].find("cut short"), std::string::npos) << t.warnings[0];
  EXPECT_EQ(t.gpu.size(), 1u);  // the sgemm kernel before the cut
  EXPECT_EQ(t.cpu.size(), 3u);
  // A cut between events (no open string) fails during iteration instead.
  std::string between = text.substr(0, text.find("{\"ph\": \"M\""));
  TraceData t2 = Parse(between);
  EXPECT_TRUE(t2.truncated);
  EXPECT_EQ(t2.gpu.size(), 2u);
}

// Kineto writes baseTimeNanoseconds after the events: a file cut short loses it, and its
// timestamps, relative to that base, no longer say when it ran. It says so, and its start is
// not offered for comparison with other files.
TEST(KinetoReaderTest, CutBeforeItsBaseTimeTheClockIsNotCompared) {
  const std::string events =
      R"json({"traceEvents": [)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1414456661601, "dur": 50},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1414456661701, "dur": 5})json";
  const TraceData whole =
      Parse(events + R"json(], "baseTimeNanoseconds": 1751410836000000000})json");
  EXPECT_EQ(FirstEventClockNs(whole), 1751410836000000000 + 1414456661601000);
  const TraceData cut = Parse(events + ",\n{\"ph\": \"X\", \"cat\": \"ker");
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.gpu.size(), 2u);
  EXPECT_EQ(FirstEventClockNs(cut), INT64_MIN);
  ASSERT_FALSE(cut.warnings.empty());
  EXPECT_EQ(cut.warnings.back(),
            "the file is cut short before its baseTimeNanoseconds (written at its end): the time "
            "base of its timestamps is lost, so when it started is not compared with other files");
  // Cut short, but with epoch timestamps of its own (2021's schema): its clock still holds.
  const TraceData absolute = Parse(
      R"json({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )json"
      R"json("ts": 1625000000000000, "dur": 50},)json"
      "\n{\"ph\": \"X\", \"cat\": \"ker");
  EXPECT_TRUE(absolute.truncated);
  EXPECT_EQ(FirstEventClockNs(absolute), 1625000000000000000);
}

// A gzip file cut before its first block decodes to no text: the error says it was cut, not
// that the file is empty.
TEST(KinetoReaderTest, CompressedFileCutBeforeAnyDataSaysSo) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "sextant_cut_early.json.gz").string();
  {
    OutputFile out(path);
    out.Write(std::string(kModern));
    out.Close();
  }
  std::filesystem::resize_file(path, 12);  // the 10-byte header and a little more
  try {
    ReadKinetoTrace(path);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("before any data"), std::string::npos) << what;
    EXPECT_EQ(what.find("empty file"), std::string::npos) << what;
  }
  std::filesystem::remove(path);
}

// ~25 MB: one op + launch + kernel per step, one event per line as Kineto writes them,
// followed by `trailer` (the top-level keys after the event array and the closing brace).
std::string LargeTraceText(int steps, const std::string& trailer) {
  std::string text = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
  for (int i = 0; i < steps; ++i) {
    int64_t t = int64_t{i} * 100;
    text += fmt::format(
        "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": {}, "
        "\"dur\": 50, \"args\": {{\"Input Dims\": [[{}, 8], [{}, 8]], \"Input type\": [\"float\", "
        "\"float\"]}}}},\n"
        "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
        "\"tid\": 1, "
        "\"ts\": {}, \"dur\": 5, \"args\": {{\"correlation\": {}}}}},\n"
        "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"mul_kernel\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": {}, "
        "\"dur\": 20, \"args\": {{\"stream\": 7, \"correlation\": {}, \"padding\": \"{}\"}}}}{}\n",
        t, i, i, t + 10, i, t + 30, i, std::string(200, 'x'), i + 1 < steps ? "," : "");
  }
  return text + trailer;
}

TEST(KinetoReaderTest, LargeTraceIsReadInChunksWithTheSameResult) {
  const int kSteps = 60000;
  std::string text =
      LargeTraceText(kSteps, "], \"traceName\": \"big\", \"baseTimeNanoseconds\": 42}");
  ASSERT_GT(text.size(), size_t{24} << 20);
  TraceData t = Parse(text);
  EXPECT_GT(t.chunks, 1u);
  EXPECT_EQ(t.total_events, 3u * kSteps);
  EXPECT_EQ(t.base_time_ns, 42);  // from the keys after the event array
  ASSERT_EQ(t.gpu.size(), static_cast<size_t>(kSteps));
  for (const GpuEvent& g : t.gpu) ASSERT_GE(g.op, 0);
  EXPECT_EQ(t.gpu.back().ts_ns, (int64_t{kSteps - 1} * 100 + 30) * 1000);
  EXPECT_EQ(t.Name(t.Args(t.cpu[t.gpu.back().op]).input_dims),
            fmt::format("[[{}, 8], [{}, 8]]", kSteps - 1, kSteps - 1));
}

// Read in chunks, a trace with one bad duration early on still gets one warning, not one per
// chunk that follows.
TEST(KinetoReaderTest, ChunkedReadWarnsOnceAboutBadDurations) {
  std::string text = LargeTraceText(60000, "]}");
  const size_t dur = text.find("\"dur\": 5");
  ASSERT_NE(dur, std::string::npos);
  text.replace(dur, 9, "\"dur\": \"?\"");
  const TraceData t = Parse(text);
  ASSERT_GT(t.chunks, 2u);
  int bad_duration_warnings = 0;
  for (const std::string& w : t.warnings) bad_duration_warnings += w.find("\"dur\"") != w.npos;
  EXPECT_EQ(bad_duration_warnings, 1);
}

// Read in chunks, events a day from the rest are left out as in one pass: an op early on
// and a kernel late; without them nothing is left out.
TEST(KinetoReaderTest, ChunkedReadLeavesOutEventsFarFromTheMedian) {
  const std::string whole = LargeTraceText(60000, "]}");
  const TraceData kept = Parse(whole);
  ASSERT_GT(kept.chunks, 2u);
  EXPECT_TRUE(kept.warnings.empty());
  EXPECT_EQ(kept.cpu.size(), 120000u);
  std::string text = whole;
  const size_t op = text.find("\"ts\": 500,");
  ASSERT_NE(op, std::string::npos);
  text.replace(op, 10, "\"ts\": -100000000000,");
  const size_t kernel = text.rfind("\"ts\": 5999930,");
  ASSERT_NE(kernel, std::string::npos);
  text.replace(kernel, 14, "\"ts\": 900000000000,");
  const TraceData t = Parse(text);
  ASSERT_GT(t.chunks, 2u);
  EXPECT_EQ(t.cpu.size(), 120000u - 1);
  EXPECT_EQ(t.gpu.size(), 60000u - 1);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0].rfind("2 events more than 24 hours from the trace's median", 0), 0u)
      << t.warnings[0];
}

TEST(KinetoReaderTest, ChunkedReadFindsTheEndOfEventsBeforeTrailingArrays) {
  // Arrays after the events, one laid out like events ("},\n{"), and brackets in strings.
  const int kSteps = 60000;
  std::string text = LargeTraceText(
      kSteps,
      "\n], \"deviceProperties\": [{\"name\": \"GPU ]A[\", \"warpSize\": 32},\n"
      "{\"name\": \"GPU B\"}], \"distributedInfo\": {\"rank\": 3}, \"baseTimeNanoseconds\": 42}\n");
  TraceData t = Parse(text);
  EXPECT_GT(t.chunks, 1u);
  EXPECT_EQ(t.total_events, 3u * kSteps);
  EXPECT_EQ(t.device_name, "GPU ]A[");
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.base_time_ns, 42);
  ASSERT_EQ(t.gpu.size(), static_cast<size_t>(kSteps));
  EXPECT_EQ(t.gpu.back().ts_ns, (int64_t{kSteps - 1} * 100 + 30) * 1000);
}

// A compressed trace is read as it is decoded, to the same events as its text read whole.
TEST(KinetoReaderTest, CompressedLargeTraceIsStreamedWithTheSameResult) {
  const int kSteps = 60000;
  const std::string text =
      LargeTraceText(kSteps, "], \"traceName\": \"big\", \"baseTimeNanoseconds\": 42}");
  const TraceData whole = Parse(text);
  for (std::string suffix : {".json.gz", ".json.zst", ".json"}) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("sextant_streamed" + suffix)).string();
    {
      OutputFile out(path);
      out.Write(text);
      out.Close();
    }
    std::optional<TraceData> t = StreamKinetoTrace(path);
    ASSERT_TRUE(t.has_value()) << suffix;
    EXPECT_GT(t->chunks, 1u);
    EXPECT_EQ(t->input_bytes, text.size());
    EXPECT_EQ(t->total_events, 3u * kSteps);
    EXPECT_EQ(t->base_time_ns, 42);
    ASSERT_EQ(t->gpu.size(), whole.gpu.size());
    ASSERT_EQ(t->cpu.size(), whole.cpu.size());
    for (size_t i = 0; i < t->gpu.size(); ++i) {
      ASSERT_EQ(t->gpu[i].ts_ns, whole.gpu[i].ts_ns);
      ASSERT_EQ(t->gpu[i].op, whole.gpu[i].op);
    }
    EXPECT_EQ(t->Name(t->Args(t->cpu[t->gpu.back().op]).input_dims),
              fmt::format("[[{}, 8], [{}, 8]]", kSteps - 1, kSteps - 1));
    std::filesystem::remove(path);
  }
}

// What a chunked read cannot finish is read whole: a small file, and a trace on one line longer
// than a chunk may be. A trace on one line has no chunk boundaries.
TEST(KinetoReaderTest, StreamingLeavesSmallFilesToTheWholeTextReader) {
  const auto temp = [](const std::string& name) {
    return (std::filesystem::temp_directory_path() / name).string();
  };
  const auto write = [](const std::string& path, const std::string& text) {
    OutputFile out(path);
    out.Write(text);
    out.Close();
  };
  const std::string small = temp("sextant_stream_small.json.gz");
  write(small, std::string(kModern));
  EXPECT_FALSE(StreamKinetoTrace(small).has_value());
  EXPECT_EQ(ReadKinetoTrace(small).total_events, Parse(kModern).total_events);

  std::string one_line = LargeTraceText(60000, "]}");
  std::erase(one_line, '\n');
  const std::string line = temp("sextant_stream_line.json.gz");
  write(line, one_line);
  // No event boundary: up to kMaxChunkBytes (64 MB) of it is one chunk, longer ones are read
  // whole.
  const std::optional<TraceData> streamed_line = StreamKinetoTrace(line);
  ASSERT_TRUE(streamed_line.has_value());
  EXPECT_EQ(streamed_line->chunks, 1u);
  EXPECT_EQ(streamed_line->total_events, 3u * 60000);
  for (const std::string& path : {small, line}) std::filesystem::remove(path);
}

// A large trace cut short (an interrupted profiler, copy or .gz) is read in chunks up to its
// last complete event, with what the whole-text reader finds in the same file: the same
// events and the same warnings.
TEST(KinetoReaderTest, CutTraceIsStreamedToItsLastCompleteEvent) {
  const std::string text = LargeTraceText(60000, "], \"baseTimeNanoseconds\": 42}");
  const size_t middle = text.size() / 2;
  const size_t event = text.find("{\"ph\"", middle);
  const size_t name = text.find("mul_kernel", middle);
  const size_t number = text.find("\"ts\": ", middle) + 7;
  // Cut inside a string, a number, after an event's ',' and its line break, just after a '{',
  // and inside the keys after the events.
  const std::vector<size_t> cuts = {name + 3, number + 2, event, event + 1,
                                    text.find("baseTime") + 4};
  for (const size_t cut : cuts) {
    for (std::string suffix : {".json", ".json.gz"}) {
      const std::string path =
          (std::filesystem::temp_directory_path() / ("sextant_stream_cut" + suffix)).string();
      {
        OutputFile out(path);
        out.Write(text.substr(0, cut));
        out.Close();
      }
      const std::optional<TraceData> streamed = StreamKinetoTrace(path);
      ASSERT_TRUE(streamed.has_value()) << suffix << " cut at " << cut;
      const TraceData whole = ParseKinetoTrace(InputText::Load(path), path, /*try_chunks=*/false);
      EXPECT_TRUE(streamed->truncated);
      EXPECT_GT(streamed->chunks, 1u);
      EXPECT_EQ(streamed->total_events, whole.total_events) << suffix << " cut at " << cut;
      EXPECT_EQ(streamed->gpu.size(), whole.gpu.size());
      EXPECT_EQ(streamed->cpu.size(), whole.cpu.size());
      EXPECT_EQ(streamed->input_bytes, whole.input_bytes);
      EXPECT_EQ(streamed->warnings, whole.warnings) << suffix << " cut at " << cut;
      std::filesystem::remove(path);
    }
  }
  // A .gz cut inside its compressed data: the decoder's reason comes first, as it does when the
  // whole text is read.
  const std::string gz =
      (std::filesystem::temp_directory_path() / "sextant_gz_cut.json.gz").string();
  {
    OutputFile out(gz);
    out.Write(text);
    out.Close();
  }
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) * 3 / 4);
  const std::optional<TraceData> streamed = StreamKinetoTrace(gz);
  ASSERT_TRUE(streamed.has_value());
  const TraceData whole = ParseKinetoTrace(InputText::Load(gz), gz, /*try_chunks=*/false);
  EXPECT_EQ(streamed->total_events, whole.total_events);
  EXPECT_EQ(streamed->warnings, whole.warnings);
  ASSERT_FALSE(streamed->warnings.empty());
  EXPECT_EQ(streamed->warnings.front(), "gzip stream ends early (file truncated)");
  std::filesystem::remove(gz);
}

}  // namespace
}  // namespace sextant
