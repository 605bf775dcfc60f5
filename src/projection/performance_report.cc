#include "projection/performance_report.h"

#include <fmt/format.h>

#include "report/console_table.h"
#include "util/units.h"

namespace sextant {

std::string RenderPerformanceReport(const PerformanceReport& r) {
  // A global batch rounded to whole micro-batches at this scale is not the configured one:
  // the header says so, since every number below is for it.
  const std::string rounded = r.configured_global_batch_size > 0
                                  ? fmt::format(" | global batch {} (configured {})",
                                                r.global_batch_size, r.configured_global_batch_size)
                                  : std::string();
  std::string out =
      fmt::format("{} on {} x {} ({} node{}) | {} | {} | {} micro-batch{}{}\n\n", r.model, r.gpus,
                  r.gpu, r.nodes, r.nodes == 1 ? "" : "s", DescribeParallelSizes(r.parallel),
                  DescribeSchedule(r.schedule, r.parallel.pp), r.micro_batches,
                  r.micro_batches == 1 ? "" : "es", rounded);
  Table summary("performance", "Iteration",
                {{"metric", "metric", 0}, {"value", "value", 2}, {"unit", "unit", 0}});
  summary.AddRow({std::string("iteration time"), r.iteration_time_ms, std::string("ms")});
  summary.AddRow(
      {std::string("tokens/s per GPU"), r.tokens_per_s_per_gpu, std::string("tokens/s")});
  summary.AddRow(
      {std::string("model TFLOP/s per GPU"), r.model_tflops_per_gpu, std::string("TFLOP/s")});
  summary.AddRow(
      {std::string("hardware TFLOP/s per GPU"), r.hardware_tflops_per_gpu, std::string("TFLOP/s")});
  summary.AddRow({std::string("MFU"), r.mfu * 100, std::string("%")});
  if (r.mfu_at_gemm_precision > 0) {
    summary.AddRow(
        {"MFU at " + r.gemm_peak_dtype + " peak", r.mfu_at_gemm_precision * 100, std::string("%")});
  }
  summary.AddRow({std::string("pipeline bubble ratio"), r.bubble_ratio * 100, std::string("%")});
  out += RenderConsoleTable(summary) + "\n";
  const auto& b = r.breakdown;
  Table br("breakdown", "Where the iteration goes (critical pipeline rank)",
           {{"component", "component", 0}, {"ms", "ms", 2}});
  br.AddRow({std::string("compute"), b.compute_ms});
  br.AddRow({std::string("pipeline bubble"), b.pipeline_bubble_ms});
  br.AddRow({std::string("TP communication (on critical path)"), b.tp_comm_ms});
  br.AddRow({std::string("CP communication"), b.cp_comm_ms});
  br.AddRow({std::string("EP communication"), b.ep_comm_ms});
  br.AddRow({std::string("PP send/recv (overlapped)"), b.pp_comm_ms});
  br.AddRow({std::string("DP communication, exposed"), b.dp_comm_exposed_ms});
  br.AddRow({std::string("optimizer step"), b.optimizer_ms});
  if (b.measured_idle_ms > 0)
    br.AddRow({std::string("idle (measured in the traces)"), b.measured_idle_ms});
  out += RenderConsoleTable(br) + "\n";
  Table lt("layers",
           "Per micro-batch on one GPU: one layer of each kind, with the TP / CP / EP "
           "communication it waits for",
           {{"type", "piece", 0},
            {"forward_ms", "forward ms", 3},
            {"backward_ms", "backward ms", 3},
            {"recompute_ms", "recompute ms", 3}});
  for (const auto& l : r.layer_types) {
    lt.AddRow({l.type, l.forward_s * 1e3, l.Backward() * 1e3, l.recompute_s * 1e3});
  }
  out += RenderConsoleTable(lt) + "\n";
  if (!r.schedules.empty()) {
    Table st("schedules", "Schedules compared",
             {{"schedule", "schedule", 0},
              {"iteration_ms", "iteration ms", 2},
              {"tokens", "tokens/s/GPU", 1},
              {"bubble", "bubble %", 1},
              {"act", "layer act GiB", 2},
              {"note", "note", 0}});
    for (const auto& s : r.schedules) {
      if (s.ran) {
        st.AddRow({s.schedule, s.iteration_time_ms, s.tokens_per_s_per_gpu, s.bubble_ratio * 100,
                   ToGiB(s.peak_activation_bytes), std::string("")});
      } else {
        st.AddRow({s.schedule, Cell{}, Cell{}, Cell{}, Cell{}, s.skipped_because});
      }
    }
    out += RenderConsoleTable(st, 70) +
           "layer act: the transformer layers' activations the busiest pipeline rank holds at "
           "once (its micro-batches in flight); `projection memory` adds the rest of a GPU's "
           "memory\n\n";
  }
  Table sc("scaling",
           r.global_batch_grows_with_dp
               ? "Scaling by data parallelism (batch per data-parallel rank fixed, global batch "
                 "grows with DP)"
               : "Scaling by data parallelism (global batch fixed unless a note says it grows)",
           {{"nodes", "nodes", 0},
            {"dp", "DP", 0},
            {"mb", "micro-batches", 0},
            {"it", "iteration ms", 1},
            {"tok", "tokens/s/GPU", 1},
            {"mfu", "MFU %", 1},
            {"note", "note", 0}});
  for (const auto& s : r.scaling) {
    if (s.dp == 0) {
      sc.AddRow({int64_t{s.nodes}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, s.note});
    } else {
      sc.AddRow({int64_t{s.nodes}, int64_t{s.dp}, s.micro_batches, s.iteration_time_ms,
                 s.tokens_per_s_per_gpu, s.mfu * 100, s.note});
    }
  }
  out += RenderConsoleTable(sc, 90) + "\nAssumptions:\n";
  for (const auto& a : r.assumptions) out += "  - " + a + "\n";
  return out;
}

nlohmann::json PerformanceReportJson(const PerformanceReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["gpu"] = r.gpu;
  j["nodes"] = r.nodes;
  j["gpus"] = r.gpus;
  j["parallel"] = ParallelSizesJson(r.parallel);
  j["micro_batches"] = r.micro_batches;
  j["training"] = {{"micro_batch_size", r.micro_batch_size},
                   {"global_batch_size", r.global_batch_size},
                   {"seq_length", r.seq_length},
                   {"gemm_precision", r.gemm_precision}};
  j["schedule"] = r.schedule;
  j["iteration_time_ms"] = r.iteration_time_ms;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
  j["mfu"] = r.mfu;
  if (r.mfu_at_gemm_precision > 0) j["mfu_at_gemm_precision"] = r.mfu_at_gemm_precision;
  j["bubble_ratio"] = r.bubble_ratio;
  const auto& b = r.breakdown;
  j["breakdown_ms"] = {{"compute", b.compute_ms},
                       {"pipeline_bubble", b.pipeline_bubble_ms},
                       {"tp_comm", b.tp_comm_ms},
                       {"cp_comm", b.cp_comm_ms},
                       {"ep_comm", b.ep_comm_ms},
                       {"pp_comm", b.pp_comm_ms},
                       {"dp_comm_exposed", b.dp_comm_exposed_ms},
                       {"optimizer", b.optimizer_ms},
                       {"measured_idle", b.measured_idle_ms}};
  j["layers"] = nlohmann::json::array();
  for (const auto& l : r.layer_types) {
    j["layers"].push_back({{"type", l.type},
                           {"forward_ms", l.forward_s * 1e3},
                           {"backward_ms", l.Backward() * 1e3},
                           {"recompute_ms", l.recompute_s * 1e3}});
  }
  j["scaling_global_batch"] = r.global_batch_grows_with_dp ? "grows with DP" : "fixed";
  j["scaling"] = nlohmann::json::array();
  for (const auto& s : r.scaling) {
    nlohmann::json row = {{"nodes", s.nodes}};
    if (s.dp > 0) {
      row["dp"] = s.dp;
      row["micro_batches"] = s.micro_batches;
      row["iteration_time_ms"] = s.iteration_time_ms;
      row["tokens_per_s_per_gpu"] = s.tokens_per_s_per_gpu;
      row["mfu"] = s.mfu;
    }
    if (!s.note.empty()) row["note"] = s.note;
    j["scaling"].push_back(row);
  }
  if (!r.schedules.empty()) {
    j["schedules"] = nlohmann::json::array();
    for (const auto& s : r.schedules) {
      nlohmann::json row = {{"schedule", s.schedule}, {"ran", s.ran}};
      if (s.ran) {
        row["iteration_time_ms"] = s.iteration_time_ms;
        row["bubble_ratio"] = s.bubble_ratio;
        row["tokens_per_s_per_gpu"] = s.tokens_per_s_per_gpu;
        row["peak_activation_bytes"] = s.peak_activation_bytes;
      } else {
        row["skipped_because"] = s.skipped_because;
      }
      j["schedules"].push_back(row);
    }
  }
  j["assumptions"] = r.assumptions;
  return j;
}

}  // namespace sextant
