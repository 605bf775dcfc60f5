// Checks our analyses against TraceLens's checked-in golden reports (corpus/traces/TraceLens,
// produced by generate_perf_report_pytorch; see corpus/README-traces.md §2).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "trace/collectives.h"
#include "trace/gpu_timeline.h"
#include "trace/graph_capture.h"
#include "trace/kernel_summary.h"
#include "trace/kineto_reader.h"
#include "trace/op_breakdown.h"
#include "trace/op_category.h"
#include "trace/perf_sheets.h"
#include "trace/recompute.h"
#include "trace/short_kernels.h"
#include "trace/trace_runner.h"
#include "trace/tracelens_format.h"
#include "trace/unified_perf.h"
#include "util/corpus_path.h"
#include "util/csv_reader.h"
#include "util/file_io.h"

namespace sextant {
namespace {

struct Golden {
  const char* trace;
  const char* csv_dir;
  const char* capture = nullptr;  // graph-capture trace of a graph-replay trace
};

const Golden kGoldens[] = {
    {"TraceLens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
     "TraceLens/h100/gaunernst_bert-small-uncased__1016001_perf_report_csvs"},
    {"TraceLens/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
     "TraceLens/h100/Falconsai_nsfw_image_detection__1016002_perf_report_csvs"},
    {"TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
     "TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs"},
    {"TraceLens/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
     "TraceLens/h100/facebook_timesformer-base-finetuned-k400__1016002_perf_report_csvs"},
    {"TraceLens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
     "TraceLens/h100/google_owlv2-large-patch14-ensemble__1016001_perf_report_csvs"},
    {"TraceLens/mi210/gpu_only_trace.json.gz", "TraceLens/mi210/gpu_only_trace_perf_report_csvs"},
    {"TraceLens/perf_model_normalization/normalization_layer_test.json.gz",
     "TraceLens/perf_model_normalization/normalization_layer_test_perf_report_csvs"},
    {"TraceLens/torch_compile_triton/trace.json.gz",
     "TraceLens/torch_compile_triton/trace_perf_report_csvs"},
    // The MI300X (ROCm) twins of three H100 traces.
    {"TraceLens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
     "TraceLens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs"},
    {"TraceLens/mi300/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
     "TraceLens/mi300/facebook_timesformer-base-finetuned-k400__1016002_perf_report_csvs"},
    {"TraceLens/mi300/google_owlv2-large-patch14-ensemble__1016001.json.gz",
     "TraceLens/mi300/google_owlv2-large-patch14-ensemble__1016001_perf_report_csvs"},
};

// The references with an ops_summary.csv (a GPU-only trace has no ops).
bool HasOpsSummary(const Golden& g) {
  return std::string(g.trace).find("gpu_only") == std::string::npos;
}

// HIP-graph replays (kernels launched by hipGraphLaunch, which has no flow start). Their
// references are inference reports: a GPU timeline but no kernel_summary.csv.
const Golden kGraphGoldens[] = {
    {"TraceLens/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
     "TraceLens/inference/sglang_decode/perf_csvs",
     "TraceLens/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz"},
    {"TraceLens/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
     "TraceLens/inference/vllm_prefilldecode_piecewise/perf_csvs",
     "TraceLens/inference/vllm_prefilldecode_piecewise/capture_traces/"
     "graph_capture_rank_0.1773709679453551615.pt.trace.json.gz"},
};

std::string Corpus(const std::string& rel) { return CorpusPath("traces/") + rel; }

void ExpectWithin(double ours, double golden, const std::string& what) {
  // 0.1% per row; rows that are zero in the reference must be zero (to 1 ns) in ours.
  double tolerance = std::max(std::fabs(golden) * 1e-3, 1e-6);
  EXPECT_NEAR(ours, golden, tolerance) << what;
}

class GoldenReportTest : public ::testing::TestWithParam<Golden> {
 protected:
  void SetUp() override { SEXTANT_SKIP_WITHOUT_CORPUS(); }
};

// Our timeline by TraceLens row name, in milliseconds as its CSV writes them.
std::map<std::string, double> TimelineMs(const GpuTimeline& t) {
  std::map<std::string, double> ms;
  for (const auto& [type, ns] : TraceLensTimelineRows(t)) ms[std::string(type)] = ns / 1e6;
  return ms;
}

void ExpectTimelineMatchesTraceLens(const Golden& g) {
  TraceData trace = ReadKinetoTrace(Corpus(g.trace));
  GpuTimeline t = ComputeGpuTimeline(trace);
  CsvTable csv = CsvTable::Read(Corpus(std::string(g.csv_dir) + "/gpu_timeline.csv"));
  ASSERT_GE(csv.size(), 8u);
  const std::map<std::string, double> ours = TimelineMs(t);
  size_t checked = 0;
  for (size_t r = 0; r < csv.size(); ++r) {
    const std::string& type = csv.Get(r, "type");
    auto it = ours.find(type);
    ASSERT_NE(it, ours.end()) << type;
    ExpectWithin(it->second, std::stod(csv.Get(r, "time ms")), std::string(g.trace) + " " + type);
    ++checked;
  }
  EXPECT_EQ(checked, 8u);
}

TEST_P(GoldenReportTest, GpuTimelineMatchesTraceLens) {
  ExpectTimelineMatchesTraceLens(GetParam());
}

class GraphReplayReportTest : public GoldenReportTest {};

TEST_P(GraphReplayReportTest, GpuTimelineMatchesTraceLens) {
  ExpectTimelineMatchesTraceLens(GetParam());
}

TEST_P(GoldenReportTest, KernelSumAndCountMatchTraceLens) {
  const Golden& g = GetParam();
  TraceData trace = ReadKinetoTrace(Corpus(g.trace));
  CsvTable csv = CsvTable::Read(Corpus(std::string(g.csv_dir) + "/kernel_summary.csv"));
  ASSERT_GE(csv.size(), 1u);
  // The reference splits a kernel name by parent op; we aggregate per name.
  std::map<std::string, std::pair<double, int64_t>> golden;
  for (size_t r = 0; r < csv.size(); ++r) {
    auto& entry = golden[csv.Get(r, "Kernel name")];
    entry.first += std::stod(csv.Get(r, "Kernel duration (µs)_sum"));
    entry.second += std::stoll(csv.Get(r, "Kernel duration (µs)_count"));
  }
  std::vector<KernelStats> ours = SummarizeKernels(trace);
  std::map<std::string, const KernelStats*> by_name;
  for (const auto& k : ours) {
    if (k.kind == GpuKind::kKernel) by_name[k.name] = &k;
  }
  for (const auto& [name, expected] : golden) {
    auto it = by_name.find(name);
    ASSERT_NE(it, by_name.end()) << "missing kernel " << name;
    EXPECT_EQ(it->second->count, expected.second) << name;
    // Durations are exact multiples of 1 ns; sums agree to rounding of the reference's floats.
    EXPECT_NEAR(it->second->total_ns / 1e3, expected.first, 1e-6 * std::max(1.0, expected.first))
        << name;
  }
  EXPECT_EQ(by_name.size(), golden.size());
}

TEST_P(GoldenReportTest, KernelSummaryRowsByParentOpAndStreamMatchTraceLens) {
  const Golden& g = GetParam();
  TraceData trace = ReadKinetoTrace(Corpus(g.trace));
  const GpuTimeline timeline = ComputeGpuTimeline(trace);
  std::map<std::tuple<std::string, std::string, int64_t>, KernelLaunchStats> ours;
  int64_t kernel_ns = 0;
  for (const auto& k : SummarizeKernelsByParent(trace)) {
    ours[{k.parent_op, k.name, k.stream}] = k;
    kernel_ns += k.total_ns;
  }
  CsvTable csv = CsvTable::Read(Corpus(std::string(g.csv_dir) + "/kernel_summary.csv"));
  ASSERT_GE(csv.size(), 1u);
  for (size_t r = 0; r < csv.size(); ++r) {
    // A GPU-only trace's report has no parent column: no kernel has an op.
    const std::string parent = csv.HasColumn("Parent cpu_op") ? csv.Get(r, "Parent cpu_op") : "";
    const std::string name = csv.Get(r, "Kernel name");
    const int64_t stream = std::stoll(csv.Get(r, "Kernel stream"));
    auto it = ours.find({parent, name, stream});
    ASSERT_NE(it, ours.end()) << "missing row " << parent << " / " << name << " / " << stream;
    const KernelLaunchStats& k = it->second;
    const std::string what = parent + " / " + name;
    EXPECT_EQ(k.count, std::stoll(csv.Get(r, "Kernel duration (µs)_count"))) << what;
    ExpectWithin(k.total_ns / 1e3, std::stod(csv.Get(r, "Kernel duration (µs)_sum")), what);
    ExpectWithin(k.min_ns / 1e3, std::stod(csv.Get(r, "Kernel duration (µs)_min")), what);
    ExpectWithin(k.max_ns / 1e3, std::stod(csv.Get(r, "Kernel duration (µs)_max")), what);
    ExpectWithin(100.0 * k.total_ns / kernel_ns,
                 std::stod(csv.Get(r, "Percent of kernels time (%)")), what);
    ExpectWithin(100.0 * k.total_ns / timeline.total_ns,
                 std::stod(csv.Get(r, "Percent of total time (%)")), what);
  }
  EXPECT_EQ(ours.size(), csv.size());
}

// TraceLens's short kernel study (kernels under 10 us): the histogram's 100 bins and the
// summary by launching op, argument records and kernel name, row by row.
TEST_P(GoldenReportTest, ShortKernelTablesMatchTraceLens) {
  const Golden& g = GetParam();
  TraceData trace = ReadKinetoTrace(Corpus(g.trace));
  const GpuTimeline timeline = ComputeGpuTimeline(trace);
  const ShortKernelStudy study = StudyShortKernels(trace);
  const std::string dir = Corpus(std::string(g.csv_dir));

  CsvTable hist = CsvTable::Read(dir + "/short_kernel_histogram.csv");
  ASSERT_EQ(study.histogram.size(), hist.size()) << g.trace;
  int64_t binned = 0;
  for (size_t r = 0; r < hist.size(); ++r) {
    const ShortKernelBin& bin = study.histogram[r];
    const std::string what = std::string(g.trace) + " bin " + std::to_string(r);
    EXPECT_NEAR(bin.start_us, std::stod(hist.Get(r, "bin_start")), 1e-9) << what;
    EXPECT_NEAR(bin.end_us, std::stod(hist.Get(r, "bin_end")), 1e-9) << what;
    EXPECT_EQ(bin.count, std::stoll(hist.Get(r, "count"))) << what;
    binned += bin.count;
  }
  EXPECT_EQ(binned, study.kernels);

  // An empty summary is written as an empty file.
  const std::string summary_path = dir + "/short_kernels_summary.csv";
  const std::string head = ReadFileHead(summary_path, 4096);
  if (head.substr(0, head.find('\n')).find(',') == std::string::npos) {
    EXPECT_TRUE(study.groups.empty()) << g.trace;
    return;
  }
  CsvTable csv = CsvTable::Read(summary_path);
  const bool by_op = csv.HasColumn("Parent cpu_op");
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>,
           const ShortKernelGroup*>
      ours;
  for (const ShortKernelGroup& k : study.groups) {
    ours[{k.parent_op, k.input_dims, k.input_strides, k.concrete_inputs, k.name}] = &k;
  }
  for (size_t r = 0; r < csv.size(); ++r) {
    auto get = [&](const char* column) { return by_op ? csv.Get(r, column) : std::string(); };
    const std::string name = csv.Get(r, "Kernel name");
    auto it = ours.find({get("Parent cpu_op"), get("Input dims"), get("Input strides"),
                         get("Concrete Inputs"), name});
    ASSERT_NE(it, ours.end()) << "missing row " << get("Parent cpu_op") << " " << get("Input dims")
                              << " " << get("Input strides") << " " << get("Concrete Inputs") << " "
                              << name;
    const ShortKernelGroup& k = *it->second;
    EXPECT_EQ(k.count, std::stoll(csv.Get(r, "Short Kernel count"))) << name;
    ExpectWithin(k.total_ns / 1e3, std::stod(csv.Get(r, "Short Kernel duration (µs) sum")), name);
    ExpectWithin(k.total_ns / 1e3 / static_cast<double>(k.count),
                 std::stod(csv.Get(r, "Short Kernel duration (µs) mean")), name);
    ExpectWithin(100.0 * k.total_ns / timeline.total_ns,
                 std::stod(csv.Get(r, "Short Kernel duration (µs) percent of total time")), name);
  }
  EXPECT_EQ(ours.size(), csv.size()) << g.trace;
}

TEST_P(GoldenReportTest, OpsWithDirectKernelsMatchTraceLensOpsSummary) {
  const Golden& g = GetParam();
  TraceData trace = ReadKinetoTrace(Corpus(g.trace));
  std::vector<OpStats> ours = SummarizeOps(trace, ComputeOpKernelTimes(trace), false);
  std::map<std::string, const OpStats*> by_name;
  for (const auto& o : ours) by_name[o.name] = &o;
  if (!HasOpsSummary(g)) {
    EXPECT_TRUE(ours.empty()) << "a GPU-only trace has no ops";
    return;
  }
  // TraceLens lists the ops that launch kernels themselves; ours also lists their callers
  // (subtree time only), which are not compared.
  CsvTable csv = CsvTable::Read(Corpus(std::string(g.csv_dir) + "/ops_summary.csv"));
  ASSERT_GE(csv.size(), 1u);
  for (size_t r = 0; r < csv.size(); ++r) {
    const std::string& name = csv.Get(r, "name");
    auto it = by_name.find(name);
    ASSERT_NE(it, by_name.end()) << "missing op " << name;
    EXPECT_EQ(it->second->count, std::stoll(csv.Get(r, "Count"))) << name;
    ExpectWithin(it->second->direct_kernel_ns / 1e3,
                 std::stod(csv.Get(r, "total_direct_kernel_time_sum")), name);
  }
}

TEST_P(GraphReplayReportTest, CapturedOpsMatchTraceLensOpsSummary) {
  const Golden& g = GetParam();
  TraceData replay = ReadKinetoTrace(Corpus(g.trace));
  TraceData capture = ReadKinetoTrace(Corpus(g.capture));
  GraphAttribution a = AttributeGraphReplays(replay, {&capture});
  // As docs/trace.md states: SGLang 1 launch of 544 kernels, vLLM 25 launches of 361.
  const bool sglang = std::string(g.trace).find("sglang") != std::string::npos;
  EXPECT_EQ(a.launches, sglang ? 1u : 25u);
  EXPECT_EQ(a.kernels, sglang ? 544u : 361u);
  EXPECT_EQ(a.launches_matched, a.launches);
  EXPECT_EQ(a.kernels_attributed, a.kernels);
  std::vector<OpStats> ours = SummarizeOps(replay, ComputeOpKernelTimes(replay), false);
  std::map<std::string, const OpStats*> by_name;
  for (const auto& o : ours) by_name[o.name] = &o;
  // The inference report splits an op by its nn.Module; summed per op name here.
  CsvTable csv = CsvTable::Read(Corpus(std::string(g.csv_dir) + "/ops_summary.csv"));
  std::map<std::string, std::pair<int64_t, double>> golden;
  for (size_t r = 0; r < csv.size(); ++r) {
    auto& entry = golden[csv.Get(r, "name")];
    entry.first += std::stoll(csv.Get(r, "Count"));
    entry.second += std::stod(csv.Get(r, "total_direct_kernel_time_sum"));
  }
  size_t compared = 0;
  for (const auto& [name, expected] : golden) {
    // TraceLens files a kernel launched outside any op under its runtime call's name; such
    // kernels have no op here (docs/trace.md lists the difference).
    if (name.starts_with("hip") || name.starts_with("cuda")) continue;
    auto it = by_name.find(name);
    ASSERT_NE(it, by_name.end()) << "missing op " << name;
    EXPECT_EQ(it->second->count, expected.first) << name;
    ExpectWithin(it->second->direct_kernel_ns / 1e3, expected.second, name);
    ++compared;
  }
  EXPECT_GE(compared, 13u);
}

// TraceLens's ops_summary_by_category rows, summed over what else a report splits them by
// (the inference report's parent_module), keyed by (op category, is_recompute).
using CategoryKey = std::pair<std::string, std::string>;
std::map<CategoryKey, std::pair<int64_t, double>> GoldenOpCategories(const std::string& csv_dir) {
  CsvTable csv = CsvTable::Read(Corpus(csv_dir + "/ops_summary_by_category.csv"));
  std::map<CategoryKey, std::pair<int64_t, double>> rows;
  const bool has_recompute = csv.HasColumn("is_recompute");
  for (size_t r = 0; r < csv.size(); ++r) {
    auto& row = rows[{csv.Get(r, "op category"),
                      has_recompute && csv.Get(r, "is_recompute") == "True" ? "yes" : "no"}];
    row.first += std::stoll(csv.Get(r, "Count"));
    row.second += std::stod(csv.Get(r, "total_direct_kernel_time_ms"));
  }
  return rows;
}

void ExpectOpCategoriesMatchTraceLens(const TraceData& trace, const std::string& csv_dir) {
  const RecomputeFlags recompute = MarkRecompute(trace);
  std::map<CategoryKey, const OpCategoryStats*> ours;
  auto rows =
      SummarizeOpCategories(FindKernelLaunchers(trace, TimelineEvents(trace), recompute.cpu));
  for (const auto& row : rows) ours[{row.category, row.recompute ? "yes" : "no"}] = &row;
  const auto golden = GoldenOpCategories(csv_dir);
  ASSERT_FALSE(golden.empty());
  for (const auto& [key, expected] : golden) {
    const std::string what = csv_dir + " " + key.first + " recompute " + key.second;
    auto it = ours.find(key);
    ASSERT_NE(it, ours.end()) << what;
    EXPECT_EQ(it->second->count, expected.first) << what;
    ExpectWithin(it->second->direct_kernel_ns / 1e6, expected.second, what);
  }
  EXPECT_EQ(ours.size(), golden.size()) << csv_dir;
}

// TraceLens's ops_summary: every op that launches kernels itself, by name (and recompute
// flag), with its count, direct and subtree kernel time and categories; every row compared.
void ExpectLauncherOpsMatchTraceLens(const TraceData& trace, const std::string& csv_dir) {
  const RecomputeFlags recompute = MarkRecompute(trace);
  const auto rows =
      SummarizeLauncherOps(trace, FindKernelLaunchers(trace, TimelineEvents(trace), recompute.cpu),
                           ComputeOpKernelTimes(trace));
  CsvTable csv = CsvTable::Read(Corpus(csv_dir + "/ops_summary.csv"));
  const bool split = csv.HasColumn("is_recompute");
  std::map<std::string, const LauncherOpStats*> ours;
  for (const auto& row : rows)
    ours[row.name + (split ? (row.recompute ? "|True" : "|False") : "")] = &row;
  ASSERT_GE(csv.size(), 1u);
  for (size_t r = 0; r < csv.size(); ++r) {
    const std::string key = csv.Get(r, "name") + (split ? "|" + csv.Get(r, "is_recompute") : "");
    auto it = ours.find(key);
    ASSERT_NE(it, ours.end()) << csv_dir << " missing op " << key;
    const LauncherOpStats& o = *it->second;
    EXPECT_EQ(o.count, std::stoll(csv.Get(r, "Count"))) << key;
    ExpectWithin(o.direct_kernel_ns / 1e3, std::stod(csv.Get(r, "total_direct_kernel_time_sum")),
                 key + " direct");
    ExpectWithin(o.subtree_kernel_ns / 1e3, std::stod(csv.Get(r, "total_subtree_kernel_time_sum")),
                 key + " subtree");
    std::string categories = "[";
    for (size_t c = 0; c < o.categories.size(); ++c)
      categories += (c ? ", '" : "'") + o.categories[c] + "'";
    EXPECT_EQ(categories + "]", csv.Get(r, "Categories")) << key;
  }
  EXPECT_EQ(ours.size(), csv.size()) << csv_dir;
}

// A group of op calls keyed as TraceLens groups ops_unique_args and unified_perf_summary: name,
// category, process and thread names, argument records and (`split`) the recompute flag.
template <typename Group>
std::string OurRecordKey(const TraceData& trace, const Group& row, bool split) {
  return fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", row.name, row.category, trace.ProcessName(row.thread),
      trace.ProcessLabel(row.thread), trace.ThreadName(row.thread), row.input_dims, row.input_types,
      row.input_strides, row.concrete_inputs, split ? (row.recompute ? "True" : "False") : "");
}
std::string GoldenRecordKey(const CsvTable& csv, size_t r, bool split) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", csv.Get(r, "name"), csv.Get(r, "op category"),
                     csv.Get(r, "process_name"), csv.Get(r, "process_label"),
                     csv.Get(r, "thread_name"), csv.Get(r, "Input Dims"), csv.Get(r, "Input type"),
                     csv.Get(r, "Input Strides"), csv.Get(r, "Concrete Inputs"),
                     split ? csv.Get(r, "is_recompute") : "");
}

// TraceLens's ops_unique_args: the launchers by name, category, thread and argument records;
// every row compared (count, and the mean, median, min, max and sum of direct and subtree
// kernel time).
void ExpectLauncherArgsMatchTraceLens(const TraceData& trace, const std::string& csv_dir) {
  const RecomputeFlags recompute = MarkRecompute(trace);
  const auto rows =
      SummarizeLauncherArgs(trace, FindKernelLaunchers(trace, TimelineEvents(trace), recompute.cpu),
                            ComputeOpKernelTimes(trace));
  CsvTable csv = CsvTable::Read(Corpus(csv_dir + "/ops_unique_args.csv"));
  const bool split = csv.HasColumn("is_recompute");
  // TraceLens splits by process and thread name, which the trace's metadata events give.
  std::map<std::string, const LauncherArgsStats*> ours;
  for (const auto& row : rows) {
    ours[OurRecordKey(trace, row, split)] = &row;
  }
  ASSERT_GE(csv.size(), 1u);
  for (size_t r = 0; r < csv.size(); ++r) {
    const std::string key = GoldenRecordKey(csv, r, split);
    auto it = ours.find(key);
    ASSERT_NE(it, ours.end()) << csv_dir << " missing row " << key;
    const LauncherArgsStats& o = *it->second;
    EXPECT_EQ(o.direct_us.n, std::stoll(csv.Get(r, "operation_count"))) << key;
    for (const auto& [stats, column] : {std::pair{&o.direct_us, "total_direct_kernel_time"},
                                        std::pair{&o.subtree_us, "total_subtree_kernel_time"}}) {
      const std::string c = column;
      ExpectWithin(stats->mean, std::stod(csv.Get(r, c + "_mean")), key + " mean");
      ExpectWithin(stats->median, std::stod(csv.Get(r, c + "_median")), key + " median");
      ExpectWithin(stats->min, std::stod(csv.Get(r, c + "_min")), key + " min");
      ExpectWithin(stats->max, std::stod(csv.Get(r, c + "_max")), key + " max");
      ExpectWithin(stats->sum, std::stod(csv.Get(r, c + "_sum")), key + " sum");
    }
  }
  EXPECT_EQ(ours.size(), csv.size()) << csv_dir;
}

TEST_P(GoldenReportTest, LauncherArgsMatchTraceLensOpsUniqueArgs) {
  const Golden& g = GetParam();
  if (!HasOpsSummary(g)) return;  // OpCategoriesMatchTraceLens checks a GPU-only trace
  ExpectLauncherArgsMatchTraceLens(ReadKinetoTrace(Corpus(g.trace)), g.csv_dir);
}

TEST_P(GoldenReportTest, LauncherOpsMatchTraceLensOpsSummary) {
  const Golden& g = GetParam();
  if (!HasOpsSummary(g)) return;  // OpCategoriesMatchTraceLens checks a GPU-only trace
  ExpectLauncherOpsMatchTraceLens(ReadKinetoTrace(Corpus(g.trace)), g.csv_dir);
}

TEST_P(GoldenReportTest, OpCategoriesMatchTraceLens) {
  const Golden& g = GetParam();
  TraceData trace = ReadKinetoTrace(Corpus(g.trace));
  if (!HasOpsSummary(g)) {
    EXPECT_TRUE(
        SummarizeOpCategories(FindKernelLaunchers(trace, TimelineEvents(trace), {})).empty())
        << "a GPU-only trace has no op or runtime call to file its kernels under";
    return;
  }
  ExpectOpCategoriesMatchTraceLens(trace, g.csv_dir);
}

TEST_P(GraphReplayReportTest, CapturedOpCategoriesMatchTraceLens) {
  const Golden& g = GetParam();
  TraceData replay = ReadKinetoTrace(Corpus(g.trace));
  TraceData capture = ReadKinetoTrace(Corpus(g.capture));
  AttributeGraphReplays(replay, {&capture});
  ExpectOpCategoriesMatchTraceLens(replay, g.csv_dir);
}

// TraceLens's perf sheets (GEMM, UnaryElementwise, BinaryElementwise): one row per (op,
// parameters[, recompute]), every row compared. Standard deviations get 2 % and 0.25 ns
// (TraceLens takes kernel times as differences of float microsecond timestamps, whose rounding
// moves a spread of a few nanoseconds; means and sums are unaffected).
// `only`: the sheets to compare (empty: every one).
void ExpectPerfSheetsMatchTraceLens(const TraceData& trace, const std::string& csv_dir,
                                    const std::set<std::string>& only = {}) {
  const RecomputeFlags recompute = MarkRecompute(trace);
  for (const PerfSheet& sheet : SummarizePerfSheets(trace, TimelineEvents(trace),
                                                    ComputeOpKernelTimes(trace), recompute.cpu)) {
    if (!only.empty() && only.count(std::string(sheet.tracelens_name)) == 0) continue;
    const std::string path = Corpus(csv_dir + "/" + std::string(sheet.tracelens_name) + ".csv");
    if (!std::filesystem::exists(path)) {
      EXPECT_TRUE(sheet.groups.empty())
          << csv_dir << " has " << sheet.tracelens_name << " calls but TraceLens wrote no sheet";
      continue;
    }
    CsvTable csv = CsvTable::Read(path);
    const bool split = csv.HasColumn("is_recompute");
    std::map<std::string, const PerfSheetGroup*> ours;
    for (const auto& g : sheet.groups) {
      std::string key = g.name;
      for (const auto& p : g.params) key += "|" + p;
      if (split) key += g.recompute ? "|True" : "|False";
      ours[key] = &g;
    }
    ASSERT_GE(csv.size(), 1u);
    for (size_t r = 0; r < csv.size(); ++r) {
      std::string key = csv.Get(r, "name");
      for (std::string_view p : sheet.params) key += "|" + csv.Get(r, "param: " + std::string(p));
      if (split) key += "|" + csv.Get(r, "is_recompute");
      auto it = ours.find(key);
      ASSERT_NE(it, ours.end()) << csv_dir << " " << sheet.tracelens_name << " no row " << key;
      const PerfSheetGroup& g = *it->second;
      EXPECT_EQ(g.kernel_us.n, std::stoll(csv.Get(r, "name_count"))) << key;
      // An empty cell is TraceLens's NaN (no byte count, no rate without kernel time, no
      // spread of one call): ours must be NaN there too.
      auto expect = [&](double ours, const std::string& column, double relative,
                        double absolute = 1e-6) {
        const std::string& text = csv.Get(r, column);
        if (text.empty()) {
          EXPECT_TRUE(std::isnan(ours)) << key << " " << column << ": " << ours;
        } else {
          const double golden = std::stod(text);
          EXPECT_NEAR(ours, golden, relative * std::fabs(golden) + absolute)
              << key << " " << column;
        }
      };
      expect(g.gflops, "GFLOPS_first", 1e-3);
      expect(g.bytes / (1 << 20), "Data Moved (MB)_first", 1e-3);
      expect(g.kernel_us.sum, "Kernel Time (µs)_sum", 1e-3);
      expect(g.kernel_us.median, "Kernel Time (µs)_median", 1e-3);
      expect(g.kernel_us.min, "Kernel Time (µs)_min", 1e-3);
      expect(g.kernel_us.max, "Kernel Time (µs)_max", 1e-3);
      expect(g.tflops.mean, "TFLOPS/s_mean", 1e-3);
      expect(g.tbps.median, "TB/s_median", 1e-3);
      // A double holds a microsecond timestamp of ~1.7e12 to 2.4e-4 µs.
      expect(g.kernel_us.std, "Kernel Time (µs)_std", 2e-2, 2.5e-4);
    }
    EXPECT_EQ(ours.size(), csv.size()) << csv_dir << " " << sheet.tracelens_name;
  }
}

TEST_P(GoldenReportTest, PerfSheetsMatchTraceLens) {
  const Golden& g = GetParam();
  ExpectPerfSheetsMatchTraceLens(ReadKinetoTrace(Corpus(g.trace)), g.csv_dir);
}

// The GEMM and RMSNorm_fwd sheets of a graph-replay inference report: the captured aten GEMMs
// and the ROCm inference stacks' own GEMMs (aiter::gemm_a16w16, vllm::rocm_unquantized_gemm)
// and RMSNorms (aiter::rmsnorm, rms_norm, add_rmsnorm, rmsnorm2d_fwd_with_add_ck), every row.
TEST_P(GraphReplayReportTest, CapturedGemmAndRmsNormSheetsMatchTraceLens) {
  const Golden& g = GetParam();
  TraceData replay = ReadKinetoTrace(Corpus(g.trace));
  TraceData capture = ReadKinetoTrace(Corpus(g.capture));
  AttributeGraphReplays(replay, {&capture});
  ExpectPerfSheetsMatchTraceLens(
      replay, g.csv_dir,
      {"GEMM", "RMSNorm_fwd", "RoPE_fwd", "InferenceAttention_fwd", "MoE_unfused_fwd"});
}

// TraceLens's unified_perf_summary: every row (op or synthetic kernel row) by name, category,
// process and thread names, argument records and recompute flag; count, CPU duration, kernel
// time statistics, FLOPs and bytes of the modelled ops, their TFLOP/s, and each row's share.
void ExpectUnifiedPerfMatchesTraceLens(const TraceData& trace, const std::string& csv_dir) {
  const RecomputeFlags recompute = MarkRecompute(trace);
  const auto rows = SummarizeUnifiedPerf(trace, TimelineEvents(trace), recompute.cpu);
  CsvTable csv = CsvTable::Read(Corpus(csv_dir + "/unified_perf_summary.csv"));
  const bool split = csv.HasColumn("is_recompute");
  double total_us = 0;
  std::map<std::string, const UnifiedPerfRow*> ours;
  for (const auto& row : rows) {
    total_us += row.kernel_us.sum;
    ours[OurRecordKey(trace, row, split)] = &row;
  }
  ASSERT_GE(csv.size(), 1u);
  for (size_t r = 0; r < csv.size(); ++r) {
    const std::string key = GoldenRecordKey(csv, r, split);
    auto it = ours.find(key);
    if (it == ours.end()) {
      std::string same_name;  // our rows of that op, to show how they differ
      for (const auto& [k, row] : ours)
        if (row->name == csv.Get(r, "name")) same_name += "\n  ours: " + k;
      ADD_FAILURE() << csv_dir << " missing row " << key << same_name;
      continue;
    }
    const UnifiedPerfRow& o = *it->second;
    EXPECT_EQ(o.kernel_us.n, std::stoll(csv.Get(r, "operation_count"))) << key;
    EXPECT_EQ(o.has_perf_model ? "True" : "False", csv.Get(r, "has_perf_model")) << key;
    auto expect = [&](double ours, const std::string& column, double relative = 1e-3) {
      const std::string& text = csv.Get(r, column);
      if (text.empty()) {
        EXPECT_TRUE(std::isnan(ours)) << key << " " << column << ": " << ours;
      } else {
        const double golden = std::stod(text);
        EXPECT_NEAR(ours, golden, relative * std::fabs(golden) + 1e-6) << key << " " << column;
      }
    };
    expect(o.duration_us.sum, "total_duration_us");
    expect(o.duration_us.mean, "mean_duration_us");
    expect(o.duration_us.median, "duration_us_median");
    expect(o.kernel_us.sum, "Kernel Time (µs)_sum");
    expect(o.kernel_us.mean, "Kernel Time (µs)_mean");
    expect(o.kernel_us.min, "Kernel Time (µs)_min");
    expect(o.kernel_us.max, "Kernel Time (µs)_max");
    expect(o.gflops, "GFLOPS");
    expect(o.mib, "Data Moved (MB)");
    expect(o.tflops.mean, "TFLOPS/s_mean");
    expect(o.tbps.median, "TB/s_median");
    expect(100 * o.kernel_us.sum / total_us, "Percentage (%)");
  }
  EXPECT_EQ(ours.size(), csv.size()) << csv_dir;
}

TEST_P(GoldenReportTest, UnifiedPerfSummaryMatchesTraceLens) {
  const Golden& g = GetParam();
  if (!HasOpsSummary(g)) return;  // a GPU-only trace has no ops and TraceLens no such table
  // Triton kernels of torch.compile have a perf model in TraceLens and none in Sextant: the
  // deliberate difference docs/trace.md lists.
  if (std::string(g.trace).find("torch_compile_triton") != std::string::npos) return;
  ExpectUnifiedPerfMatchesTraceLens(ReadKinetoTrace(Corpus(g.trace)), g.csv_dir);
}

// ResNet with activation checkpointing, reported by TraceLens with recompute detection: its
// timeline and op categories are split by whether the work reruns forward ops in backward.
TEST(RecomputeGoldenReportTest, TimelineAndOpCategoriesSplitLikeTraceLens) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string dir = "TraceLens/mi300/resnet_act_checkpoint_recompute_perf_report_csvs";
  TraceData trace = ReadKinetoTrace(Corpus("TraceLens/mi300/resnet_act_checkpoint.json.gz"));
  const RecomputeFlags recompute = MarkRecompute(trace);
  ASSERT_TRUE(recompute.any());
  auto [outside, inside] = SplitByRecompute(recompute, TimelineEvents(trace));
  const std::map<std::string, double> ours[2] = {TimelineMs(ComputeGpuTimeline(trace, outside)),
                                                 TimelineMs(ComputeGpuTimeline(trace, inside))};
  CsvTable csv = CsvTable::Read(Corpus(dir + "/gpu_timeline.csv"));
  ASSERT_EQ(csv.size(), 16u);
  for (size_t r = 0; r < csv.size(); ++r) {
    const std::string& type = csv.Get(r, "type");
    const auto& side = ours[csv.Get(r, "is_recompute") == "True" ? 1 : 0];
    auto it = side.find(type);
    ASSERT_NE(it, side.end()) << type;
    ExpectWithin(it->second, std::stod(csv.Get(r, "time ms")),
                 type + " recompute " + csv.Get(r, "is_recompute"));
  }
  ExpectOpCategoriesMatchTraceLens(trace, dir);
  ExpectPerfSheetsMatchTraceLens(trace, dir);
  ExpectLauncherOpsMatchTraceLens(trace, dir);
  ExpectLauncherArgsMatchTraceLens(trace, dir);
  ExpectUnifiedPerfMatchesTraceLens(trace, dir);
}

// TraceLens's coll_analysis of the same ResNet step: the kernels that carry their collective's
// metadata, grouped by it. Five RCCL kernels without metadata are in neither table.
TEST(CollectiveGoldenReportTest, CollectiveCallsMatchTraceLensCollAnalysis) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string dir = "TraceLens/mi300/resnet_act_checkpoint_recompute_perf_report_csvs";
  const TraceData trace = ReadKinetoTrace(Corpus("TraceLens/mi300/resnet_act_checkpoint.json.gz"));
  const std::vector<CollectiveCallGroup> ours = GroupCollectiveCalls(trace);
  CsvTable csv = CsvTable::Read(Corpus(dir + "/coll_analysis.csv"));
  ASSERT_EQ(csv.size(), 4u);
  ASSERT_EQ(ours.size(), csv.size());
  for (size_t r = 0; r < csv.size(); ++r) {
    const CollectiveCallGroup& o = ours[r];  // both largest total first
    const std::string key = csv.Get(r, "Collective name") + " " + csv.Get(r, "dtype");
    EXPECT_EQ(o.process_group, csv.Get(r, "Process Group Name")) << key;
    EXPECT_EQ(o.pg_ranks, csv.Get(r, "Process Group Ranks")) << key;
    EXPECT_EQ(o.name, csv.Get(r, "Collective name")) << key;
    EXPECT_EQ(o.dtype, csv.Get(r, "dtype")) << key;
    EXPECT_EQ(o.in_split, csv.Get(r, "In split size")) << key;
    EXPECT_EQ(o.out_split, csv.Get(r, "Out split size")) << key;
    EXPECT_EQ(o.group_size, std::llround(std::stod(csv.Get(r, "Group size")))) << key;
    EXPECT_EQ(o.in_nelems, std::llround(std::stod(csv.Get(r, "In msg nelems")))) << key;
    EXPECT_EQ(o.out_nelems, std::llround(std::stod(csv.Get(r, "Out msg nelems")))) << key;
    EXPECT_EQ(o.stream, std::stoll(csv.Get(r, "stream"))) << key;
    EXPECT_EQ(o.dur_us.n, std::stoll(csv.Get(r, "operation_count"))) << key;
    auto expect = [&](double value, const char* column, double relative) {
      const double golden = std::stod(csv.Get(r, column));
      EXPECT_NEAR(value, golden, relative * std::fabs(golden) + 1e-9) << key << " " << column;
    };
    expect(o.in_mib, "In msg size (MB)_first", 1e-3);
    expect(o.out_mib, "Out msg size (MB)_first", 1e-3);
    expect(o.dur_us.sum, "dur_sum", 1e-4);
    expect(o.dur_us.mean, "dur_mean", 1e-4);
    expect(o.dur_us.std, "dur_std", 1e-4);
    expect(o.dur_us.min, "dur_min", 1e-4);
    expect(o.dur_us.max, "dur_max", 1e-4);
  }
}

// TraceLens's multi-rank collective report on the 8x H100 modded-nanogpt run, written by
// TraceLens itself (tests/data/tracelens_multi_rank/README.md), against ours in TraceLens's
// format. Each row is found by its key columns; every other column the two share is compared.
// TraceLens subtracts float64 microsecond timestamps near 6.3e12, whose spacing is 2^-10 us:
// its skews and waits carry up to ~0.002 us of that rounding.
TEST(CollectiveGoldenReportTest, MultiRankCollectiveReportMatchesTraceLens) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  std::vector<std::string> files;
  for (int r = 0; r < 8; ++r) {
    files.push_back(Corpus(fmt::format("llm_training/modded-nanogpt-8xh100/rank{}.json.gz", r)));
  }
  const TraceReport report = CombineReports(AnalyzeTraceFiles(files, ReportOptions{}, 2));
  std::map<std::string, const Table*> ours;
  const std::vector<Table> tables = TraceLensMultiRankTables(report);
  for (const Table& t : tables) ours[t.name()] = &t;
  const std::string dir =
      std::string(SEXTANT_SOURCE_DIR) + "/tests/data/tracelens_multi_rank/modded-nanogpt-8xh100/";
  const std::map<std::string, std::vector<std::string>> keys = {
      {"nccl_summary_implicit_sync", {"Collective name", "dtype", "In msg nelems"}},
      {"nccl_summary_long",
       {"rank", "Process Group Name", "Collective name", "dtype", "In msg nelems", "Out msg nelems",
        "stream"}},
      {"straggler_summary", {"rank"}}};
  // A key cell as text: TraceLens writes integers of columns with gaps as floats ("8.0").
  auto normal = [](const std::string& text) {
    std::optional<double> v = ParseNumberCell(text);
    return v && *v == std::floor(*v) ? fmt::format("{}", static_cast<int64_t>(*v)) : text;
  };
  for (const auto& [name, key_columns] : keys) {
    ASSERT_TRUE(ours.count(name)) << name;
    const Table& t = *ours[name];
    CsvTable golden = CsvTable::Read(dir + name + ".csv");
    ASSERT_EQ(t.size(), golden.size()) << name;
    std::map<std::string, size_t> our_rows;
    for (size_t r = 0; r < t.size(); ++r) {
      std::string key;
      for (const std::string& k : key_columns) {
        const int c = t.ColumnIndex(k);
        ASSERT_GE(c, 0) << name << " " << k;
        key += normal(FormatCellExact(t.rows()[r][static_cast<size_t>(c)])) + "|";
      }
      our_rows[key] = r;
    }
    int compared = 0;
    for (size_t g = 0; g < golden.size(); ++g) {
      std::string key;
      for (const std::string& k : key_columns) key += normal(golden.Get(g, k)) + "|";
      ASSERT_TRUE(our_rows.count(key)) << name << " row " << key;
      const std::vector<Cell>& row = t.rows()[our_rows[key]];
      for (const std::string& column : golden.header()) {
        const int c = t.ColumnIndex(column);
        if (c < 0) continue;  // node_id, node_span
        const std::string ours_text = FormatCellExact(row[static_cast<size_t>(c)]);
        const std::optional<double> want = ParseNumberCell(golden.Get(g, column));
        if (!want) {
          EXPECT_EQ(ours_text, golden.Get(g, column)) << name << " " << key << " " << column;
        } else {
          const double got = std::stod(ours_text);
          EXPECT_NEAR(got, *want, std::max(1e-4 * std::fabs(*want), 2e-3))
              << name << " " << key << " " << column;
        }
        ++compared;
      }
    }
    EXPECT_GT(compared, static_cast<int>(golden.size()) * 5) << name;
  }
}

// TraceLens's JAX report: one GPU timeline per device (gpu_pid), from an XPlane profile.
// xprof numbers pids by plane position; in this profile plane 0 is host metadata, so pid p is
// "/device:GPU:<p-1>".
TEST(XPlaneGoldenReportTest, JaxConvGpuTimelinePerDeviceMatchesTraceLens) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  std::vector<TraceData> traces =
      ReadTraceFile(Corpus("TraceLens/mi300/jax_conv_minimal_legacy/"
                           "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"));
  CsvTable csv =
      CsvTable::Read(Corpus("TraceLens/mi300/jax_conv_minimal_perf_report_csvs/gpu_timeline.csv"));
  std::map<int64_t, GpuTimeline> by_device;
  for (const TraceData& t : traces) by_device[t.rank] = ComputeGpuTimeline(t);
  size_t checked = 0;
  std::set<int64_t> devices;
  for (size_t r = 0; r < csv.size(); ++r) {
    int64_t device = std::stoll(csv.Get(r, "gpu_pid")) - 1;
    devices.insert(device);
    auto it = by_device.find(device);
    ASSERT_NE(it, by_device.end()) << "no trace for GPU " << device;
    const GpuTimeline& t = it->second;
    std::map<std::string, double> ours = TimelineMs(t);
    const std::string& type = csv.Get(r, "type");
    ASSERT_NE(ours.find(type), ours.end()) << type;
    ExpectWithin(ours[type], std::stod(csv.Get(r, "time ms")),
                 "GPU " + std::to_string(device) + " " + type);
    ++checked;
  }
  EXPECT_EQ(checked, 16u);
  EXPECT_EQ(devices.size(), by_device.size()) << "a GPU with events the reference does not list";
}

// DeepSeek-V3 on H800 (DualPipe, EP64): DeepEP's dispatch/combine kernels run on their own
// stream (27) beside compute (7, 23); the only other kernel on stream 27 is an FP8 cast. The
// communication time is therefore the summed durations of stream 27 less the casts (kernels
// on one stream do not overlap), a count that does not use kernel-name rules.
TEST(LlmTrainingTraceTest, DeepEpKernelsAreCommunication) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  TraceData t = ReadKinetoTrace(CorpusPath("traces/llm_training/deepseek-v3-h800-ep64/train.json"));
  // DeepEP's stream carries its exchanges, plus casts and the layout kernel that counts tokens
  // per rank and expert (csrc/kernels/layout.cu), which are computation.
  int64_t stream27 = 0;
  for (const GpuEvent& g : t.gpu) {
    const std::string_view name = t.Name(g.name);
    if (g.kind == GpuKind::kKernel && g.stream == 27 &&
        name.find("cast") == std::string_view::npos &&
        name.find("get_dispatch_layout") == std::string_view::npos) {
      stream27 += g.dur_ns;
    }
  }
  ASSERT_GT(stream27, 100'000'000);  // > 100 ms of DeepEP work in this step
  GpuTimeline tl = ComputeGpuTimeline(t);
  EXPECT_EQ(tl.communication_ns, stream27);
  // DualPipe overlaps it with compute almost entirely.
  EXPECT_LT(tl.exposed_communication_ns, tl.communication_ns / 10);
}

INSTANTIATE_TEST_SUITE_P(TraceLens, GoldenReportTest, ::testing::ValuesIn(kGoldens));
INSTANTIATE_TEST_SUITE_P(TraceLens, GraphReplayReportTest, ::testing::ValuesIn(kGraphGoldens));

}  // namespace
}  // namespace sextant
