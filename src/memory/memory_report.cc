#include "memory/memory_report.h"

#include <fmt/format.h>

#include "report/console_table.h"
#include "util/units.h"

namespace sextant {

Table MemoryStagesTable(const MemoryReport& r) {
  Table t("memory_stages", "Memory per GPU by pipeline rank (GiB)",
          {{"pp_rank", "PP rank", 0},
           {"layers", "layers", 0},
           {"params", "params", 0},
           {"params_gib", "weights", 2},
           {"grads_gib", "grads", 2},
           {"optimizer_gib", "optimizer", 2},
           {"activations_gib", "activations", 2},
           {"in_flight", "in-flight mb", 1},
           {"buffers_gib", "buffers", 2},
           {"total_gib", "total", 2},
           {"headroom_gib", "headroom", 2}});
  for (const auto& s : r.stages) {
    t.AddRow({int64_t{s.pp_rank}, s.layers, s.params, ToGiB(s.params_bytes), ToGiB(s.grads_bytes),
              ToGiB(s.optimizer_bytes), ToGiB(s.activations_bytes), s.in_flight_micro_batches,
              ToGiB(s.buffers_bytes), ToGiB(s.total_bytes),
              ToGiB(r.capacity_bytes - s.total_bytes)});
  }
  return t;
}

Table MemoryDetailTable(const MemoryReport& r, int rank) {
  const StageMemory& s = r.stages.at(rank);
  Table t("memory_detail", fmt::format("PP rank {} in detail", rank),
          {{"component", "component", 0}, {"gib", "GiB", 3}, {"how", "assumption", 0}});
  const std::string count = FormatCount(double(s.params));
  t.AddRow({std::string("weights"), ToGiB(s.params_bytes),
            r.weights_shard.empty()
                ? fmt::format("{} parameters on this GPU", count)
                : fmt::format("{} of {} parameters{}", r.weights_shard, count, r.weights_note)});
  const std::string lora = s.lora_params > 0 ? fmt::format(" of the {} LoRA adapter parameters",
                                                           FormatCount(double(s.lora_params)))
                                             : std::string();
  t.AddRow({std::string("gradients"), ToGiB(s.grads_bytes), r.grads_state + lora});
  t.AddRow({std::string("optimizer state"), ToGiB(s.optimizer_bytes), r.optimizer_state + lora});
  for (const auto& p : s.activation_parts) {
    t.AddRow({"activations: " + p.name, ToGiB(p.bytes), p.assumption});
  }
  for (const auto& b : s.buffers) t.AddRow({"buffer: " + b.name, ToGiB(b.bytes), b.assumption});
  t.AddRow({std::string("total"), ToGiB(s.total_bytes), std::string("")});
  return t;
}

std::string RenderMemoryReport(const MemoryReport& r) {
  std::string out =
      fmt::format("{} on {} | {} | {} | {} micro-batch{}\n\n", r.model, r.gpu,
                  DescribeParallelSizes(r.parallel), DescribeSchedule(r.schedule, r.parallel.pp),
                  r.micro_batches, r.micro_batches == 1 ? "" : "es");
  out += RenderConsoleTable(MemoryStagesTable(r));
  out += "\n";
  out += RenderConsoleTable(MemoryDetailTable(r, r.peak_rank));
  const std::string capacity =
      r.hbm_bytes > 0 && r.capacity_bytes < r.hbm_bytes
          ? fmt::format("{} (JAX's {:.0f}% of {} HBM)", FormatBytes(r.capacity_bytes),
                        100.0 * static_cast<double>(r.capacity_bytes) / r.hbm_bytes,
                        FormatBytes(r.hbm_bytes))
          : FormatBytes(r.capacity_bytes) + " HBM";
  out += fmt::format("\nPeak {} on PP rank {} of {} ({:.1f}%): {}\n", FormatBytes(r.peak_bytes),
                     r.peak_rank, capacity,
                     r.capacity_bytes > 0 ? 100.0 * r.peak_bytes / r.capacity_bytes : 0.0,
                     VerdictName(r.verdict));
  if (!r.schedules.empty()) {
    Table t("schedules", "Peak memory by pipeline schedule (worst PP rank)",
            {{"schedule", "schedule", 0},
             {"peak_gib", "peak (GiB)", 2},
             {"pp_rank", "PP rank", 0},
             {"percent", "% of HBM", 1},
             {"verdict", "verdict", 0}});
    for (const auto& s : r.schedules) {
      if (!s.ran) {
        t.AddRow({s.schedule, Cell(), Cell(), Cell(), "skipped: " + s.skipped_because});
        continue;
      }
      t.AddRow({s.schedule, static_cast<double>(s.peak_bytes) / (1024.0 * 1024 * 1024),
                static_cast<int64_t>(s.peak_rank),
                r.capacity_bytes > 0 ? 100.0 * s.peak_bytes / r.capacity_bytes : 0.0,
                std::string(VerdictName(s.verdict))});
    }
    out += "\n" + RenderConsoleTable(t);
  }
  out += "\nAssumptions:\n";
  for (const auto& a : r.assumptions) out += "  - " + a + "\n";
  return out;
}

nlohmann::json MemoryReportJson(const MemoryReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["gpu"] = r.gpu;
  j["parallel"] = ParallelSizesJson(r.parallel);
  j["schedule"] = r.schedule;
  j["micro_batches"] = r.micro_batches;
  j["stages"] = nlohmann::json::array();
  for (const auto& s : r.stages) {
    nlohmann::json st = {{"pp_rank", s.pp_rank},
                         {"layers", s.layers},
                         {"params", s.params},
                         {"params_bytes", s.params_bytes},
                         {"grads_bytes", s.grads_bytes},
                         {"optimizer_bytes", s.optimizer_bytes},
                         {"activations_bytes", s.activations_bytes},
                         {"buffers_bytes", s.buffers_bytes},
                         {"total_bytes", s.total_bytes},
                         {"in_flight_micro_batches", s.in_flight_micro_batches}};
    // Of `params`, the trainable LoRA adapters (0 without LoRA: every parameter trains).
    st["lora_params"] = s.lora_params;
    st["activation_parts"] = nlohmann::json::array();
    for (const auto& a : s.activation_parts) {
      st["activation_parts"].push_back(
          {{"name", a.name}, {"bytes", a.bytes}, {"assumption", a.assumption}});
    }
    st["buffers"] = nlohmann::json::array();
    for (const auto& b : s.buffers) {
      st["buffers"].push_back({{"name", b.name}, {"bytes", b.bytes}, {"assumption", b.assumption}});
    }
    j["stages"].push_back(std::move(st));
  }
  j["peak_bytes"] = r.peak_bytes;
  j["peak_pp_rank"] = r.peak_rank;
  j["reserved_peak_bytes"] = r.reserved_peak_bytes;
  j["capacity_bytes"] = r.capacity_bytes;
  j["hbm_bytes"] = r.hbm_bytes;
  j["verdict"] = VerdictName(r.verdict);
  if (!r.schedules.empty()) {
    j["schedules"] = nlohmann::json::array();
    for (const auto& s : r.schedules) {
      nlohmann::json e = {{"schedule", s.schedule}, {"ran", s.ran}};
      if (s.ran) {
        e["peak_bytes"] = s.peak_bytes;
        e["peak_pp_rank"] = s.peak_rank;
        e["verdict"] = VerdictName(s.verdict);
      } else {
        e["skipped_because"] = s.skipped_because;
      }
      j["schedules"].push_back(std::move(e));
    }
  }
  j["assumptions"] = r.assumptions;
  return j;
}

}  // namespace sextant
