#include "trace/report_page.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/cell_shortening.h"
#include "report/html_writer.h"
#include "trace/category_colors.h"
#include "trace/kernel_name.h"

namespace sextant {
namespace {

nlohmann::json ChartCellJson(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return nullptr;
}

// The rows of `table` per rank, in table order.
std::map<int64_t, std::vector<const std::vector<Cell>*>> ChartRowsByRank(const Table* table) {
  std::map<int64_t, std::vector<const std::vector<Cell>*>> out;
  if (table == nullptr) return out;
  const int rank_col = table->ColumnIndex("rank");
  if (rank_col < 0) return out;
  for (const auto& row : table->rows()) {
    if (const auto* rank = std::get_if<int64_t>(&row[rank_col])) out[*rank].push_back(&row);
  }
  return out;
}

// {key: cell} for the given column keys of one row (keys the table lacks are left out).
nlohmann::json ChartRowObject(const Table& table, const std::vector<Cell>& row,
                              const std::vector<std::string>& keys) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& key : keys) {
    const int c = table.ColumnIndex(key);
    if (c >= 0) object[key] = ChartCellJson(row[c]);
  }
  return object;
}

double ChartCellNumber(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  return 0;
}

}  // namespace

std::string ReportPageTitle(const TraceReport& report) {
  std::vector<std::string> files;
  for (const RankReport& r : report.ranks) {
    if (std::find(files.begin(), files.end(), r.file) == files.end()) files.push_back(r.file);
  }
  const size_t ranks = report.ranks.size();
  const std::string count = ranks > 1 ? fmt::format(" ({} ranks)", ranks) : "";
  if (files.empty()) return "Trace report";
  if (files.size() == 1) return "Trace report: " + files.front() + count;
  const std::string dir = std::filesystem::path(files.front()).parent_path().string();
  const bool one_dir = !dir.empty() && std::all_of(files.begin(), files.end(), [&](const auto& f) {
    return std::filesystem::path(f).parent_path().string() == dir;
  });
  if (one_dir) return "Trace report: " + dir + count;
  constexpr size_t kNamed = 3;
  std::string named;
  for (size_t i = 0; i < std::min(files.size(), kNamed); ++i) {
    named += (i ? ", " : "") + files[i];
  }
  if (files.size() > kNamed) named += fmt::format(" and {} more", files.size() - kNamed);
  return "Trace report: " + named + count;
}

nlohmann::json ReportChartData(const TraceReport& report) {
  nlohmann::json data = nlohmann::json::object();
  data["colors"] = nlohmann::json::object();
  for (const auto& [category, color] : CategoryColors()) data["colors"][category] = color;

  // GPU time per rank: the gpu_timeline table's rows, by type.
  const Table* timeline = report.Find("gpu_timeline");
  const auto timeline_rows = ChartRowsByRank(timeline);
  nlohmann::json timeline_json = {
      {"types", {"computation_time", "exposed_comm_time", "exposed_memcpy_time", "idle_time"}},
      {"labels", {"computation", "exposed communication", "exposed memcpy", "idle"}},
      {"categories", {"computation", "communication", "memory", "idle"}},
      {"ranks", nlohmann::json::array()}};
  std::map<int64_t, double> span_ms;  // total_time per rank, to find the slowest and fastest
  for (const auto& [rank, rows] : timeline_rows) {
    const int type_col = timeline->ColumnIndex("type");
    const int ms_col = timeline->ColumnIndex("time_ms");
    const int pct_col = timeline->ColumnIndex("percent");
    nlohmann::json ms = nlohmann::json::object(), percent = nlohmann::json::object();
    for (const auto* row : rows) {
      const std::string& type = std::get<std::string>((*row)[type_col]);
      ms[type] = ChartCellJson((*row)[ms_col]);
      percent[type] = ChartCellJson((*row)[pct_col]);
      if (type == "total_time") span_ms[rank] = ChartCellNumber((*row)[ms_col]);
    }
    timeline_json["ranks"].push_back({{"rank", rank}, {"ms", ms}, {"percent", percent}});
  }
  data["timeline"] = std::move(timeline_json);

  // The ranks whose roofline and kernels are embedded.
  std::vector<int64_t> chart_ranks;
  for (const auto& r : report.ranks) {
    if (std::find(chart_ranks.begin(), chart_ranks.end(), r.rank) == chart_ranks.end()) {
      chart_ranks.push_back(r.rank);
    }
  }
  std::string chart_ranks_note;
  if (chart_ranks.size() > kReportChartRanks) {
    const size_t all = chart_ranks.size();
    std::vector<int64_t> kept(chart_ranks.begin(), chart_ranks.begin() + (kReportChartRanks - 2));
    std::vector<std::string> extremes;
    if (!span_ms.empty()) {
      auto by_span = [](const auto& a, const auto& b) { return a.second < b.second; };
      const int64_t slowest = std::max_element(span_ms.begin(), span_ms.end(), by_span)->first;
      const int64_t fastest = std::min_element(span_ms.begin(), span_ms.end(), by_span)->first;
      for (const int64_t rank : {slowest, fastest}) {
        if (std::find(kept.begin(), kept.end(), rank) == kept.end()) kept.push_back(rank);
      }
      extremes.push_back(fmt::format("slowest by GPU span: rank {}", slowest));
      extremes.push_back(fmt::format("fastest: rank {}", fastest));
    }
    chart_ranks = std::move(kept);
    chart_ranks_note = fmt::format(
        "{} of {} ranks charted (the first {}, and the slowest and fastest by GPU span; {}, "
        "{}); the tables list every rank",
        chart_ranks.size(), all, kReportChartRanks - 2, extremes.empty() ? "" : extremes[0],
        extremes.empty() ? "" : extremes[1]);
  }
  data["chart_ranks"] = chart_ranks;
  data["chart_ranks_note"] = chart_ranks_note;

  // Roofline points: the roofline table's rows of each charted rank, largest kernel time first
  // (the table's order), against the peaks the table used.
  const Table* roofline = report.Find("roofline");
  const auto roofline_rows = ChartRowsByRank(roofline);
  const std::vector<std::string> point_keys = {
      "name", "family",         "input_dims",  "count", "kernel_us",      "tflops",
      "tbps", "flops_per_byte", "peak_tflops", "bound", "pct_of_roofline"};
  data["roofline"] = nlohmann::json::array();
  for (const int64_t rank : chart_ranks) {
    const RankReport* rank_report = nullptr;
    for (const auto& r : report.ranks) {
      if (r.rank == rank) {
        rank_report = &r;
        break;
      }
    }
    nlohmann::json entry = {{"rank", rank}, {"points", nlohmann::json::array()}};
    const RooflinePeaks peaks = rank_report ? rank_report->roofline_peaks : RooflinePeaks{};
    entry["gpu"] = peaks.gpu;
    entry["hbm_tbps"] = peaks.hbm_tbps;
    entry["ceilings"] = peaks.ceilings;
    const auto it = roofline_rows.find(rank);
    const size_t rows = it == roofline_rows.end() ? 0 : it->second.size();
    entry["rows"] = rows;
    for (size_t i = 0; i < std::min(rows, kReportRooflinePointsPerRank); ++i) {
      entry["points"].push_back(ChartRowObject(*roofline, *it->second[i], point_keys));
    }
    data["roofline"].push_back(std::move(entry));
  }

  // Top kernels by total time.
  const Table* kernels = report.Find("kernels");
  const auto kernel_rows = ChartRowsByRank(kernels);
  const std::vector<std::string> kernel_keys = {"name",     "category", "count",
                                                "total_us", "mean_us",  "percent"};
  data["kernels"] = nlohmann::json::array();
  for (const int64_t rank : chart_ranks) {
    nlohmann::json entry = {{"rank", rank}, {"top", nlohmann::json::array()}};
    const auto it = kernel_rows.find(rank);
    std::vector<const std::vector<Cell>*> rows;
    if (it != kernel_rows.end()) rows = it->second;
    entry["rows"] = rows.size();
    if (!rows.empty()) {
      const int total_col = kernels->ColumnIndex("total_us");
      std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
        return ChartCellNumber((*a)[total_col]) > ChartCellNumber((*b)[total_col]);
      });
    }
    rows.resize(std::min(rows.size(), kReportTopKernels));
    // Each bar is labelled as the kernels table shows the name (a name of thousands of
    // characters filled the screen as a tooltip); the table's cell holds the whole name.
    std::vector<std::string> names;
    const int name_col = rows.empty() ? -1 : kernels->ColumnIndex("name");
    for (const auto* row : rows) {
      const auto* name = name_col < 0 ? nullptr : std::get_if<std::string>(&(*row)[name_col]);
      names.push_back(name ? PersonCellText(kernels->columns()[name_col], *name) : "");
    }
    const std::vector<std::string> labels = ShortenColumn(names, kHtmlCellWidth);
    for (size_t i = 0; i < rows.size(); ++i) {
      nlohmann::json top = ChartRowObject(*kernels, *rows[i], kernel_keys);
      if (top["name"].is_string() && top["name"] != labels[i]) top["label"] = labels[i];
      entry["top"].push_back(std::move(top));
    }
    data["kernels"].push_back(std::move(entry));
  }
  return data;
}

}  // namespace sextant
