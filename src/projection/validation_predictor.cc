#include <functional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/flop_count.h"
#include "projection/layer_timing.h"
#include "projection/performance_model.h"
#include "projection/projection_runner.h"
#include "projection/validation.h"
#include "util/close_matches.h"
#include "util/csv_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

// Converts the projected iteration into the metric as the row's source counts it
// (corpus/validation/README.md, "Conventions that matter when scoring").
std::optional<double> PredictTimeMetric(const PublishedRun& run, const Calibration& calibration,
                                        std::string& why) {
  const Job& job = *run.job;
  PerformanceOptions o;
  o.calibration = calibration;
  o.scaling_nodes = {job.cluster.num_nodes};
  const PerformanceReport p = ProjectPerformance(job, o);
  const double seconds = p.iteration_time_ms / 1e3;
  const double gpus = p.gpus;
  FlopInputs fi{job.training.seq_length, job.training.global_batch_size, job.model.vocab_size};
  if (run.metric_name == "iteration_time_s") return seconds;
  if (run.metric_name == "tokens_per_sec_per_gpu") return p.tokens_per_s_per_gpu;
  if (run.metric_name == "tflops_per_gpu") {
    // Each stack counts its own way (job/framework_defaults.h): Narayanan et al. 2021 count
    // recomputation and non-causal attention (their eq. 3); current Megatron uses
    // num_floating_point_operations (causal); NeMo's formulas count attention non-causal.
    double flops = MegatronModelFlops(job.model, fi);
    if (run.flops == FlopConvention::kNarayanan2021) {
      flops = NarayananFullRecomputeFlops(job.model, fi);
    } else if (run.flops == FlopConvention::kNemo) {
      flops = NemoModelFlops(job.model, fi);
    }
    return flops / seconds / gpus / 1e12;
  }
  if (run.metric_name == "mfu_pct") {
    // Korthikanti et al. 2022: model FLOPs 72·B·s·L·h²(1 + s/6h + V/12Lh) over A100's 312.
    const double flops = NarayananModelFlops(job.model, fi);
    return flops / seconds / gpus / 312e12 * 100.0;
  }
  why = "unknown metric " + run.metric_name;
  return std::nullopt;
}

}  // namespace

RowPredictor DefaultPredictor(const Calibration& calibration) {
  return [calibration](const PublishedRun& run, std::string& why) -> std::optional<double> {
    if (run.metric_name.rfind("peak_memory", 0) == 0) return PredictMemoryMetric(run, why);
    return PredictTimeMetric(run, calibration, why);
  };
}

std::string ExplainPublishedRow(const std::string& csv_path, const std::string& id, bool json) {
  const CsvTable table = CsvTable::Read(csv_path);
  CheckDistinctIds(table);
  std::vector<std::string> ids;
  for (size_t i = 0; i < table.size(); ++i) {
    ids.push_back(table.Get(i, "id"));
    if (ids.back() != id) continue;
    PublishedRun run = ReadPublishedRun(table, i);
    if (!run.job)
      ThrowUserError(fmt::format("{}: row {} is not projectable: {}", csv_path, id, run.reason));
    std::string why;
    const std::optional<double> predicted = DefaultPredictor()(run, why);
    if (!predicted) ThrowUserError(fmt::format("{}: row {}: {}", csv_path, id, why));
    std::ostringstream out;
    ProjectionOptions options;
    if (json) {
      options.json = true;
      std::ostringstream projection;
      RunBothProjections(*run.job, options, projection);
      nlohmann::json j{{"id", run.id},
                       {"vendor", run.vendor},
                       {"framework", run.framework},
                       {"metric", run.metric_name},
                       {"measured", run.measured},
                       {"predicted", *predicted},
                       {"error_pct", (*predicted / run.measured - 1.0) * 100.0},
                       {"job_notes", run.job->notes},
                       {"projection", nlohmann::json::parse(projection.str())}};
      return j.dump(2) + "\n";
    }
    out << fmt::format("{} ({} {}): {} measured {:.6g}, predicted {:.6g} ({:+.1f}%)\n\n", run.id,
                       run.vendor, run.framework, run.metric_name, run.measured, *predicted,
                       (*predicted / run.measured - 1.0) * 100.0);
    RunBothProjections(*run.job, options, out);
    return out.str();
  }
  ThrowUserError(
      fmt::format("{}: no row with id '{}'{}", csv_path, id, DidYouMean(ClosestNames(id, ids))));
}

}  // namespace sextant
