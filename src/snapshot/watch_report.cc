#include "snapshot/watch_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/cell_shortening.h"
#include "report/html_writer.h"
#include "snapshot/page_scripts.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant {
namespace {

struct GpuSummary {
  int64_t peak_used = 0;
  int64_t total = 0;
  double util_sum = 0, util_max = -1;
  int64_t util_samples = 0, samples = 0;
};

std::map<int, GpuSummary> Summarise(const WatchResult& r) {
  std::map<int, GpuSummary> out;
  for (const auto& s : r.samples) {
    GpuSummary& g = out[s.gpu.gpu];
    g.samples += 1;
    g.peak_used = std::max(g.peak_used, s.gpu.memory_used_bytes);
    g.total = std::max(g.total, s.gpu.memory_total_bytes);
    if (s.gpu.utilization_percent >= 0) {
      g.util_sum += s.gpu.utilization_percent;
      g.util_max = std::max(g.util_max, s.gpu.utilization_percent);
      g.util_samples += 1;
    }
  }
  return out;
}

}  // namespace

WatchOutputFormat WatchFormatForPath(const std::string& path) {
  if (path.ends_with(".csv")) return WatchOutputFormat::kCsv;
  if (path.ends_with(".json")) return WatchOutputFormat::kJson;
  if (path.ends_with(".html") || path.ends_with(".htm")) return WatchOutputFormat::kHtml;
  ThrowUserError(SourceLocation{path}, "-o", "unknown output format: use .csv, .json or .html");
}

std::string WatchCsv(const WatchResult& r) {
  std::string out = "elapsed_ms,gpu,memory_used_bytes,memory_total_bytes,utilization_percent\n";
  for (const auto& s : r.samples) {
    out +=
        fmt::format("{},{},{},{},{}\n", s.elapsed_ms, s.gpu.gpu, s.gpu.memory_used_bytes,
                    s.gpu.memory_total_bytes,
                    s.gpu.utilization_percent >= 0 ? fmt::format("{:g}", s.gpu.utilization_percent)
                                                   : std::string());
  }
  return out;
}

nlohmann::json WatchJson(const WatchResult& r) {
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : r.samples) {
    samples.push_back({{"elapsed_ms", s.elapsed_ms},
                       {"gpu", s.gpu.gpu},
                       {"memory_used_bytes", s.gpu.memory_used_bytes},
                       {"memory_total_bytes", s.gpu.memory_total_bytes},
                       {"utilization_percent", s.gpu.utilization_percent}});
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& [gpu, g] : Summarise(r)) {
    gpus.push_back(
        {{"gpu", gpu},
         {"samples", g.samples},
         {"peak_memory_used_bytes", g.peak_used},
         {"memory_total_bytes", g.total},
         {"mean_utilization_percent", g.util_samples ? g.util_sum / g.util_samples : -1.0},
         {"max_utilization_percent", g.util_max}});
  }
  return {{"command", r.command},
          {"source", r.source},
          {"interval_ms", r.interval_ms},
          {"exit_status", r.exit_status},
          {"term_signal", r.term_signal},
          {"wall_ms", r.wall_ms},
          {"gpus", gpus},
          {"samples", samples}};
}

std::string WatchHtml(const WatchResult& r) {
  // Named after the command it watched, cut as a table cell is (a long command line would fill
  // the heading).
  std::string command;
  for (const std::string& word : r.command) command += (command.empty() ? "" : " ") + word;
  return RenderHtmlPage(ChartPage("GPU memory watch: " + ShortenCell(command, kHtmlCellWidth),
                                  WatchJson(r), kWatchPageScript));
}

std::string RenderWatch(const WatchResult& r, WatchOutputFormat format) {
  switch (format) {
    case WatchOutputFormat::kCsv: return WatchCsv(r);
    case WatchOutputFormat::kJson:
      return WatchJson(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    case WatchOutputFormat::kHtml: return WatchHtml(r);
    case WatchOutputFormat::kNone: break;
  }
  return "";
}

std::string WatchSummaryText(const WatchResult& r) {
  std::string out = fmt::format("memory watch: {} samples from {} over {:.2f} s; exit status {}\n",
                                r.samples.size(), r.source, r.wall_ms / 1000.0, r.exit_status);
  out += fmt::format("  {:>3}  {:>11}  {:>11}  {:>9}  {:>9}\n", "gpu", "peak used", "total",
                     "mean util", "max util");
  for (const auto& [gpu, g] : Summarise(r)) {
    out += fmt::format("  {:>3}  {:>11}  {:>11}  {:>9}  {:>9}\n", gpu, FormatBytes(g.peak_used),
                       FormatBytes(g.total),
                       g.util_samples ? fmt::format("{:.1f}%", g.util_sum / g.util_samples) : "-",
                       g.util_max >= 0 ? fmt::format("{:.0f}%", g.util_max) : "-");
  }
  return out;
}

}  // namespace sextant
