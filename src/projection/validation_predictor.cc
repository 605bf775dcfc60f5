#include <sstream>

#include <fmt/format.h>

#include "model/flop_count.h"
#include "projection/layer_timing.h"
#include "projection/performance_model.h"
#include "projection/projection_runner.h"
#include "projection/validation.h"
#include "util/csv_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

// Converts the projected iteration into the metric as the row's source counts it
// (corpus/validation/README.md, "Conventions that matter when scoring").
std::optional<double> PredictTimeMetric(const PublishedRun& run, double eff, std::string& why) {
  const Job& job = *run.job;
  PerformanceOptions o;
  o.in_training_efficiency = eff;
  o.scaling_nodes = {job.cluster.num_nodes};
  const PerformanceReport p = ProjectPerformance(job, o);
  const double seconds = p.iteration_time_ms / 1e3;
  const double gpus = p.gpus;
  FlopInputs fi{job.training.seq_length, job.training.global_batch_size, job.model.vocab_size};
  if (run.metric_name == "iteration_time_s") return seconds;
  if (run.metric_name == "tokens_per_sec_per_gpu") return p.tokens_per_s_per_gpu;
  if (run.metric_name == "tflops_per_gpu") {
    // Narayanan et al. 2021 count recomputation and non-causal attention (their eq. 3);
    // NeMo and current Megatron use num_floating_point_operations.
    const double flops = run.source_key == "narayanan21"
                             ? NarayananFullRecomputeFlops(job.model, fi)
                             : MegatronModelFlops(job.model, fi);
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

RowPredictor DefaultPredictor() { return DefaultPredictor(kInTrainingEfficiency); }

RowPredictor DefaultPredictor(double eff) {
  return [eff](const PublishedRun& run, std::string& why) -> std::optional<double> {
    if (run.metric_name.rfind("peak_memory", 0) == 0) return PredictMemoryMetric(run, why);
    return PredictTimeMetric(run, eff, why);
  };
}

EfficiencyFit FitInTrainingEfficiency(const std::string& csv_path) {
  EfficiencyFit fit;
  fit.best_mape_pct = 1e300;
  for (int step = 50; step <= 100; step += 1) {
    const double eff = step / 100.0;
    const RowPredictor base = DefaultPredictor(eff);
    const ValidationReport r =
        Validate(csv_path, [&](const PublishedRun& run, std::string& why) -> std::optional<double> {
          if (run.metric_name.rfind("peak_memory", 0) == 0) {
            why = "memory rows are not used by the efficiency fit";
            return std::nullopt;
          }
          return base(run, why);
        });
    fit.curve.emplace_back(eff, r.mape_pct);
    if (r.mape_pct < fit.best_mape_pct) {
      fit.best_mape_pct = r.mape_pct;
      fit.best = eff;
    }
  }
  return fit;
}

}  // namespace sextant

namespace sextant {

std::string ExplainPublishedRow(const std::string& csv_path, const std::string& id) {
  const CsvTable table = CsvTable::Read(csv_path);
  for (size_t i = 0; i < table.size(); ++i) {
    PublishedRun run = ReadPublishedRun(table, i);
    if (run.id != id) continue;
    if (!run.job)
      ThrowUserError(fmt::format("{}: row {} is not projectable: {}", csv_path, id, run.reason));
    std::string why;
    const std::optional<double> predicted = DefaultPredictor()(run, why);
    if (!predicted) ThrowUserError(fmt::format("{}: row {}: {}", csv_path, id, why));
    std::ostringstream out;
    out << fmt::format("{} ({} {}): {} measured {:.4g}, predicted {:.4g} ({:+.1f}%)\n\n", run.id,
                       run.vendor, run.framework, run.metric_name, run.measured, *predicted,
                       (*predicted / run.measured - 1.0) * 100.0);
    ProjectionOptions options;
    RunBothProjections(*run.job, options, out);
    return out.str();
  }
  ThrowUserError(fmt::format("{}: no row with id '{}'", csv_path, id));
}

}  // namespace sextant
