// The interactive charts of the `trace report --html` page (and of `serve`, which shows the
// same page): a stacked bar of GPU time per rank, a roofline scatter per rank and the top
// kernels per rank, drawn by a small inline script from JSON embedded in the page
// (HtmlPage::data / HtmlPage::script). Every number in the JSON is a cell of a table the page
// also shows — gpu_timeline, roofline, kernels — copied, never recomputed, so the charts and
// the tables cannot disagree; the roofline's ceilings and bandwidth are RankReport's
// RooflinePeaks, the peaks the roofline table's bounds were computed from.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "trace/trace_report.h"

namespace sextant {

// Ranks whose roofline and kernels are embedded (all ranks' timelines are): the first
// kChartRanks - 2, then the slowest and the fastest by GPU span, so a straggler is one click
// away at 64 ranks; every rank when there are at most kChartRanks.
inline constexpr size_t kReportChartRanks = 8;
// Roofline points per rank: the op groups of largest kernel time, as the table orders them.
inline constexpr size_t kReportRooflinePointsPerRank = 100;
inline constexpr size_t kReportTopKernels = 20;

// {"colors": {category: "#rrggbb"} (category_colors.h),
//  "timeline": {"types": [gpu_timeline types stacked], "labels": [...],
//               "categories": [the colour category of each type],
//               "ranks": [{"rank", "ms": {type: time_ms}, "percent": {type: percent}}]},
//  "chart_ranks": [rank, ...], "chart_ranks_note": "...",
//  "roofline": [{"rank", "gpu", "hbm_tbps", "ceilings": [[label, tflops]], "rows",
//                "points": [{"name", "family", "input_dims", "count", "kernel_us", "tflops",
//                            "tbps", "flops_per_byte", "peak_tflops", "bound",
//                            "pct_of_roofline"}]}],
//  "kernels": [{"rank", "rows", "top": [{"name", "category", "count", "total_us", "mean_us",
//                                        "percent", "label"}]}]}
// A top kernel's "label" is its name as the kernels table shows it (PersonCellText, cut to
// kHtmlCellWidth), present only when that differs from "name".
// Keys inside points and kernels are the tables' column keys; "rows" is how many rows the
// rank has in the table (the points and top lists hold the first of them).
nlohmann::json ReportChartData(const TraceReport& report);

// The page's <title> and heading, naming what it reports on as the snapshot and pipeline pages
// do: "Trace report: FILE", with the rank count when the file holds several (an XPlane
// profile's GPUs); files of one directory as "Trace report: DIR (N ranks)"; files of several
// directories by their paths, the first three and how many more.
std::string ReportPageTitle(const TraceReport& report);

// The page's script: reads the JSON above from <script id="data"> and draws the charts just
// before the tables they come from (found by the tables' element ids).
const char* ReportPageScript();

}  // namespace sextant
