#include "projection/validation.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "memory/memory_model.h"
#include "util/csv_reader.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant {
namespace {

bool IsMemoryMetric(const std::string& m) { return m.rfind("peak_memory", 0) == 0; }

double Mape(const std::vector<const ValidationRow*>& rows) {
  if (rows.empty()) return 0;
  double s = 0;
  for (const auto* r : rows) s += std::fabs(r->error_pct);
  return s / rows.size();
}

}  // namespace

std::string SourceFamily(const std::string& id) {
  const auto dash = id.find('-');
  const std::string head = id.substr(0, dash);
  if ((head == "amd" || head == "nemo" || head == "dgxc" || head == "titan") &&
      dash != std::string::npos) {
    return id.substr(0, id.find('-', dash + 1));
  }
  return head;
}

// Memory rows: the sources report the largest rank's peak (torchtitan: max over ranks of the
// allocator's reserved bytes, GiB; Primus-Pipeline: "GB"), compared with the reserved peak
// where the row's framework logs reserved memory, else the allocated one. Time rows are
// predicted by the performance model when it is linked in (see PerformancePredictor).
std::optional<double> PredictMemoryMetric(const PublishedRun& run, std::string& why) {
  const MemoryReport r = ProjectMemory(*run.job);
  const double bytes =
      static_cast<double>(run.reserved_memory ? r.reserved_peak_bytes : r.peak_bytes);
  if (run.metric_name == "peak_memory_gib") return bytes / kGiB;
  if (run.metric_name == "peak_memory_gb") return bytes / 1e9;
  why = "unknown memory metric " + run.metric_name;
  return std::nullopt;
}

ValidationReport Validate(const std::string& csv_path, const RowPredictor& predict) {
  const CsvTable table = CsvTable::Read(csv_path);
  CheckDistinctIds(table);
  ValidationReport report;
  for (size_t i = 0; i < table.size(); ++i) {
    ValidationRow row{ReadPublishedRun(table, i), std::nullopt, 0, ""};
    if (!row.run.job) {
      report.skipped.push_back(std::move(row));
      continue;
    }
    std::string why;
    try {
      row.predicted = predict(row.run, why);
    } catch (const UserError& e) {
      why = e.what();
    }
    if (!row.predicted) {
      row.run.reason = why;
      report.skipped.push_back(std::move(row));
      continue;
    }
    row.error_pct = (*row.predicted / row.run.measured - 1.0) * 100.0;
    // A measured run ran, so a verdict of OOM for its configuration is an error of the memory
    // model worth seeing next to the row's time error.
    if (!IsMemoryMetric(row.run.metric_name))
      row.memory_note = OomNote(ProjectMemory(*row.run.job, {}, MemoryDetail::kNumbersOnly));
    report.rows.push_back(std::move(row));
  }
  std::map<std::string, std::vector<const ValidationRow*>> by_source, by_group;
  std::vector<const ValidationRow*> all;
  for (const auto& r : report.rows) {
    by_source[SourceFamily(r.run.id)].push_back(&r);
    by_group[r.run.moe ? "MoE" : "dense"].push_back(&r);
    by_group[r.run.vendor].push_back(&r);
    by_group[IsMemoryMetric(r.run.metric_name) ? "memory" : "throughput/time"].push_back(&r);
    all.push_back(&r);
  }
  double sum = 0;
  for (const auto& [name, rows] : by_source) {
    report.per_source.push_back({name, static_cast<int>(rows.size()), Mape(rows)});
    sum += report.per_source.back().mape_pct;
  }
  for (const auto& [name, rows] : by_group) {
    report.per_group.push_back({name, static_cast<int>(rows.size()), Mape(rows)});
  }
  report.mape_pct = report.per_source.empty() ? 0 : sum / report.per_source.size();
  report.row_mape_pct = Mape(all);
  return report;
}

Table ValidationRowsTable(const ValidationReport& report) {
  Table t("validation_rows", "Projected vs measured, per row",
          {{"id", "id", 0},
           {"metric_name", "metric", 0},
           {"measured", "measured", 2},
           {"predicted", "predicted", 2},
           {"error_pct", "error %", 1},
           {"memory_note", "memory projection", 0}});
  for (const auto& r : report.rows) {
    t.AddRow(
        {r.run.id, r.run.metric_name, r.run.measured, *r.predicted, r.error_pct, r.memory_note});
  }
  return t;
}

Table ValidationSourcesTable(const ValidationReport& report) {
  Table t("validation_sources", "Mean absolute percentage error by source and group",
          {{"group", "source / group", 0}, {"rows", "rows", 0}, {"mape_pct", "MAPE %", 1}});
  for (const auto& g : report.per_source) t.AddRow({g.name, int64_t{g.rows}, g.mape_pct});
  for (const auto& g : report.per_group)
    t.AddRow({"[" + g.name + "]", int64_t{g.rows}, g.mape_pct});
  t.AddRow({std::string("overall (mean of sources)"), static_cast<int64_t>(report.rows.size()),
            report.mape_pct});
  t.AddRow({std::string("overall (mean of rows)"), static_cast<int64_t>(report.rows.size()),
            report.row_mape_pct});
  return t;
}

Table ValidationSkippedTable(const ValidationReport& report) {
  Table t("validation_skipped", "Rows not projected",
          {{"id", "id", 0}, {"metric_name", "metric", 0}, {"reason", "reason", 0}});
  for (const auto& r : report.skipped) t.AddRow({r.run.id, r.run.metric_name, r.run.reason});
  return t;
}

nlohmann::json ValidationJson(const ValidationReport& report) {
  nlohmann::json j;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : report.rows) {
    j["rows"].push_back({{"id", r.run.id},
                         {"source", SourceFamily(r.run.id)},
                         {"metric_name", r.run.metric_name},
                         {"measured", r.run.measured},
                         {"predicted", *r.predicted},
                         {"error_pct", r.error_pct},
                         {"memory_note", r.memory_note}});
  }
  j["per_source"] = nlohmann::json::array();
  for (const auto& g : report.per_source) {
    j["per_source"].push_back({{"source", g.name}, {"rows", g.rows}, {"mape_pct", g.mape_pct}});
  }
  j["per_group"] = nlohmann::json::array();
  for (const auto& g : report.per_group) {
    j["per_group"].push_back({{"group", g.name}, {"rows", g.rows}, {"mape_pct", g.mape_pct}});
  }
  j["skipped"] = nlohmann::json::array();
  for (const auto& r : report.skipped) {
    j["skipped"].push_back(
        {{"id", r.run.id}, {"metric_name", r.run.metric_name}, {"reason", r.run.reason}});
  }
  j["mape_pct"] = report.mape_pct;
  j["row_mape_pct"] = report.row_mape_pct;
  return j;
}

}  // namespace sextant
