// The charts of the HTML trace report (report_page.h): the JSON the page embeds must be the
// rows of the tables the page shows — roofline points, GPU time bars, top kernels — and the
// roofs the GPU's datasheet peaks.
#include "trace/report_page.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/cell_shortening.h"
#include "report/html_writer.h"
#include "report/table.h"
#include "trace/category_colors.h"
#include "trace/kernel_name.h"
#include "trace/report_json.h"
#include "trace/trace_report.h"
#include "trace/trace_runner.h"
#include "trace/trace_test_util.h"
#include "util/corpus_path.h"
#include "util/csv_reader.h"

namespace sextant {
namespace {

// The JSON the page's script reads: the content of <script type="application/json" id="data">.
nlohmann::json EmbeddedChartData(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const size_t start = html.find(open);
  EXPECT_NE(start, std::string::npos) << "no embedded data";
  if (start == std::string::npos) return nullptr;
  const size_t end = html.find("</script>", start);
  EXPECT_NE(end, std::string::npos);
  return nlohmann::json::parse(html.substr(start + open.size(), end - start - open.size()));
}

// The rows of `table` whose rank column is `rank`, in table order.
std::vector<std::vector<Cell>> RowsOfRank(const Table& table, int64_t rank) {
  std::vector<std::vector<Cell>> rows;
  const int col = table.ColumnIndex("rank");
  for (const auto& row : table.rows()) {
    if (std::get<int64_t>(row[col]) == rank) rows.push_back(row);
  }
  return rows;
}

// A cell as the page's JSON holds it (numbers compared exactly: JSON round-trips doubles).
nlohmann::json CellAsJson(const Table& table, const std::vector<Cell>& row, const char* key) {
  const int col = table.ColumnIndex(key);
  EXPECT_GE(col, 0) << key;
  const Cell& cell = row[col];
  if (const auto* i = std::get_if<int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return nullptr;
}

constexpr const char* kOwlv2 =
    "traces/TraceLens/mi300/google_owlv2-large-patch14-ensemble__1016001";

class ReportPageCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SEXTANT_SKIP_WITHOUT_CORPUS();
    report_ = CombineReports(
        AnalyzeTraceFiles({CorpusPath(std::string(kOwlv2) + ".json.gz")}, ReportOptions{}, 1));
    html_ = RenderReportHtml(report_);
    data_ = EmbeddedChartData(html_);
  }
  TraceReport report_;
  std::string html_;
  nlohmann::json data_;
};

TEST_F(ReportPageCorpusTest, RooflinePointsAreTheRooflineTableRows) {
  const Table* roofline = report_.Find("roofline");
  ASSERT_NE(roofline, nullptr);
  const auto rows = RowsOfRank(*roofline, 0);
  ASSERT_FALSE(rows.empty()) << "the MI300X owlv2 trace has shapes: its GEMMs are modelled";
  ASSERT_EQ(data_["roofline"].size(), 1u);
  const nlohmann::json& rank0 = data_["roofline"][0];
  EXPECT_EQ(rank0["rank"], 0);
  EXPECT_EQ(rank0["rows"], rows.size());
  const nlohmann::json& points = rank0["points"];
  ASSERT_EQ(points.size(), std::min(rows.size(), kReportRooflinePointsPerRank));
  for (size_t i = 0; i < points.size(); ++i) {
    for (const char* key : {"name", "family", "input_dims", "count", "kernel_us", "tflops", "tbps",
                            "flops_per_byte", "peak_tflops", "bound", "pct_of_roofline"}) {
      EXPECT_EQ(points[i][key], CellAsJson(*roofline, rows[i], key)) << "point " << i << " " << key;
    }
  }
  // The roofs: AMD's MI300X data sheet — 5.3 TB/s HBM3, dense 2614.9 TFLOP/s FP8,
  // 1307.4 BF16, 163.4 FP32 matrix (vector FP32 the same 163.4, so one roof for both).
  EXPECT_EQ(rank0["gpu"], "MI300X");
  EXPECT_DOUBLE_EQ(rank0["hbm_tbps"].get<double>(), 5.3);
  const auto ceilings = rank0["ceilings"].get<std::vector<std::pair<std::string, double>>>();
  ASSERT_EQ(ceilings.size(), 3u);
  EXPECT_EQ(ceilings[0].first, "FP8 matrix");
  EXPECT_DOUBLE_EQ(ceilings[0].second, 2614.9);
  EXPECT_EQ(ceilings[1].first, "BF16 matrix");
  EXPECT_DOUBLE_EQ(ceilings[1].second, 1307.4);
  EXPECT_EQ(ceilings[2].first, "FP32 matrix, FP32 vector");
  EXPECT_DOUBLE_EQ(ceilings[2].second, 163.4);
  // Every point's roof is one of the drawn ceilings.
  for (const auto& p : points) {
    if (p["peak_tflops"].is_null()) continue;
    const double peak = p["peak_tflops"];
    EXPECT_TRUE(std::any_of(ceilings.begin(), ceilings.end(),
                            [&](const auto& c) { return c.second == peak; }))
        << p["name"] << " runs against " << peak << " TFLOP/s, which is not drawn";
  }
}

TEST_F(ReportPageCorpusTest, GpuTimeBarsAreTheGpuTimelineTableAndTraceLensNumbers) {
  const Table* timeline = report_.Find("gpu_timeline");
  ASSERT_NE(timeline, nullptr);
  const nlohmann::json& bars = data_["timeline"];
  ASSERT_EQ(bars["ranks"].size(), 1u);
  const nlohmann::json& rank0 = bars["ranks"][0];
  EXPECT_EQ(rank0["rank"], 0);
  // The stacked segments, in the order TraceLens defines them to add up to the span.
  EXPECT_EQ(bars["types"], nlohmann::json::parse(R"(["computation_time", "exposed_comm_time",
                                                      "exposed_memcpy_time", "idle_time"])"));
  const auto rows = RowsOfRank(*timeline, 0);
  ASSERT_EQ(rows.size(), 9u);  // TraceLens's eight rows and memset_time
  for (const auto& row : rows) {
    const std::string type = std::get<std::string>(row[timeline->ColumnIndex("type")]);
    EXPECT_EQ(rank0["ms"][type], CellAsJson(*timeline, row, "time_ms")) << type;
    EXPECT_EQ(rank0["percent"][type], CellAsJson(*timeline, row, "percent")) << type;
  }
  // Against TraceLens's own gpu_timeline.csv for this trace (0.1%, as the golden tests):
  // computation 327.417 + exposed memcpy 4.399 + idle 576.522 = total 908.338 ms.
  CsvTable csv =
      CsvTable::Read(CorpusPath(std::string(kOwlv2) + "_perf_report_csvs/gpu_timeline.csv"));
  std::map<std::string, double> tracelens;
  for (size_t r = 0; r < csv.size(); ++r)
    tracelens[csv.Get(r, "type")] = std::stod(csv.Get(r, "time ms"));
  double stacked = 0;
  for (const auto& type : bars["types"]) {
    const double ms = rank0["ms"][type.get<std::string>()];
    const double golden = tracelens.at(type.get<std::string>());
    EXPECT_NEAR(ms, golden, std::max(golden * 1e-3, 1e-6)) << type;
    stacked += ms;
  }
  EXPECT_NEAR(stacked, tracelens.at("total_time"), tracelens.at("total_time") * 1e-3);
}

TEST_F(ReportPageCorpusTest, TopKernelsAreTheKernelsTableLargestRows) {
  const Table* kernels = report_.Find("kernels");
  ASSERT_NE(kernels, nullptr);
  auto rows = RowsOfRank(*kernels, 0);
  ASSERT_GT(rows.size(), kReportTopKernels) << "owlv2 runs more kernels than the chart shows";
  const int total = kernels->ColumnIndex("total_us");
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return std::get<double>(a[total]) > std::get<double>(b[total]);
  });
  ASSERT_EQ(data_["kernels"].size(), 1u);
  const nlohmann::json& top = data_["kernels"][0]["top"];
  EXPECT_EQ(data_["kernels"][0]["rows"], rows.size());
  ASSERT_EQ(top.size(), kReportTopKernels);
  for (size_t i = 0; i < top.size(); ++i) {
    for (const char* key : {"name", "category", "count", "total_us", "mean_us", "percent"}) {
      EXPECT_EQ(top[i][key], CellAsJson(*kernels, rows[i], key)) << "kernel " << i << " " << key;
    }
    if (i > 0) {
      EXPECT_GE(top[i - 1]["total_us"].get<double>(), top[i]["total_us"].get<double>());
    }
  }
}

TEST_F(ReportPageCorpusTest, PageIsSelfContainedAndKeepsTheTables) {
  EXPECT_EQ(html_.find("<script src"), std::string::npos);
  EXPECT_EQ(html_.find("<link"), std::string::npos);
  EXPECT_EQ(html_.find("fetch("), std::string::npos);
  EXPECT_EQ(html_.find("XMLHttpRequest"), std::string::npos);
  for (const char* table : {"ranks", "gpu_timeline", "kernels", "roofline", "ops"}) {
    EXPECT_NE(html_.find(std::string("<h3 id=\"") + table + "\">"), std::string::npos) << table;
  }
  EXPECT_NE(html_.find(ReportPageScript()), std::string::npos);
}

// A report of `n` ranks with only a gpu_timeline table: rank r's span is spans_ms[r].
TraceReport SyntheticRanks(const std::vector<double>& spans_ms) {
  std::vector<RankReport> ranks;
  for (size_t r = 0; r < spans_ms.size(); ++r) {
    RankReport rr;
    rr.rank = static_cast<int64_t>(r);
    rr.file = "rank" + std::to_string(r) + ".json";
    rr.timeline.total_ns = static_cast<int64_t>(spans_ms[r] * 1e6);
    Table t("gpu_timeline", "GPU timeline",
            {{"rank", "rank", 0},
             {"type", "type", 0},
             {"time_ms", "time (ms)", 3},
             {"percent", "% of total", 2}});
    // Computation 1 ms, the rest idle.
    t.AddRow({rr.rank, std::string("computation_time"), 1.0, 100.0 / spans_ms[r]});
    t.AddRow({rr.rank, std::string("idle_time"), spans_ms[r] - 1.0,
              100.0 * (spans_ms[r] - 1.0) / spans_ms[r]});
    t.AddRow({rr.rank, std::string("total_time"), spans_ms[r], 100.0});
    rr.tables.push_back(std::move(t));
    ranks.push_back(std::move(rr));
  }
  return CombineReports(std::move(ranks));
}

TEST(ReportPageTest, ManyRanksChartTheFirstSixAndTheSlowestAndFastest) {
  // Twelve ranks of span 10 ms, but rank 9 (a straggler) 14 ms and rank 10 8 ms.
  std::vector<double> spans(12, 10.0);
  spans[9] = 14.0;
  spans[10] = 8.0;
  const nlohmann::json data = ReportChartData(SyntheticRanks(spans));
  EXPECT_EQ(data["chart_ranks"], nlohmann::json::parse("[0, 1, 2, 3, 4, 5, 9, 10]"));
  EXPECT_EQ(data["chart_ranks_note"],
            "8 of 12 ranks charted (the first 6, and the slowest and fastest by GPU span; slowest "
            "by GPU span: rank 9, fastest: rank 10); the tables list every rank");
  // Every rank keeps its bar.
  ASSERT_EQ(data["timeline"]["ranks"].size(), 12u);
  EXPECT_EQ(data["timeline"]["ranks"][9]["ms"]["idle_time"], 13.0);
  EXPECT_EQ(data["timeline"]["ranks"][10]["ms"]["total_time"], 8.0);
  EXPECT_EQ(data["roofline"].size(), 8u);
  EXPECT_EQ(data["kernels"].size(), 8u);
  EXPECT_EQ(data["roofline"][6]["rank"], 9);
  EXPECT_EQ(data["roofline"][6]["rows"], 0);  // no roofline table: no points, not an error
}

TEST(ReportPageTest, FewRanksAreAllCharted) {
  const nlohmann::json data = ReportChartData(SyntheticRanks({5.0, 7.0, 6.0}));
  EXPECT_EQ(data["chart_ranks"], nlohmann::json::parse("[0, 1, 2]"));
  EXPECT_EQ(data["chart_ranks_note"], "");
}

TEST(ReportPageTest, RooflinePeaksSurviveSerialisation) {
  // MPI gathers RankReports as JSON: the page on rank 0 must draw the same roofs.
  RankReport r;
  r.file = "x.json";
  r.roofline_peaks = {"MI300X", 5.3, {{"BF16 matrix", 1307.4}, {"FP32 vector", 163.4}}};
  const RankReport back = RankReport::Deserialize(r.Serialize());
  EXPECT_EQ(back.roofline_peaks.gpu, "MI300X");
  EXPECT_EQ(back.roofline_peaks.hbm_tbps, 5.3);
  EXPECT_EQ(back.roofline_peaks.ceilings, r.roofline_peaks.ceilings);
}

// The short-kernel chart's heading (and its entry in the table of contents) gives the chart's
// bin count, whichever rank comes first, and with several ranks says how many it stands for.
TEST(ReportPageTest, ShortKernelHeadingCountsBinsAndRanks) {
  // Rank 0: one 50 us kernel, no short ones. Rank 1: kernels of 2, 4 and 6 us.
  auto rank_trace = [](int rank, bool short_kernels) {
    KinetoTraceBuilder b;
    if (short_kernels) {
      b.Kernel("k_short", 10, 2, 1).Kernel("k_short", 20, 4, 2).Kernel("k_short", 30, 6, 3);
    } else {
      b.Kernel("k_long", 10, 50, 1);
    }
    return b.TopLevel("distributedInfo", fmt::format(R"({{"rank": {}, "world_size": 2}})", rank))
        .Parse(fmt::format("rank{}.json", rank));
  };
  // The text as the page holds it (HTML-escaped).
  const std::string toc_entry = "\">Kernels shorter than 10 us: durations in 100 equal bins";
  auto heading = [&](const std::string& html) {
    const size_t at = html.find(toc_entry);
    if (at == std::string::npos) return std::string("(none)");
    return html.substr(at + 2, html.find('<', at) - at - 2);
  };
  // The page of ranks 0, 1, ... whose `short_kernels` entries say which have short kernels.
  auto page_heading = [&](std::vector<bool> short_kernels) {
    std::vector<RankReport> ranks;
    for (size_t r = 0; r < short_kernels.size(); ++r) {
      const int rank = static_cast<int>(short_kernels.size() == 1 ? 1 : r);
      ranks.push_back(AnalyzeTrace(rank_trace(rank, short_kernels[r]), {}, rank));
    }
    return heading(RenderReportHtml(CombineReports(std::move(ranks))));
  };
  // One rank: no rank count.
  EXPECT_EQ(page_heading({true}), "Kernels shorter than 10 us: durations in 100 equal bins");
  // Two ranks, the first without short kernels.
  EXPECT_EQ(page_heading({false, true}),
            "Kernels shorter than 10 us: durations in 100 equal bins (2 ranks, 1 with short "
            "kernels: each rank&#39;s bins counted where their centres fall)");
  // Two ranks, both with short kernels.
  EXPECT_EQ(page_heading({true, true}),
            "Kernels shorter than 10 us: durations in 100 equal bins (2 ranks: each rank&#39;s "
            "bins counted where their centres fall)");
}

// The page's <title> and heading name what it reports on, as the snapshot and pipeline pages
// do, instead of "Sextant trace report" on every page.
TEST(ReportPageTest, TitleNamesTheFilesOrTheirDirectoryAndRankCount) {
  auto report_of = [](const std::vector<std::string>& files) {
    std::vector<RankReport> ranks;
    for (size_t r = 0; r < files.size(); ++r) {
      RankReport rr;
      rr.rank = static_cast<int64_t>(r);
      rr.file = files[r];
      ranks.push_back(std::move(rr));
    }
    return CombineReports(std::move(ranks));
  };
  EXPECT_EQ(ReportPageTitle(report_of({"runs/a/rank0.json"})), "Trace report: runs/a/rank0.json");
  // One XPlane profile of two GPUs.
  EXPECT_EQ(ReportPageTitle(report_of({"p.xplane.pb", "p.xplane.pb"})),
            "Trace report: p.xplane.pb (2 ranks)");
  EXPECT_EQ(ReportPageTitle(report_of({"runs/a/rank0.json", "runs/a/rank1.json"})),
            "Trace report: runs/a (2 ranks)");
  EXPECT_EQ(ReportPageTitle(report_of({"runs/a/rank0.json", "runs/b/rank0.json"})),
            "Trace report: runs/a/rank0.json, runs/b/rank0.json (2 ranks)");
  EXPECT_EQ(
      ReportPageTitle(report_of({"a/0.json", "b/1.json", "c/2.json", "d/3.json", "e/4.json"})),
      "Trace report: a/0.json, b/1.json, c/2.json and 2 more (5 ranks)");
  // Files named without a directory are named one by one.
  EXPECT_EQ(ReportPageTitle(report_of({"rank0.json", "rank1.json"})),
            "Trace report: rank0.json, rank1.json (2 ranks)");
  const std::string html = RenderReportHtml(report_of({"runs/a/rank0.json", "runs/a/rank1.json"}));
  EXPECT_NE(html.find("<title>Trace report: runs/a (2 ranks)</title>"), std::string::npos);
  EXPECT_NE(html.find("<h1>Trace report: runs/a (2 ranks)</h1>"), std::string::npos);
  EXPECT_EQ(html.find("Sextant trace report"), std::string::npos);
}

// A composable-kernel attention kernel's name of thousands of characters made its row of the
// kernels table 920 px tall: the page's tables show kernel names as the console does (no
// return type or parameter list, cut to the cell width), the whole name on hover, and the
// machine outputs keep it.
TEST(ReportPageTest, KernelNamesInTheTablesAreShortenedWithTheWholeNameOnHover) {
  std::string args;
  for (int i = 0; i < 200; ++i) args += fmt::format("ck_tile::sequence<16, {}, 32>, ", i);
  const std::string name = "void ck_tile::kentry<" + args + "false>(ck_tile::FmhaBwdKargs)";
  ASSERT_GT(name.size(), 4000u);
  KinetoTraceBuilder b;
  b.Kernel(name, 10, 50, 1).Kernel("volta_sgemm_128x32_nn", 70, 10, 2);
  const TraceReport report = CombineReports({AnalyzeTrace(b.Parse("ck.json"), {}, 0)});
  const std::string html = RenderReportHtml(report);
  const std::string shown = ShortenCell(std::string(ShortKernelName(name)), kHtmlCellWidth);
  ASSERT_EQ(shown.size(), kHtmlCellWidth);
  EXPECT_EQ(shown.substr(0, 20), "ck_tile::kentry<ck_t");
  const std::string cell = "<td title=\"" + EscapeHtml(name) + "\">" + EscapeHtml(shown) + "</td>";
  const size_t kernels = html.find("<h3 id=\"kernels\">");
  ASSERT_NE(kernels, std::string::npos);
  EXPECT_NE(html.find(cell, kernels), std::string::npos);
  // No cell of the page shows the whole name.
  EXPECT_EQ(html.find(">" + EscapeHtml(name) + "<"), std::string::npos);
  EXPECT_NE(ReportToJson(report).dump().find(name), std::string::npos);
  // The top-kernel chart labels its bar (and its tooltip) alike; its data keeps the name.
  const nlohmann::json top = EmbeddedChartData(html)["kernels"][0]["top"];
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0]["name"], name);
  EXPECT_EQ(top[0]["label"], shown);
  EXPECT_FALSE(top[1].contains("label"));  // a short name is its own label
  // A warning is prose: the page shows it whole.
  TraceReport warned = CombineReports({AnalyzeTrace(b.Parse("ck.json"), {}, 0)});
  const std::string warning = "kernels are left out of the GPU timeline: " + std::string(200, 'w');
  warned.ranks[0].warnings.push_back(warning);
  EXPECT_NE(RenderReportHtml(warned).find("<td>" + warning + "</td>"), std::string::npos);
  const Table* table = report.Find("kernels");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(std::get<std::string>(table->rows()[0][table->ColumnIndex("name")]), name);
}

// Red was exposed communication in the GPU-time chart and attention in the top-kernel chart:
// every chart of the page takes its colours from one table, which the page embeds.
TEST(ReportPageTest, ChartsColourEachCategoryFromOneTable) {
  const nlohmann::json data = ReportChartData(SyntheticRanks({5.0, 7.0}));
  for (const auto& [category, color] : CategoryColors()) {
    EXPECT_EQ(data["colors"][category], color) << category;
  }
  // The GPU-time parts are drawn as the categories of work they are.
  EXPECT_EQ(data["timeline"]["categories"],
            nlohmann::json::parse(R"(["computation", "communication", "memory", "idle"])"));
  for (const auto& category : data["timeline"]["categories"]) {
    EXPECT_NE(CategoryColor(category.get<std::string>()), "") << category;
  }
  // The script reads the table and has no colour of a category of its own.
  const std::string script = ReportPageScript();
  EXPECT_NE(script.find("D.colors"), std::string::npos);
  for (const auto& [category, color] : CategoryColors()) {
    EXPECT_EQ(script.find(color), std::string::npos) << category << " " << color;
  }
  // The bar chart of GPU time by category, drawn on the server, colours its bars alike.
  KinetoTraceBuilder b;
  b.Kernel("volta_sgemm_128x32_nn", 10, 50, 1).Kernel("ncclDevKernel_AllReduce_Sum", 70, 10, 2);
  const std::string html = RenderReportHtml(CombineReports({AnalyzeTrace(b.Parse(), {}, 0)}));
  EXPECT_NE(html.find("style=\"fill:" + CategoryColor("GEMM") + "\""), std::string::npos);
  EXPECT_NE(html.find("style=\"fill:" + CategoryColor("communication") + "\""), std::string::npos);
}

}  // namespace
}  // namespace sextant
