#include "trace/report_tables.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "trace/trace_report.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// One rank's trace with an op, a kernel, a collective and a recompute frame, so that every
// table an analysis can add is there.
TraceData RankTrace(int rank) {
  return KinetoTraceBuilder()
      .Annotation("ProfilerStep#1", 0, 200)
      .CpuOp("aten::mm", 10, 20,
             R"("Input Dims": [[8, 16], [16, 32]], "Input type": ["float", "float"], )"
             R"("Input Strides": [[16, 1], [32, 1]])")
      .Launch(11, 1, 1)
      .Event(R"({"ph": "X", "cat": "python_function", "name": "torch/utils/checkpoint.py)"
             R"((1500): recompute_fn", "pid": 1, "tid": 1, "ts": 40, "dur": 20})")
      .CpuOp(
          "record_param_comms", 42, 10,
          R"("Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, )"
          R"("Group size": 2, "dtype": "Float", "Process Group Name": "0", "Sequence number": 1)")
      .Launch(43, 1, 2)
      .Kernel("gemm", 15, 10, 1)
      .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 45, 20, 2)
      .TopLevel("distributedInfo", fmt::format(R"({{"rank": {}, "world_size": 2}})", rank))
      .Parse(fmt::format("rank{}.json", rank));
}

// A trace without GPU activity gives zeros everywhere; the report says why.
TEST(ReportTablesTest, ATraceWithoutGpuActivityIsWarnedAbout) {
  const TraceData cpu_only = KinetoTraceBuilder().CpuOp("aten::add", 0, 5, "").Parse("cpu.json");
  const RankReport r = AnalyzeTrace(cpu_only, {}, 0);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("no GPU activity in 1 event"), std::string::npos)
      << r.warnings.back();
  for (const std::string& w : AnalyzeTrace(RankTrace(0), {}, 0).warnings) {
    EXPECT_EQ(w.find("no GPU activity"), std::string::npos) << w;
  }
  // A file cut before its GPU events says that instead of calling itself CPU-only.
  TraceData cut = KinetoTraceBuilder().CpuOp("aten::add", 0, 5, "").Parse("cut.json");
  cut.truncated = true;
  const RankReport c = AnalyzeTrace(cut, {}, 0);
  EXPECT_NE(c.warnings.back().find("the file is cut short"), std::string::npos)
      << c.warnings.back();
}

// The ops tables' percentages are of the kernel time ops launched (TraceLens's ops_summary),
// so they add up to 100 whatever other GPU activity the trace holds.
// --gpu-arch naming a GPU of another architecture than the one the trace ran on makes the
// roofline a what-if, and the report says so; the same architecture (H200 for an H100) does
// not need saying.
TEST(ReportTablesTest, AGpuArchOtherThanTheTracesIsWarnedAbout) {
  const TraceData h100 =
      KinetoTraceBuilder()
          .Launch(1, 1, 1)
          .Kernel("k", 10, 10, 1)
          .TopLevel("deviceProperties", R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3"}])")
          .Parse("h100.json");
  auto warned = [&](const char* gpu) {
    ReportOptions options;
    options.gpu_arch = gpu;
    const RankReport r = AnalyzeTrace(h100, options, 0);
    return std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
      return w.find("so the roofline compares its kernel times with another GPU's peaks") !=
             std::string::npos;
    });
  };
  EXPECT_TRUE(warned("MI355X"));
  EXPECT_FALSE(warned("H200"));
  EXPECT_FALSE(warned(""));
}

TEST(ReportTablesTest, OpPercentagesAreOfTheKernelTimeOpsLaunched) {
  const TraceData trace = KinetoTraceBuilder()
                              .CpuOp("aten::mm", 10, 20, "")
                              .Launch(11, 1, 1)
                              .Kernel("gemm", 15, 30, 1)
                              .Kernel("orphan", 60, 10, 2)  // no launch in the trace
                              .Parse("t.json");
  const RankReport r = AnalyzeTrace(trace, {}, 0);
  for (const Table& t : r.tables) {
    if (t.name() != "ops_by_name" && t.name() != "ops") continue;
    const int col = t.ColumnIndex("percent");
    ASSERT_GE(col, 0);
    double sum = 0;
    for (const auto& row : t.rows()) {
      if (const double* v = std::get_if<double>(&row[static_cast<size_t>(col)])) sum += *v;
    }
    EXPECT_NEAR(sum, 100.0, 1e-9) << t.name();
  }
}

TEST(ReportTablesTest, EveryTableOfAReportIsPresentedOnce) {
  std::set<std::string_view> names;
  for (const TablePresentation& p : ReportTablePresentations()) {
    EXPECT_TRUE(names.insert(p.name).second) << "twice: " << p.name;
    EXPECT_FALSE(p.console_rows == 0 && p.console_hidden.size() > 0) << p.name;
  }
  std::vector<RankReport> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back(AnalyzeTrace(RankTrace(r), {}, r));
  TraceReport report = CombineReports(std::move(ranks));
  ASSERT_NE(report.Find("recompute_timeline"), nullptr);
  ASSERT_NE(report.Find("rank_spread"), nullptr);
  for (const Table& t : report.tables)
    EXPECT_NE(FindTablePresentation(t.name()), nullptr) << t.name() << " has no presentation";
  // The page has a section for each table the registry puts on it.
  const std::string page = RenderReportHtml(report);
  for (const TablePresentation& p : ReportTablePresentations()) {
    const Table* t = report.Find(std::string(p.name));
    if (p.html_section.empty() || t == nullptr) continue;
    // Tables with rows have their section; empty ones (op families the trace lacks) do not.
    EXPECT_EQ(page.find("<h3 id=\"" + std::string(p.name) + "\">") != std::string::npos,
              !t->empty())
        << p.name;
  }
  EXPECT_EQ(page.find("<h3 id=\"launcher_op_args\">"), std::string::npos)
      << "the widest table stays in the machine outputs";
}

// A report for the console alone leaves out the tables of a row per call that only the page
// or the machine outputs show, one for the page those of the machine outputs; each reads
// exactly as the report of every table does.
TEST(ReportTablesTest, EachOutputGetsTheTablesItShowsAndNoMore) {
  auto report = [](const ReportOptions& options) {
    std::vector<RankReport> ranks;
    for (int r = 0; r < 2; ++r) ranks.push_back(AnalyzeTrace(RankTrace(r), options, r));
    return CombineReports(std::move(ranks));
  };
  const TraceReport every = report({});
  ReportOptions console;
  console.every_table = false;
  ReportOptions page = console;
  page.page = true;
  const TraceReport for_console = report(console), for_page = report(page);
  EXPECT_EQ(ReportToConsole(for_console), ReportToConsole(every));
  EXPECT_EQ(RenderReportHtml(for_page), RenderReportHtml(every));
  EXPECT_LT(for_console.tables.size(), for_page.tables.size());
  EXPECT_LT(for_page.tables.size(), every.tables.size());
  for (const char* name : {"launcher_op_args", "unified_perf", "gemm_calls", "op_tree", "ops"}) {
    EXPECT_EQ(for_console.Find(name), nullptr) << name;
    EXPECT_NE(every.Find(name), nullptr) << name;
  }
  EXPECT_NE(for_page.Find("gemm_calls"), nullptr);
  EXPECT_EQ(for_page.Find("unified_perf"), nullptr);
}

}  // namespace
}  // namespace sextant
