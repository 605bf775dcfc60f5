#include "trace/trace_merge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "trace/kineto_reader.h"
#include "trace/trace_report.h"
#include "trace/trace_test_util.h"
#include "util/error.h"

namespace sextant {
namespace {

// One rank's trace: the Python process (pid 7) launches one kernel on GPU 0 (pid 0, stream 7),
// drawn by flow id 1. Both ranks use the same pids, tids and flow id, as real ranks do.
KinetoTraceBuilder RankTrace(int rank, const char* base_ns, const char* process) {
  KinetoTraceBuilder b;
  b
      .Event(fmt::format(
          R"({{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {{"name": "{}"}}}})",
          process))
      .Event(
          R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 10.25, "dur": 5})")
      .Event(
          R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 11, "dur": 2, "args": {"correlation": 1}})")
      .Event(R"({"ph": "s", "id": 1, "pid": 7, "tid": 7, "ts": 11, "cat": "ac2g", "name": "ac2g"})")
      .Event(
          R"({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 1}})")
      .Event(
          R"({"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 20, "cat": "ac2g", "name": "ac2g", "bp": "e"})")
      .TopLevel("distributedInfo", fmt::format(R"({{"backend": "nccl", "rank": {}}})", rank))
      .TopLevel("baseTimeNanoseconds", base_ns);
  return b;
}

class TraceMergeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& p : paths_) std::filesystem::remove(p);
  }
  std::string Path(std::string_view suffix) {
    paths_.push_back(TestTempPath(suffix));
    return paths_.back();
  }
  std::vector<std::string> paths_;
};

TEST_F(TraceMergeTest, AReportOnAMergedFileSaysItHoldsSeveralRanks) {
  std::string a = RankTrace(0, "1000000", "python3").WriteTo(Path("rank0.json"));
  std::string b = RankTrace(1, "1000000", "python3").WriteTo(Path("rank1.json"));
  std::string out = Path("merged.json");
  MergeTraces({a, b}, out);
  auto warned = [](const RankReport& r) {
    for (const std::string& w : r.warnings)
      if (w.find("holds 2 ranks merged by `sextant trace merge`") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(warned(AnalyzeTrace(ReadKinetoTrace(out), ReportOptions{}, 0)));
  // One rank's own file is not mistaken for a merged one.
  EXPECT_FALSE(warned(AnalyzeTrace(ReadKinetoTrace(a), ReportOptions{}, 0)));
}

// A rank file cut short (an interrupted profiler): merge keeps the events `trace report` reads
// from it, up to the last complete one, and says where the file was cut, as report does.
TEST_F(TraceMergeTest, AFileCutShortMergesTheEventsBeforeTheCut) {
  std::string json = RankTrace(0, "1000000", "python3").Json();
  const size_t kernel = json.find(R"("name": "gemm")");
  ASSERT_NE(kernel, std::string::npos);
  const std::string cut = Path("cut.json");
  std::ofstream(cut) << json.substr(0, kernel + 10);  // inside the kernel's name
  const std::string out = Path("merged.json");
  const MergeSummary summary = MergeTraces({cut}, out);
  bool said = false;
  for (const std::string& w : summary.warnings) {
    said = said || (w.starts_with(cut + ": JSON error") &&
                    w.find("cut short") != std::string::npos && !w.starts_with(cut + ": " + cut));
  }
  EXPECT_TRUE(said);
  const TraceData merged = ReadKinetoTrace(out);
  const TraceData read = ReadKinetoTrace(cut);
  EXPECT_EQ(merged.cpu.size(), read.cpu.size());  // the op and its launch
  EXPECT_EQ(merged.cpu.size(), 2u);
  EXPECT_TRUE(merged.gpu.empty());
  // Cut between events: the reader's message names the byte where the text ends.
  const std::string between = Path("between.json");
  std::ofstream(between) << json.substr(0, json.rfind('{', kernel));
  const MergeSummary at_end = MergeTraces({between}, Path("merged_between.json"));
  bool located = false;
  for (const std::string& w : at_end.warnings) {
    located =
        located || (w.starts_with(between + " at byte") && w.find(between, 1) == std::string::npos);
  }
  EXPECT_TRUE(located);
}

TEST_F(TraceMergeTest, RanksGetDisjointPidsTidsAndFlowIdsOnOneTimeBase) {
  // Rank 1's clock base is 2 ms later than rank 0's, so its events move 2000 µs later.
  std::string a = RankTrace(0, "1000000", "python3").WriteTo(Path("rank0.json"));
  std::string b = RankTrace(1, "3000000", "worker").WriteTo(Path("rank1.json"));
  std::string out = Path("merged.json");
  MergeSummary s = MergeTraces({a, b}, out);
  EXPECT_EQ(s.files, 2u);
  EXPECT_TRUE(s.warnings.empty());
  // Per file pids 7 and 0, one thread each: 4 processes, 4 threads.
  EXPECT_EQ(s.processes, 4u);
  EXPECT_EQ(s.threads, 4u);
  // 5 events per file (process_name is replaced) + per process process_name and
  // process_sort_index (8) + one thread_name per thread (4) = 22.
  EXPECT_EQ(s.events_written, 22u);

  nlohmann::json merged = nlohmann::json::parse(InputText::Load(out).text());  // valid JSON
  ASSERT_TRUE(merged["traceEvents"].is_array());
  EXPECT_EQ(merged["traceEvents"].size(), s.events_written);

  std::map<int64_t, std::string> process_names, thread_names;
  std::set<std::pair<int64_t, int64_t>> tids;
  for (const auto& ev : merged["traceEvents"]) {
    if (ev["ph"] == "M") {
      std::string label = ev["args"].value("name", "");
      if (ev["name"] == "process_name") process_names[ev["pid"].get<int64_t>()] = label;
      if (ev["name"] == "thread_name") thread_names[ev["tid"].get<int64_t>()] = label;
      continue;
    }
    tids.insert({ev["pid"].get<int64_t>(), ev["tid"].get<int64_t>()});
  }
  // pid = (file index + 1) * 100000 + order of first appearance in the file; tids count up
  // from 1 over all files.
  EXPECT_EQ(process_names, (std::map<int64_t, std::string>{{100000, "rank 0: python3 (pid 7)"},
                                                           {100001, "rank 0: pid 0"},
                                                           {200000, "rank 1: worker (pid 7)"},
                                                           {200001, "rank 1: pid 0"}}));
  EXPECT_EQ(tids, (std::set<std::pair<int64_t, int64_t>>{
                      {100000, 1}, {100001, 2}, {200000, 3}, {200001, 4}}));
  EXPECT_EQ(thread_names.size(), 4u);
  EXPECT_EQ(thread_names[1], "thread 7");

  for (const auto& ev : merged["traceEvents"]) {
    if (ev["ph"] == "M") continue;
    auto pid = ev["pid"].get<int64_t>();
    bool rank1 = pid >= 200000;
    if (ev["ph"] == "X" && ev["name"] == "gemm") {
      // Rank 0 keeps its text; rank 1: 20 µs + 2000 µs.
      EXPECT_EQ(ev["ts"].dump(), rank1 ? "2020.0" : "20") << pid;
      EXPECT_EQ(ev["dur"], 3);
      EXPECT_EQ(ev["args"]["correlation"], 1);  // args are copied unchanged
    }
    if (ev["ph"] == "X" && ev["name"] == "aten::mm") {
      EXPECT_EQ(ev["ts"].dump(), rank1 ? "2010.25" : "10.25") << pid;
    }
    if (ev["ph"] == "s" || ev["ph"] == "f") {
      // id | (file index + 1) << 40: 1 + 2^40 and 1 + 2^41.
      EXPECT_EQ(ev["id"].get<int64_t>(), rank1 ? 2199023255553 : 1099511627777) << pid;
    }
  }
  // The events are on rank 0's clock: its base is the merged file's, so merging it again
  // with another rank places it where it was.
  EXPECT_EQ(merged["baseTimeNanoseconds"], 1000000);
  // The merged file is a trace again: both kernels, each on its own device pid.
  TraceData m = ReadKinetoTrace(out);
  ASSERT_EQ(m.gpu.size(), 2u);
  EXPECT_EQ(m.gpu[0].ts_ns, 20'000);
  EXPECT_EQ(m.gpu[1].ts_ns, 2'020'000);
  EXPECT_EQ(m.cpu.size(), 4u);
}

// The 2021 schema writes a thread's tid as a string in its slices and as a number in its flow
// starts; Perfetto reads both as one thread, and so must the merge (one tid), or the launch
// arrows lose their slices. The first input's deviceProperties travel with the events.
TEST_F(TraceMergeTest, NumericStringIdsAreOneThreadAndDevicePropertiesAreKept) {
  KinetoTraceBuilder b;
  b.Event(
       R"({"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": "1890023232", "ts": 11, "dur": 2})")
      .Event(
          R"({"ph": "s", "id": 1, "pid": 5, "tid": 1890023232, "ts": 11, "cat": "async", "name": "launch"})")
      .Event(
          R"({"ph": "X", "cat": "Kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 20, "dur": 3, "args": {"device": 0, "stream": 7}})")
      .TopLevel("deviceProperties", R"([{"id": 0, "name": "NVIDIA A100-SXM4-40GB"}])");
  const std::string out = Path("legacy_merged.json");
  MergeTraces({b.WriteTo(Path("legacy.json"))}, out);
  nlohmann::json merged = nlohmann::json::parse(InputText::Load(out).text());
  std::set<int64_t> runtime_tids;
  for (const auto& ev : merged["traceEvents"]) {
    if (ev["ph"] == "M" || ev["pid"].get<int64_t>() != 100000) continue;
    runtime_tids.insert(ev["tid"].get<int64_t>());
  }
  EXPECT_EQ(runtime_tids.size(), 1u);
  EXPECT_EQ(merged["deviceProperties"][0]["name"], "NVIDIA A100-SXM4-40GB");
  EXPECT_FALSE(merged.contains("baseTimeNanoseconds"));  // no input has a base
}

TEST_F(TraceMergeTest, SameTimeBaseKeepsTimestampsAndCompressesByExtension) {
  std::string a = RankTrace(0, "5000", "p").WriteTo(Path("a.json"));
  std::string b = RankTrace(1, "5000", "p").WriteTo(Path("b.json"));
  std::string out = Path("merged.json.gz");
  MergeSummary s = MergeTraces({a, b}, out);
  EXPECT_EQ(s.files, 2u);
  InputText text = InputText::Load(out);
  EXPECT_EQ(text.compression(), Compression::kGzip);
  nlohmann::json merged = nlohmann::json::parse(text.text());
  int kernels = 0;
  for (const auto& ev : merged["traceEvents"]) {
    if (ev.value("name", "") != "gemm") continue;
    ++kernels;
    EXPECT_EQ(ev["ts"].dump(), "20");  // no shift: the raw text is copied
  }
  EXPECT_EQ(kernels, 2);
}

// What one run's rank files share: each file once, one rank each, one GPU model, clocks that
// start together. Anything else is merged, with a warning that says what is off.
TEST_F(TraceMergeTest, WarnsAboutFilesThatAreNotRanksOfOneRun) {
  std::string a = RankTrace(0, "1000000", "python3").WriteTo(Path("rank0.json"));
  std::string b = RankTrace(1, "1000000", "python3").WriteTo(Path("rank1.json"));
  auto warned = [](const MergeSummary& s, const std::string& text) {
    for (const std::string& w : s.warnings)
      if (w.find(text) != std::string::npos) return true;
    return false;
  };
  MergeSummary twice = MergeTraces({a, b, a}, Path("twice.json"));
  EXPECT_TRUE(warned(twice, a + " is given twice: its events appear twice"));

  std::string other_rank0 = RankTrace(0, "1000000", "python3").WriteTo(Path("other0.json"));
  MergeSummary same_rank = MergeTraces({a, other_rank0}, Path("same.json"));
  EXPECT_TRUE(warned(same_rank, "both say they are rank 0"));

  // Two hours later (7.2e12 ns): another run.
  std::string late = RankTrace(1, "7200001000000", "python3").WriteTo(Path("late.json"));
  MergeSummary apart = MergeTraces({a, late}, Path("apart.json"));
  EXPECT_TRUE(warned(apart, "first events are 2.0 hours apart"));

  KinetoTraceBuilder mi300 = RankTrace(1, "1000000", "python3");
  mi300.TopLevel("deviceProperties", R"([{"id": 0, "name": "AMD Instinct MI300X"}])");
  KinetoTraceBuilder h100 = RankTrace(0, "1000000", "python3");
  h100.TopLevel("deviceProperties", R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3"}])");
  MergeSummary gpus =
      MergeTraces({h100.WriteTo(Path("h.json")), mi300.WriteTo(Path("m.json"))}, Path("g.json"));
  EXPECT_TRUE(warned(gpus, "was recorded on 'AMD Instinct MI300X'"));
  EXPECT_EQ(MergeTraces({a, b}, Path("fine.json")).warnings.size(), 0u);
}

// Processes are ordered by rank whatever order the files come in, and keep Kineto's labels.
TEST_F(TraceMergeTest, ProcessesFollowRankOrderAndKeepTheirLabels) {
  KinetoTraceBuilder rank1 = RankTrace(1, "1000000", "python3");
  rank1.Event(
      R"({"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}})");
  std::string a = rank1.WriteTo(Path("r1.json"));
  std::string b = RankTrace(0, "1000000", "python3").WriteTo(Path("r0.json"));
  std::string out = Path("merged.json");
  MergeTraces({a, b}, out);
  const TraceData merged = ReadKinetoTrace(out);
  std::map<int64_t, std::string> names;
  for (const auto& [pid, name] : merged.process_names) names[pid] = std::string(merged.Name(name));
  ASSERT_FALSE(names.empty());
  // The lowest pid is rank 0's, given second.
  EXPECT_EQ(names.begin()->second.rfind("rank 0: ", 0), 0u) << names.begin()->second;
  bool gpu_label = false;
  for (const auto& [pid, name] : names) gpu_label = gpu_label || name == "rank 1: GPU 0 (pid 0)";
  EXPECT_TRUE(gpu_label);
}

// Files of one rank (a graph capture trace and its replay) are told apart by file name, and a
// report of the merged file still counts its ranks.
TEST_F(TraceMergeTest, FilesOfOneRankAreNamedByFile) {
  std::string capture = RankTrace(0, "1000000", "python3").WriteTo(Path("capture.json"));
  std::string replay = RankTrace(0, "1000000", "python3").WriteTo(Path("replay.json"));
  std::string other = RankTrace(1, "1000000", "python3").WriteTo(Path("r1.json"));
  std::string out = Path("merged_capture.json");
  MergeTraces({capture, replay, other}, out);
  const TraceData merged = ReadKinetoTrace(out);
  std::set<std::string> names;
  for (const auto& [pid, name] : merged.process_names) names.insert(std::string(merged.Name(name)));
  auto file = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
  EXPECT_TRUE(names.count("rank 0 (" + file(capture) + "): python3 (pid 7)")) << *names.begin();
  EXPECT_TRUE(names.count("rank 0 (" + file(replay) + "): python3 (pid 7)"));
  EXPECT_TRUE(names.count("rank 1: python3 (pid 7)"));
  const RankReport report = AnalyzeTrace(merged, ReportOptions{}, 0);
  bool said = false;
  for (const std::string& w : report.warnings)
    said = said || w.find("holds 2 ranks") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(TraceMergeTest, RefusesToOverwriteAnInputOrMergeNothing) {
  std::string a = RankTrace(0, "0", "p").WriteTo(Path("a.json"));
  EXPECT_THROW(MergeTraces({a}, a), UserError);
  EXPECT_THROW(MergeTraces({}, Path("out.json")), UserError);
}

}  // namespace
}  // namespace sextant
