#include "projection/run_comparison.h"

#include <algorithm>

#include <fmt/format.h>

#include "hardware/hardware_library.h"
#include "trace/collectives.h"
#include "trace/gpu_timeline.h"
#include "trace/trace_runner.h"

namespace sextant {
namespace {

struct Component {
  std::string what;
  double projected = 0;
  double measured = 0;
};

double Mean(const std::vector<MeasuredRank>& ranks, double MeasuredRank::*field) {
  double sum = 0;
  for (const MeasuredRank& r : ranks) sum += r.*field;
  return ranks.empty() ? 0 : sum / static_cast<double>(ranks.size());
}

std::vector<Component> Components(const PerformanceReport& p, const std::vector<MeasuredRank>& m) {
  const IterationBreakdown& b = p.breakdown;
  const double exposed = b.tp_comm_ms + b.cp_comm_ms + b.ep_comm_ms + b.dp_comm_exposed_ms;
  // Ranks of a synchronous job take the same steps: their step ranges differ only by where a
  // short window cuts the CPU's run-ahead, so the mean over ranks is the run's step.
  return {{"iteration time", p.iteration_time_ms, Mean(m, &MeasuredRank::iteration_ms)},
          {"compute", b.compute_ms + b.optimizer_ms, Mean(m, &MeasuredRank::computation_ms)},
          {"exposed communication", exposed, Mean(m, &MeasuredRank::exposed_comm_ms)},
          {"idle / pipeline bubble", b.pipeline_bubble_ms + b.measured_idle_ms,
           Mean(m, &MeasuredRank::idle_ms)}};
}

}  // namespace

std::vector<MeasuredRank> MeasureRun(const std::vector<std::string>& traces) {
  std::vector<MeasuredRank> out;
  for (const std::string& file : traces) {
    for (const TraceData& trace : ReadTraceFile(file)) {
      MeasuredRank r;
      r.file = file;
      r.rank = trace.rank >= 0 ? trace.rank : static_cast<int64_t>(out.size());
      r.iterations = static_cast<int64_t>(trace.iterations.size());
      r.device_name = trace.device_name;
      r.world_size = trace.world_size;
      const GpuTimeline t = ComputeGpuTimeline(trace);
      const double per = 1e-6 / static_cast<double>(std::max<int64_t>(1, r.iterations));
      r.iteration_ms = MeanIterationNs(trace, t) * 1e-6;
      r.computation_ms = static_cast<double>(t.computation_ns) * per;
      r.exposed_comm_ms = static_cast<double>(t.exposed_communication_ns) * per;
      r.idle_ms = static_cast<double>(t.idle_ns) * per;
      for (const CollectiveInstance& c : ExtractCollectives(trace, r.rank)) {
        r.collective_ms[c.type] += static_cast<double>(c.dur_ns) * per;
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<std::string> ComparisonWarnings(const Job& job, const PerformanceReport& projected,
                                            const std::vector<MeasuredRank>& measured) {
  std::vector<std::string> out;
  if (measured.empty()) return out;
  for (const MeasuredRank& r : measured) {
    if (r.device_name.empty()) continue;
    if (const std::string differs = DeviceMismatch(r.device_name, job.cluster.gpu);
        !differs.empty()) {
      const GpuSpec* gpu = FindGpuForDevice(r.device_name);
      out.push_back(fmt::format("--compare: {} {}: the comparison is across GPUs{}", r.file,
                                differs,
                                gpu ? fmt::format(" (project --gpu-arch {} to compare like "
                                                  "with like)",
                                                  gpu->name)
                                    : std::string()));
    }
    break;  // one rank names the run's GPU
  }
  int64_t world = -1;
  for (const MeasuredRank& r : measured) world = std::max(world, r.world_size);
  if (world > 0 && world != job.parallel.WorldSize()) {
    out.push_back(fmt::format(
        "--compare: the traced run had {} GPUs (distributedInfo.world_size), the projection {}: "
        "compare at the traced size (--target-nodes, GPUS_PER_NODE)",
        world, job.parallel.WorldSize()));
  }
  // A copy of one trace under another name, with its rank, without it or with another, is
  // found by measuring exactly the same: two ranks of a real run never do, to the nanosecond of
  // these sums.
  for (size_t i = 0; i < measured.size(); ++i) {
    const MeasuredRank& a = measured[i];
    if (a.computation_ms <= 0) continue;
    for (size_t k = 0; k < i; ++k) {
      const MeasuredRank& b = measured[k];
      const bool same_rank = a.world_size > 0 && b.world_size > 0 && a.rank == b.rank;
      if (!same_rank && a.iterations == b.iterations && a.iteration_ms == b.iteration_ms &&
          a.computation_ms == b.computation_ms && a.exposed_comm_ms == b.exposed_comm_ms &&
          a.idle_ms == b.idle_ms && a.collective_ms == b.collective_ms) {
        out.push_back(fmt::format(
            "--compare: {} measures exactly what {} does: one trace given twice? The mean over "
            "ranks counts it twice",
            a.file, b.file));
        break;
      }
    }
  }
  std::map<int64_t, std::string> by_rank;
  for (const MeasuredRank& r : measured) {
    if (r.world_size <= 0) continue;  // ranks numbered by position, not recorded
    auto [it, added] = by_rank.emplace(r.rank, r.file);
    if (!added) {
      out.push_back(
          fmt::format("--compare: rank {} is given twice ({} and {}): the mean over "
                      "ranks counts it twice",
                      r.rank, it->second, r.file));
    }
  }
  // The GPU's computation per iteration, as the comparison's "compute" row has it.
  const double projected_ms = projected.breakdown.compute_ms + projected.breakdown.optimizer_ms;
  const double measured_ms = Mean(measured, &MeasuredRank::computation_ms);
  if (projected_ms > 0 && measured_ms > 0) {
    const double ratio = measured_ms / projected_ms;
    if (ratio < 0.2 || ratio > 5) {
      out.push_back(fmt::format(
          "--compare: the traces compute {:.2f} ms per iteration, the projection {:.2f} ms "
          "({:.3f}x): they are not of this model, batch and layout",
          measured_ms, projected_ms, ratio));
    }
  }
  return out;
}

std::vector<Table> RunComparisonTables(const PerformanceReport& projected,
                                       const std::vector<MeasuredRank>& measured) {
  Table summary("compare", "Projected vs measured, per iteration (--compare)",
                {{"what", "component"},
                 {"projected_ms", "projected (ms)", 2},
                 {"measured_ms", "measured (ms)", 2},
                 {"error_pct", "projected vs measured (%)", 1}});
  for (const Component& c : Components(projected, measured)) {
    summary.AddRow({c.what, c.projected, c.measured,
                    c.measured > 0 ? Cell((c.projected / c.measured - 1) * 100) : Cell()});
  }
  double fastest = 0, slowest = 0;
  for (const MeasuredRank& r : measured) {
    fastest = fastest == 0 ? r.iteration_ms : std::min(fastest, r.iteration_ms);
    slowest = std::max(slowest, r.iteration_ms);
  }
  summary.AddNote(fmt::format(
      "measured: mean over {} rank trace(s) (iteration: each rank's mean ProfilerStep, {:.2f} to "
      "{:.2f} ms); GPU figures are TraceLens's gpu_timeline over each traced window divided by "
      "its ProfilerStep count; projected compute includes the optimizer step",
      measured.size(), fastest, slowest));
  Table ranks("compare_ranks", "Measured ranks, per iteration",
              {{"rank", "rank"},
               {"iterations", "iterations"},
               {"iteration_ms", "iteration (ms)", 2},
               {"compute_ms", "compute (ms)", 2},
               {"exposed_comm_ms", "exposed comm (ms)", 2},
               {"idle_ms", "idle (ms)", 2},
               {"collectives", "collective kernel time by kind (ms)"}});
  for (const MeasuredRank& r : measured) {
    std::string kinds;
    for (const auto& [type, ms] : r.collective_ms) {
      kinds += fmt::format("{}{} {:.2f}", kinds.empty() ? "" : ", ", type, ms);
    }
    ranks.AddRow({r.rank, r.iterations, r.iteration_ms, r.computation_ms, r.exposed_comm_ms,
                  r.idle_ms, kinds});
  }
  return {summary, ranks};
}

nlohmann::json RunComparisonJson(const PerformanceReport& projected,
                                 const std::vector<MeasuredRank>& measured) {
  nlohmann::json components = nlohmann::json::array();
  for (const Component& c : Components(projected, measured)) {
    nlohmann::json row = {
        {"component", c.what}, {"projected_ms", c.projected}, {"measured_ms", c.measured}};
    if (c.measured > 0) row["error_pct"] = (c.projected / c.measured - 1) * 100;
    components.push_back(row);
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const MeasuredRank& r : measured) {
    ranks.push_back({{"file", r.file},
                     {"rank", r.rank},
                     {"iterations", r.iterations},
                     {"iteration_ms", r.iteration_ms},
                     {"compute_ms", r.computation_ms},
                     {"exposed_comm_ms", r.exposed_comm_ms},
                     {"idle_ms", r.idle_ms},
                     {"collective_ms", r.collective_ms}});
  }
  return {{"components", components}, {"ranks", ranks}};
}

}  // namespace sextant
