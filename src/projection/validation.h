// `sextant validate`: project every row of a published-results table and score the error.
// Error per row = |predicted / measured - 1|; aggregated as the mean per source, then the
// mean over sources (corpus/validation/README.md: one large source must not dominate).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "projection/layer_timing.h"
#include "projection/published_run.h"
#include "report/table.h"

namespace sextant {

struct ValidationRow {
  PublishedRun run;
  std::optional<double> predicted;
  double error_pct = 0;  // signed: (predicted / measured - 1) * 100
  // For a time or throughput row whose configuration the memory model finds OOM (the run
  // did fit, so its memory projection is off too): OomNote's "OOM: 183.0 GiB peak of 179.1
  // GiB"; else "".
  std::string memory_note;
};

struct GroupScore {
  std::string name;  // source key, or "dense", "MoE", "NVIDIA", "AMD", "memory", "throughput"
  int rows = 0;
  double mape_pct = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;     // projected rows
  std::vector<ValidationRow> skipped;  // with run.reason
  std::vector<GroupScore> per_source;
  std::vector<GroupScore> per_group;  // dense/MoE, NVIDIA/AMD, memory/throughput
  double mape_pct = 0;                // mean over sources
  double row_mape_pct = 0;            // plain mean over rows
};

// Predicts one row's metric, or explains why it cannot (returns nullopt and sets `why`).
using RowPredictor = std::function<std::optional<double>(const PublishedRun&, std::string& why)>;

// Memory metrics (peak_memory_gib / peak_memory_gb) of one row from the memory model.
std::optional<double> PredictMemoryMetric(const PublishedRun& run, std::string& why);

// The built-in predictor: memory metrics from the memory model, time metrics from the
// performance model.
RowPredictor DefaultPredictor(const Calibration& calibration = {});

// Fitting and cross-validating the constants: projection/calibration_fit.h.

// The source family a row is scored in: its id up to the first segment that names a run
// ("torchtitan-T1-01-mem" -> "torchtitan", "amd-moe2-qwen-1" -> "amd-moe2"), the grouping the
// table's README defines. Used only to aggregate errors, never to decide how a row is projected.
std::string SourceFamily(const std::string& id);

ValidationReport Validate(const std::string& csv_path, const RowPredictor& predict);

// The projection behind one row (by id) as `projection both` prints it, with the row's measured
// value and its prediction: the tool for finding out why a row is off. UserError when the id is
// not in the table or the row cannot be projected.
// With `json`: one object (the row's facts, the error, the job's notes, and the projection as
// `projection both --json` writes it).
std::string ExplainPublishedRow(const std::string& csv_path, const std::string& id,
                                bool json = false);

Table ValidationRowsTable(const ValidationReport& report);
Table ValidationSourcesTable(const ValidationReport& report);
Table ValidationSkippedTable(const ValidationReport& report);
nlohmann::json ValidationJson(const ValidationReport& report);

}  // namespace sextant
