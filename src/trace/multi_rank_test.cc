// Multi-rank behaviour on real traces: the 8-rank DLRM set (NCCL kernels without collective
// metadata, so instances are matched by order), merge and diff.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trace/collectives.h"
#include "trace/kineto_reader.h"
#include "trace/report_json.h"
#include "trace/trace_diff.h"
#include "trace/trace_merge.h"
#include "trace/trace_report.h"
#include "trace/trace_runner.h"
#include "util/compressed_file.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

std::vector<std::string> DlrmFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(CorpusPath("traces/param/dlrm_kineto_8rank"))) {
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CollectivesTest, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allreduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allgather", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("reduce_scatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", 8), 1.0);
  EXPECT_EQ(NormalizeCollectiveType("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"),
            "allreduce");
  EXPECT_EQ(NormalizeCollectiveType("ncclDevKernel_SendRecv(x)"), "send_recv");
  EXPECT_EQ(NormalizeCollectiveType("_reduce_scatter_base"), "reduce_scatter");
  EXPECT_EQ(NormalizeCollectiveType("all_gather_into_tensor"), "allgather");
}

TEST(CollectivesTest, CrossRankSplitsWaitFromTransfer) {
  // Rank 0 arrives at t=0 and finishes at 100 us; rank 1 arrives at 60 us and takes 40 us.
  // Transfer = 40 us (the later arrival's duration); rank 0 waited 60 us.
  CollectiveInstance a{0, "allreduce", "0", 5, 1'000'000, 2, 0, 100'000, "k", "", "", -1};
  CollectiveInstance b{1, "allreduce", "0", 5, 1'000'000, 2, 60'000, 40'000, "k", "", "", -1};
  auto matched = MatchCollectivesAcrossRanks({{a}, {b}});
  ASSERT_EQ(matched.size(), 1u);
  const auto& m = matched[0];
  EXPECT_EQ(m.ranks, 2);
  EXPECT_EQ(m.skew_ns, 60'000);
  EXPECT_EQ(m.transfer_ns, 40'000);
  EXPECT_EQ(m.max_wait_ns, 60'000);
  EXPECT_DOUBLE_EQ(m.mean_wait_ns, 30'000);
  EXPECT_EQ(m.straggler_rank, 1);
  EXPECT_DOUBLE_EQ(m.algbw_gbps, 1e6 / 40e-6 / 1e9);           // 25 GB/s
  EXPECT_DOUBLE_EQ(m.busbw_gbps, m.algbw_gbps * 2.0 * 1 / 2);  // 2(n-1)/n with n = 2
}

// Ranks with GPU spans 10, 40 and 20 ms: min 10 (rank 0), median 20, max 40 (rank 1), a
// spread of (40 - 10) / 20 = 150%.
TEST(MultiRankTest, SpreadOverRanksNamesTheSlowestAndFastest) {
  std::vector<RankReport> ranks(3);
  const int64_t spans_ms[] = {10, 40, 20};
  for (int i = 0; i < 3; ++i) {
    ranks[i].rank = i;
    ranks[i].file = "rank" + std::to_string(i) + ".json";
    ranks[i].timeline.total_ns = spans_ms[i] * 1'000'000;
  }
  const TraceReport report = CombineReports(ranks);
  const Table* spread = report.Find("rank_spread");
  ASSERT_NE(spread, nullptr);
  const auto& row = spread->rows()[0];  // GPU span
  EXPECT_EQ(std::get<std::string>(row[0]), "GPU span");
  EXPECT_DOUBLE_EQ(std::get<double>(row[1]), 10.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[2]), 20.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[3]), 40.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[4]), 150.0);
  EXPECT_EQ(std::get<int64_t>(row[5]), 0);
  EXPECT_EQ(std::get<int64_t>(row[6]), 1);
  // Exposed communication 0, 0 and 5 ms: the median is 0, so (max - min) / median has no
  // value and the cell stays empty; idle, 0 on every rank, has no spread: 0%.
  ranks[2].timeline.exposed_communication_ns = 5'000'000;
  const TraceReport zero_median = CombineReports(ranks);
  const Table* t = zero_median.Find("rank_spread");
  for (const auto& r : t->rows()) {
    const std::string metric = std::get<std::string>(r[0]);
    if (metric == "exposed communication") {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(r[4]));
    }
    if (metric == "idle") {
      EXPECT_DOUBLE_EQ(std::get<double>(r[4]), 0.0);
    }
  }
}

// Past eight ranks the console's per-rank tables keep the slowest and fastest rank only.
TEST(MultiRankTest, ConsoleOfManyRanksShowsTheEndsOfTheSpread) {
  std::vector<RankReport> ranks(9);
  for (int i = 0; i < 9; ++i) {
    ranks[i].rank = i;
    ranks[i].file = "rank" + std::to_string(i) + ".json";
    ranks[i].timeline.total_ns = (i == 4 ? 90 : 10 + i) * 1'000'000;  // rank 4 slowest, 0 fastest
    Table t("gpu_timeline", "GPU timeline", {{"rank", "rank", 0}, {"type", "type", 0}});
    t.AddRow({static_cast<int64_t>(i), std::string("total_time")});
    ranks[i].tables.push_back(std::move(t));
    // 12 kernels on every rank: the console's top 10 of the two ranks shown.
    Table k("kernels", "Kernels", {{"rank", "rank", 0}, {"kernel", "kernel", 0}});
    for (int j = 0; j < 12; ++j) k.AddRow({static_cast<int64_t>(i), fmt::format("k{}", j)});
    ranks[i].tables.push_back(std::move(k));
  }
  const std::string console = ReportToConsole(CombineReports(ranks), /*top=*/10);
  const size_t start = console.find("GPU timeline\n");
  ASSERT_NE(start, std::string::npos) << console;
  const std::string section = console.substr(start, console.find("\n\n", start) - start);
  int rows = 0;
  for (size_t p = section.find("total_time"); p != std::string::npos;
       p = section.find("total_time", p + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 2) << section;
  EXPECT_NE(section.find("9 ranks: the slowest and fastest by GPU span shown"), std::string::npos)
      << section;
  // The row count names the rows of the ranks on screen: 2 x 10 of 2 x 12, not of 9 x 12.
  EXPECT_NE(console.find("20 of 24 rows shown (10 per rank)"), std::string::npos) << console;
}

// Two files claiming one rank are reported, not silently folded into one rank's rows.
TEST(MultiRankTest, FilesSharingARankAreWarnedAbout) {
  RankReport first, second, other;
  first.rank = 3;
  first.file = "run_a/rank3.json";
  second.rank = 3;
  second.file = "run_b/rank3.json";
  other.rank = 4;
  other.file = "run_a/rank4.json";
  const TraceReport report = CombineReports({second, other, first});
  ASSERT_EQ(report.ranks.size(), 3u);
  EXPECT_TRUE(report.ranks[0].warnings.empty());
  ASSERT_EQ(report.ranks[1].warnings.size(), 1u);
  EXPECT_EQ(report.ranks[1].warnings[0],
            "run_a/rank3.json and run_b/rank3.json are both rank 3; their rows share that rank "
            "label, and the cross-rank collective tables are left out (they need one trace per "
            "rank)");
  EXPECT_EQ(report.Find("collective_sync"), nullptr);
  EXPECT_EQ(report.Find("stragglers"), nullptr);
  EXPECT_TRUE(report.ranks[2].warnings.empty());  // rank 4 is alone
  // One file without a rank of its own, given as "x.json" and "./x.json": ranks 0 and 1 by
  // position, and said to be one file.
  RankReport a, b;
  a.rank = 0;
  a.argument = 0;
  a.file = "x.json";
  b.rank = 1;
  b.argument = 1;
  b.file = "./x.json";
  const TraceReport twice = CombineReports({a, b});
  ASSERT_EQ(twice.ranks[1].warnings.size(), 1u);
  EXPECT_EQ(twice.ranks[1].warnings[0], "./x.json is given twice: it is counted as ranks 0 and 1");
  // One XPlane file given once holds a report per GPU (ranks 0 and 7, one position): not twice.
  RankReport gpu0, gpu7;
  gpu0.rank = 0;
  gpu7.rank = 7;
  gpu0.argument = gpu7.argument = 0;
  gpu0.file = gpu7.file = "host.xplane.pb";
  const TraceReport devices = CombineReports({gpu0, gpu7});
  EXPECT_TRUE(devices.ranks[0].warnings.empty());
  EXPECT_TRUE(devices.ranks[1].warnings.empty());
  // That file given twice: its GPUs are each said to be two reports of one rank, never "counted
  // as ranks 0 and 7".
  RankReport again0 = gpu0, again7 = gpu7;
  again0.argument = again7.argument = 1;
  for (const RankReport& r : CombineReports({gpu0, gpu7, again0, again7}).ranks) {
    for (const std::string& w : r.warnings)
      EXPECT_EQ(w.find("given twice"), std::string::npos) << w;
  }
}

// Ranks need not have the same tables: one with recompute frames and one without still
// give one recompute table, holding the first rank's rows only.
TEST(MultiRankTest, RanksWithDifferentTablesCombine) {
  RankReport with, without;
  with.rank = 0;
  without.rank = 1;
  Table recompute("recompute_timeline", "split", {{"rank", "rank", 0}, {"type", "type", 0}});
  recompute.AddRow({int64_t{0}, std::string("computation_time")});
  with.tables.push_back(recompute);
  Table steps("iterations", "steps", {{"rank", "rank", 0}, {"ms", "ms", 3}});
  steps.AddRow({int64_t{1}, 2.0});
  without.tables.push_back(steps);
  const TraceReport report = CombineReports({with, without});
  const Table* r = report.Find("recompute_timeline");
  const Table* i = report.Find("iterations");
  ASSERT_NE(r, nullptr);
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(r->size(), 1u);
  EXPECT_EQ(i->size(), 1u);
  EXPECT_EQ(std::get<int64_t>(i->rows()[0][0]), 1);
}

// Ranks of one run start within seconds; traces whose first events are hours apart are from
// different runs, and the later one says so (as trace merge does).
TEST(MultiRankTest, TracesHoursApartAreToldTheyAreNotOneRun) {
  RankReport a, b, c;
  a.rank = 0;
  a.file = "a.json";
  a.first_event_ns = int64_t{1700000000} * 1000000000;
  b.rank = 1;
  b.file = "b.json";
  b.first_event_ns = a.first_event_ns + int64_t{2} * 3600 * 1000000000;  // 2 hours later
  c.rank = 2;
  c.file = "c.json";
  c.first_event_ns = a.first_event_ns + 1000000000;  // 1 s later
  const TraceReport report = CombineReports({a, b, c});
  ASSERT_EQ(report.ranks.size(), 3u);
  EXPECT_TRUE(report.ranks[0].warnings.empty());
  ASSERT_EQ(report.ranks[1].warnings.size(), 1u);
  EXPECT_EQ(report.ranks[1].warnings[0].rfind("its first event is 2.0 hours after a.json's", 0), 0u)
      << report.ranks[1].warnings[0];
  EXPECT_TRUE(report.ranks[2].warnings.empty());
}

// A file whose clock cannot be compared (cut short before its baseTimeNanoseconds) is not
// said to start hours after the others: the two clocks are not the same clock.
TEST(MultiRankTest, AFileThatLostItsTimeBaseIsNotComparedInTime) {
  const std::string events =
      R"json({"traceEvents": [)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1414456661601, "dur": 50},)json"
      R"json({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1414456661701, "dur": 5})json";
  auto parse = [](const std::string& text, const char* path) {
    return ParseKinetoTrace(InputText::FromString(text), path);
  };
  std::vector<RankReport> ranks;
  ranks.push_back(AnalyzeTrace(
      parse(events + R"json(], "baseTimeNanoseconds": 1751410836000000000})json", "whole.json"), {},
      0));
  ranks.push_back(
      AnalyzeTrace(parse(events + ",\n{\"ph\": \"X\", \"cat\": \"ker", "cut.json"), {}, 1));
  const TraceReport report = CombineReports(std::move(ranks));
  for (const RankReport& r : report.ranks) {
    for (const std::string& w : r.warnings) {
      EXPECT_EQ(w.find("hours after"), std::string::npos) << r.file << ": " << w;
    }
  }
  bool said = false;
  for (const std::string& w : report.ranks[1].warnings) said |= w.find("time base") != w.npos;
  EXPECT_TRUE(said) << "cut.json does not say its time base is lost";
}

// A directory that cannot be listed is not "a directory with no trace files": it says why.
TEST(MultiRankTest, AnUnreadableDirectoryIsSaidToBeUnreadable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a directory without read permission";
  const auto dir = std::filesystem::temp_directory_path() / "sextant_unreadable_dir_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  ::chmod(dir.c_str(), 0);
  try {
    ExpandTraceDirectories({dir.string()});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.string() + ": a directory that cannot be read (Permission denied)");
  }
  ::chmod(dir.c_str(), 0700);
  std::filesystem::remove_all(dir);
}

// Once the ranks' tables are one table, a note every rank makes alike stays once, unlabelled;
// notes that differ in their numbers only are one line over those ranks with the numbers as
// ranges; a note of one rank alone is labelled with it.
TEST(MultiRankTest, NotesOfOneRankAreLabelledAndNotesAlikeAreMerged) {
  RankReport a, b, c;
  a.rank = 0;
  b.rank = 1;
  c.rank = 2;
  Table ta("short_kernels_summary", "short", {{"rank", "rank", 0}});
  ta.SetNotes({"as in TraceLens", "12 short kernels, 0.5 ms"});
  Table tb = ta;
  tb.SetNotes({"as in TraceLens", "30 short kernels, 0.5 ms", "clocks disagree"});
  Table tc = ta;
  tc.SetNotes({"as in TraceLens", "7 short kernels, 0.5 ms"});
  a.tables.push_back(ta);
  b.tables.push_back(tb);
  c.tables.push_back(tc);
  const TraceReport report = CombineReports({a, b, c});
  const Table* t = report.Find("short_kernels_summary");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->notes(), (std::vector<std::string>{
                            "as in TraceLens",
                            "ranks 0-2 (numbers are min-max over them): 7-30 short kernels, 0.5 ms",
                            "rank 1: clocks disagree"}));
}

// Three ranks enter one all-gather at 0, 10 and 30 us and take 50, 45 and 20 us: every rank
// leaves once the last (rank 2) has arrived and the 20 us transfer is done, at 50, 55, 50 us.
CollectiveInstance AllGather(int64_t rank, int64_t seq, int64_t ts_us, int64_t dur_us) {
  return {rank, "allgather",       "0",        seq,    3'000'000, 3, ts_us * 1000, dur_us * 1000,
          "k",  "_allgather_base", "BFloat16", 500'000};
}

TEST(CollectivesTest, ImplicitSyncLatencyAndSkewsByHand) {
  const std::vector<std::vector<CollectiveInstance>> per_rank = {
      {AllGather(0, 1, 0, 50), AllGather(0, 2, 100, 10)},
      {AllGather(1, 1, 10, 45), AllGather(1, 2, 104, 6)},
      {AllGather(2, 1, 30, 20), AllGather(2, 2, 102, 12)}};
  const auto matched = MatchCollectivesAcrossRanks(per_rank);
  ASSERT_EQ(matched.size(), 2u);
  const CrossRankCollective& first = matched[0];
  EXPECT_EQ(first.transfer_ns, 20'000);  // latency: the shortest duration
  EXPECT_EQ(first.skew_ns, 30'000);      // starts 0 .. 30 us
  EXPECT_EQ(first.end_skew_ns, 5'000);   // ends 50, 55, 50 us
  EXPECT_EQ(first.straggler_rank, 2);
  EXPECT_EQ(first.earliest_rank, 0);
  EXPECT_EQ(first.name, "_allgather_base");
  // Second instance: starts 100, 104, 102 us; ends 110, 110, 114 us; shortest 6 us.
  const CrossRankCollective& second = matched[1];
  EXPECT_EQ(second.skew_ns, 4'000);
  EXPECT_EQ(second.end_skew_ns, 4'000);
  EXPECT_EQ(second.straggler_rank, 1);

  const auto summary = SummarizeImplicitSyncCollectives(matched);
  ASSERT_EQ(summary.size(), 1u);
  const CollectiveSyncSummary& s = summary[0];
  EXPECT_EQ(s.in_nelems, 500'000);
  EXPECT_EQ(s.latency_us.n, 2);
  EXPECT_DOUBLE_EQ(s.latency_us.mean, 13.0);  // (20 + 6) / 2
  EXPECT_DOUBLE_EQ(s.latency_us.sum, 26.0);
  EXPECT_DOUBLE_EQ(s.start_skew_us.max, 30.0);
  EXPECT_DOUBLE_EQ(s.end_skew_us.mean, 4.5);  // (5 + 4) / 2
  // 3 MB in 20 us = 150 GB/s and in 6 us = 500 GB/s; bus factor (n - 1) / n = 2/3.
  EXPECT_DOUBLE_EQ(s.algbw_gbps.min, 150.0);
  EXPECT_DOUBLE_EQ(s.algbw_gbps.max, 500.0);
  EXPECT_DOUBLE_EQ(s.busbw_gbps.mean, 325.0 * 2 / 3);

  // Waits (latest start − own start): rank 0 30 + 4, rank 1 20 + 0, rank 2 0 + 2 us.
  const auto stragglers = SummarizeStragglers(matched, {{0, 60.0}, {1, 51.0}, {2, 32.0}});
  ASSERT_EQ(stragglers.size(), 3u);
  EXPECT_EQ(stragglers[0].rank, 2);  // waits least: the others wait for it
  EXPECT_DOUBLE_EQ(stragglers[0].total_wait_us, 2.0);
  EXPECT_EQ(stragglers[0].times_last, 1);
  EXPECT_EQ(stragglers[0].times_first, 0);
  EXPECT_EQ(stragglers[1].rank, 1);
  EXPECT_DOUBLE_EQ(stragglers[1].mean_wait_us, 10.0);
  EXPECT_EQ(stragglers[2].rank, 0);
  EXPECT_EQ(stragglers[2].times_first, 2);
  EXPECT_EQ(stragglers[2].collectives, 2);
  EXPECT_DOUBLE_EQ(stragglers[2].collective_us, 60.0);
}

// A synchronising collective cannot end on one rank before another has entered it. Rank 1's
// clock runs 200 us ahead here: its all-gather seems to start at 210 us, after rank 0 ended
// at 50 us (by 160 us); rank 2 overlaps everyone.
TEST(CollectivesTest, AnEndBeforeTheLastStartMeansTheClocksDisagree) {
  const auto aligned = MatchCollectivesAcrossRanks(
      {{AllGather(0, 1, 0, 50)}, {AllGather(1, 1, 10, 45)}, {AllGather(2, 1, 30, 20)}});
  ASSERT_EQ(aligned.size(), 1u);
  EXPECT_EQ(aligned[0].ended_before_last_start_ns, 0);  // the first end (50 us) is after 30 us
  const auto shifted = MatchCollectivesAcrossRanks(
      {{AllGather(0, 1, 0, 50)}, {AllGather(1, 1, 210, 45)}, {AllGather(2, 1, 30, 20)}});
  ASSERT_EQ(shifted.size(), 1u);
  EXPECT_EQ(shifted[0].ended_before_last_start_ns, 160'000);  // 210 - 50 us
  // The report's collective_sync table says so.
  auto sync_notes = [](int64_t rank1_start_us) {
    std::vector<RankReport> ranks(3);
    for (int r = 0; r < 3; ++r) ranks[r].rank = r;
    ranks[0].collectives = {AllGather(0, 1, 0, 50)};
    ranks[1].collectives = {AllGather(1, 1, rank1_start_us, 45)};
    ranks[2].collectives = {AllGather(2, 1, 30, 20)};
    const TraceReport report = CombineReports(std::move(ranks));
    const Table* t = report.Find("collective_sync");
    return t == nullptr ? std::vector<std::string>{} : t->notes();
  };
  const std::vector<std::string> notes = sync_notes(210);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("clocks disagree: at 1 of 1 instances"), std::string::npos) << notes[1];
  EXPECT_NE(notes[1].find("by up to 160.0 us"), std::string::npos) << notes[1];
  EXPECT_EQ(sync_notes(10).size(), 1u);
}

TEST(MultiRankTest, DlrmEightRanksGiveCrossRankCollectiveTable) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  auto files = DlrmFiles();
  ASSERT_EQ(files.size(), 8u);
  TraceReport report = CombineReports(AnalyzeTraceFiles(files, ReportOptions{}, 2));
  ASSERT_EQ(report.ranks.size(), 8u);
  std::set<int64_t> ranks;
  for (const auto& r : report.ranks) ranks.insert(r.rank);
  EXPECT_EQ(ranks, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  const Table* cross = report.Find("cross_rank_collectives");
  ASSERT_NE(cross, nullptr);
  // Each rank has 3 all-reduce and 5 send/recv NCCL kernels; all are matched in all 8 ranks.
  EXPECT_EQ(cross->size(), 8u);
  int ranks_col = cross->ColumnIndex("ranks"), skew_col = cross->ColumnIndex("skew_us"),
      transfer_col = cross->ColumnIndex("transfer_us");
  for (const auto& row : cross->rows()) {
    EXPECT_EQ(std::get<int64_t>(row[ranks_col]), 8);
    EXPECT_GE(std::get<double>(row[skew_col]), 0.0);
    EXPECT_GT(std::get<double>(row[transfer_col]), 0.0);
  }
  nlohmann::json json = ReportToJson(report);
  EXPECT_EQ(json["cross_rank_collectives"].size(), 8u);
  EXPECT_EQ(json["ranks"][0]["timeline_us"].size(), 9u);
}

TEST(MultiRankTest, SerializedReportsRoundTrip) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  auto files = DlrmFiles();
  auto reports = AnalyzeTraceFiles({files[0]}, ReportOptions{}, 1);
  RankReport back = RankReport::Deserialize(reports[0].Serialize());
  EXPECT_EQ(back.rank, reports[0].rank);
  EXPECT_EQ(back.first_event_ns, reports[0].first_event_ns);
  EXPECT_NE(back.first_event_ns, INT64_MIN);
  EXPECT_EQ(back.timeline.busy_ns, reports[0].timeline.busy_ns);
  EXPECT_EQ(back.collectives.size(), reports[0].collectives.size());
  ASSERT_EQ(back.tables.size(), reports[0].tables.size());
  EXPECT_EQ(back.tables[3].size(), reports[0].tables[3].size());
}

TEST(MultiRankTest, MergeGivesDisjointProcessesPerRank) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  auto files = DlrmFiles();
  std::string out =
      (std::filesystem::temp_directory_path() / "sextant_merged_test.json.gz").string();
  MergeSummary s = MergeTraces({files[0], files[1]}, out);
  EXPECT_EQ(s.files, 2u);
  InputText text = InputText::Load(out);
  EXPECT_EQ(text.compression(), Compression::kGzip);
  auto merged = nlohmann::json::parse(text.text());
  std::set<int64_t> rank0_pids, rank1_pids;
  size_t named = 0;
  for (const auto& ev : merged["traceEvents"]) {
    if (ev.value("name", "") == "process_name") {
      ++named;
      std::string label = ev["args"]["name"];
      EXPECT_TRUE(label.rfind("rank 0: ", 0) == 0 || label.rfind("rank 1: ", 0) == 0) << label;
      continue;
    }
    int64_t pid = ev["pid"];
    (pid < 200000 ? rank0_pids : rank1_pids).insert(pid);
  }
  EXPECT_EQ(named, s.processes);
  EXPECT_FALSE(rank0_pids.empty());
  EXPECT_FALSE(rank1_pids.empty());
  for (int64_t p : rank0_pids) EXPECT_EQ(rank1_pids.count(p), 0u);
  // Re-reading the merged file sees every kernel of both ranks.
  TraceData a = ReadKinetoTrace(files[0]), b = ReadKinetoTrace(files[1]);
  TraceData m = ReadKinetoTrace(out);
  EXPECT_EQ(m.gpu.size(), a.gpu.size() + b.gpu.size());
  std::filesystem::remove(out);
}

TEST(MultiRankTest, DiffOfTraceWithItselfIsUnchangedAndAgainstAnotherFindsChanges) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  auto files = DlrmFiles();
  TraceData a = ReadKinetoTrace(files[0]);
  TraceDiff same = DiffTraces(a, a);
  for (const auto& k : same.kernels) EXPECT_EQ(k.status, "unchanged") << k.name;
  for (const auto& o : same.op_shapes) EXPECT_EQ(o.status, "unchanged") << o.name << o.shape;
  for (const auto& o : same.roofline) EXPECT_EQ(o.base_tflops, o.new_tflops) << o.name;
  TraceData b = ReadKinetoTrace(files[1]);
  TraceDiff d = DiffTraces(a, b);
  ASSERT_FALSE(d.kernels.empty());
  // Largest absolute change first.
  for (size_t i = 1; i < d.kernels.size(); ++i) {
    EXPECT_GE(std::llabs(d.kernels[i - 1].delta_ns()), std::llabs(d.kernels[i].delta_ns()));
  }
  EXPECT_EQ(DiffStatus(0, 3, 0, 10), "new");
  EXPECT_EQ(DiffStatus(3, 0, 10, 0), "vanished");
  EXPECT_EQ(DiffStatus(1, 1, 1'000'000, 1'005'000), "unchanged");  // within 1%
  EXPECT_EQ(DiffStatus(1, 1, 1'000'000, 1'200'000), "slower");
  auto tables = DiffTables(d, 5);
  EXPECT_EQ(tables.size(), 6u);  // timeline, kernel categories, kernels, ops, op shapes, roofline
  EXPECT_LE(tables[2].size(), 5u);
}

}  // namespace
}  // namespace sextant
