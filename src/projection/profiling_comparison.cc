#include "projection/profiling_comparison.h"

#include <string>
#include <vector>

#include "projection/performance_report.h"

namespace sextant {
namespace {

struct Row {
  std::string what;
  std::string unit;
  double simulated = 0;
  double measured = 0;
};

std::vector<Row> Rows(const PerformanceReport& s, const PerformanceReport& m) {
  std::vector<Row> rows;
  for (const PieceTiming& ms : m.layer_types) {
    for (const PieceTiming& ss : s.layer_types) {
      // Layer types the trace did not measure are modelled in both projections alike.
      if (ss.type != ms.type ||
          (ss.forward_s == ms.forward_s && ss.backward_input_s == ms.backward_input_s &&
           ss.backward_weight_s == ms.backward_weight_s && ss.ep_comm_s == ms.ep_comm_s)) {
        continue;
      }
      // Compute apart from the communication each pass waits for: how much of the token
      // exchange a run leaves exposed is its schedule's doing, not the layer's, and is the
      // row after.
      rows.push_back({ss.type + " layer F compute", "ms", (ss.forward_s - ss.forward_comm_s) * 1e3,
                      (ms.forward_s - ms.forward_comm_s) * 1e3});
      rows.push_back({ss.type + " layer B compute", "ms",
                      (ss.backward_input_s - ss.backward_input_comm_s) * 1e3,
                      (ms.backward_input_s - ms.backward_input_comm_s) * 1e3});
      rows.push_back({ss.type + " layer W compute", "ms",
                      (ss.backward_weight_s - ss.backward_weight_comm_s) * 1e3,
                      (ms.backward_weight_s - ms.backward_weight_comm_s) * 1e3});
      if (ss.ep_comm_s > 0 || ms.ep_comm_s > 0) {
        rows.push_back({ss.type + " layer EP communication, exposed", "ms", ss.ep_comm_s * 1e3,
                        ms.ep_comm_s * 1e3});
      }
    }
  }
  rows.push_back({"iteration time", "ms", s.iteration_time_ms, m.iteration_time_ms});
  rows.push_back({"tokens/s per GPU", "tokens/s", s.tokens_per_s_per_gpu, m.tokens_per_s_per_gpu});
  const IterationBreakdown& a = s.breakdown;
  const IterationBreakdown& b = m.breakdown;
  rows.push_back({"compute", "ms", a.compute_ms, b.compute_ms});
  rows.push_back({"pipeline bubble", "ms", a.pipeline_bubble_ms, b.pipeline_bubble_ms});
  rows.push_back({"TP communication", "ms", a.tp_comm_ms, b.tp_comm_ms});
  rows.push_back({"EP communication", "ms", a.ep_comm_ms, b.ep_comm_ms});
  rows.push_back({"PP send/recv", "ms", a.pp_comm_ms, b.pp_comm_ms});
  rows.push_back({"DP communication, exposed", "ms", a.dp_comm_exposed_ms, b.dp_comm_exposed_ms});
  rows.push_back({"optimizer step", "ms", a.optimizer_ms, b.optimizer_ms});
  if (b.measured_idle_ms > 0) {
    rows.push_back({"idle (measured in the traces)", "ms", a.measured_idle_ms, b.measured_idle_ms});
  }
  return rows;
}

Cell Error(const Row& r) {
  if (r.measured <= 0) return Cell();
  return (r.simulated / r.measured - 1) * 100;
}

}  // namespace

Table ProfilingComparisonTable(const PerformanceReport& simulated,
                               const PerformanceReport& measured) {
  Table t("profiling_comparison",
          "Simulated vs measured layers (--profiling-mode both): the model's error per piece",
          {{"what", "what"},
           {"unit", "unit"},
           {"simulated", "simulated", 3},
           {"measured", "anchored on the traces", 3},
           {"error_pct", "simulated vs measured (%)", 1}});
  for (const Row& r : Rows(simulated, measured)) {
    t.AddRow({r.what, r.unit, r.simulated, r.measured, Error(r)});
  }
  t.AddNote(
      "layer rows: per-layer ranges give each piece as measured; traces without them give "
      "one factor per phase (forward, backward), the same for every piece; iteration rows: the "
      "whole projection with each; under per-step anchoring the data-parallel communication, "
      "the optimizer step and the idle time come from the traces too");
  return t;
}

nlohmann::json ProfilingComparisonJson(const PerformanceReport& simulated,
                                       const PerformanceReport& measured) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& r : Rows(simulated, measured)) {
    nlohmann::json row = {
        {"what", r.what}, {"unit", r.unit}, {"simulated", r.simulated}, {"measured", r.measured}};
    if (r.measured > 0) row["error_pct"] = (r.simulated / r.measured - 1) * 100;
    rows.push_back(row);
  }
  return {{"simulated", PerformanceReportJson(simulated)},
          {"measured", PerformanceReportJson(measured)},
          {"comparison", rows}};
}

}  // namespace sextant
