#include "projection/projection_runner.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hardware/hardware_library.h"
#include "job/torchtitan_schedules.h"
#include "memory/memory_report.h"
#include "pipeline/chrome_trace_export.h"
#include "pipeline/pipeline_simulator.h"
#include "pipeline/pp_dump_reader.h"
#include "pipeline/pp_dump_writer.h"
#include "pipeline/schedule_generators.h"
#include "projection/benchmark_artifact.h"
#include "projection/calibration_file.h"
#include "projection/performance_model.h"
#include "projection/performance_report.h"
#include "projection/profiling_comparison.h"
#include "projection/run_comparison.h"
#include "report/console_table.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

// A layer-time artifact is a few KB; anything far larger is not one.
constexpr int64_t kMaxArtifactBytes = int64_t{16} << 20;

void CheckModes(const ProjectionOptions& o) {
  if (o.memory_mode != "simulate") {
    ThrowUserError("--memory-mode " + o.memory_mode +
                   " needs GPU measurements, which this projection does not take; use "
                   "--memory-mode simulate");
  }
  const bool measured = !o.traces.empty() || !o.load_benchmark.empty();
  if (o.profiling_mode == "benchmark" || (o.profiling_mode == "both" && !measured)) {
    ThrowUserError("--profiling-mode " + o.profiling_mode +
                   " times layers on a local GPU; this build has no GPU benchmark backend (use "
                   "--profiling-mode simulate, or trace / both with --trace FILE for layer times "
                   "measured in a profiler trace)");
  }
  if (o.profiling_mode == "trace" && !measured) {
    ThrowUserError(
        "--profiling-mode trace takes layer times from a profiler trace of a short run: give it "
        "with --trace FILE... (or what --save-benchmark kept of one, with --load-benchmark FILE)");
  }
  // The artifact keeps what trace mode measured; the benchmark mode that would time layers on
  // a local GPU is refused above.
  const bool trace_mode = o.profiling_mode == "trace" || o.profiling_mode == "both";
  if (!o.load_benchmark.empty() && (!trace_mode || !o.traces.empty())) {
    ThrowUserError(
        "--load-benchmark FILE stands for --trace FILE...: give it with --profiling-mode trace or "
        "both, and without --trace");
  }
  if (!o.save_benchmark.empty() && (!trace_mode || o.traces.empty())) {
    ThrowUserError(
        "--save-benchmark FILE keeps the layer times measured in --trace FILE... (with "
        "--profiling-mode trace or both) for --load-benchmark; this build times no layers on a "
        "local GPU");
  }
  // Options of modes this projection does not run are refused, never silently ignored.
  if (o.benchmark_gpus || o.memory_safety_margin) {
    ThrowUserError(
        "--benchmark-gpus and --memory-safety-margin apply to --profiling-mode/--memory-mode "
        "benchmark, which times the model on local GPUs; this projection is analytical");
  }
  // A pipeline dump records a schedule, not kernels: its viewer compares it with the
  // simulated one.
  for (const auto* files : {&o.traces, &o.compare}) {
    for (const std::string& f : *files) {
      std::error_code ec;
      std::string dump =
          std::filesystem::is_directory(f, ec) && IsPipelineDump(f) ? f : PipelineDumpOfFile(f);
      if (!dump.empty()) {
        ThrowUserError(SourceLocation{f}, "",
                       fmt::format("is {} Primus pipeline dump, not profiler traces for {}: "
                                   "`sextant pp view {} --config EXP.yaml` sets it beside the "
                                   "simulated schedule",
                                   dump == f ? "a" : "a file of the",
                                   files == &o.traces ? "--trace" : "--compare", dump));
      }
    }
  }
  // One file twice, however spelt (../x/rank1.json, a link), would count its ranks or layers
  // twice.
  for (const auto* files : {&o.traces, &o.compare}) {
    for (size_t i = 0; i < files->size(); ++i) {
      for (size_t k = 0; k < i; ++k) {
        if (SameFile((*files)[k], (*files)[i])) {
          const char* flag = files == &o.traces ? "--trace" : "--compare";
          ThrowUserError(SourceLocation{(*files)[i]}, "",
                         (*files)[k] == (*files)[i]
                             ? fmt::format("is given to {} twice: each rank's trace once", flag)
                             : fmt::format("is {} given to {} again: each rank's trace once",
                                           (*files)[k], flag));
        }
      }
    }
  }
  CheckDistinctOutputs(o);
  if (!o.traces.empty() && o.profiling_mode != "trace" && o.profiling_mode != "both") {
    ThrowUserError("--trace FILE takes layer times from a trace with --profiling-mode trace");
  }
}

// In-flight micro-batches per rank and chunk from the event simulator, run on the job's
// schedule with uniform unit costs: the schedule's order, not the costs, decides how many
// activations a rank holds for the fixed schedules; for cost-driven schedules the projection
// with real costs is used instead (`projection both`).
InFlightTable SimulatedInFlight(const Job& job) {
  const ScheduleKind kind = ForVirtualStages(job.training.pipeline_schedule, job.parallel.vpp);
  PipelineShape shape{job.parallel.pp, ChunksPerRank(kind, job.parallel.vpp),
                      static_cast<int>(job.training.NumMicroBatches(job.parallel.dp))};
  const PipelineCosts costs =
      UniformCosts(shape.pipeline_ranks * shape.chunks_per_rank, 1.0, 1.0, 1.0, 1);
  const Schedule schedule = GenerateSchedule(kind, shape, &costs);
  const PipelineSimulation sim = SimulatePipeline(schedule, costs);
  InFlightTable table;
  for (const auto& r : sim.ranks) {
    table.push_back(std::vector<double>(shape.chunks_per_rank,
                                        double(r.peak_inflight_chunks) / shape.chunks_per_rank));
  }
  return table;
}

// Memory at the job's schedule. The zero-bubble H2 and heuristic greedies order their passes
// by the layers' real costs, so their in-flight activations come from the performance
// projection (as `projection both` reports them), not from unit costs.
MemoryReport MemoryAtSchedule(const Job& job) {
  const ScheduleKind kind = ForVirtualStages(job.training.pipeline_schedule, job.parallel.vpp);
  if (job.parallel.pp > 1 &&
      (kind == ScheduleKind::kZeroBubbleH2 || kind == ScheduleKind::kZeroBubbleHeuristic)) {
    return ProjectMemoryFor(job, ProjectPerformance(job, PerformanceOptions{}));
  }
  return ProjectMemory(job, SimulatedInFlight(job));
}

Job WithSchedule(const Job& job, const ProjectionOptions& o) {
  Job j = job;
  // Without pipeline parallelism no schedule applies (the job builder said so).
  if (!o.schedule.empty() && o.schedule != "auto" && o.schedule != "all" && j.parallel.pp > 1) {
    j.training.pipeline_schedule = ForVirtualStages(ParseScheduleKind(o.schedule), j.parallel.vpp);
  }
  return j;
}

// The files the user gave, which no output may overwrite.
std::vector<std::string> InputFiles(const ProjectionOptions& o) {
  std::vector<std::string> inputs;
  for (const std::string* path :
       {&o.config, &o.hardware_config, &o.calibration, &o.load_benchmark}) {
    if (!path->empty()) inputs.push_back(*path);
  }
  inputs.insert(inputs.end(), o.traces.begin(), o.traces.end());
  inputs.insert(inputs.end(), o.compare.begin(), o.compare.end());
  return inputs;
}

void WriteExports(const PerformanceReport& perf, const Job& job, const ProjectionOptions& o) {
  const std::vector<std::string> inputs = InputFiles(o);
  if (!o.chrome_trace.empty()) WriteChromeTrace(perf.simulation, o.chrome_trace, inputs);
  if (!o.pp_dump.empty()) {
    PrimusDumpLayout layout{job.parallel.dp, job.parallel.tp, job.parallel.ep};
    WritePrimusDump(SimulationToPrimusDump(perf.simulation, layout), o.pp_dump, inputs);
  }
}

// --calibration: the GPU's efficiency table from a calibration file or fitted on measured
// kernels (projection/calibration_file.h); where it came from goes to the assumptions.
// What --save-benchmark keeps goes to `to_save`, written once the projection has accepted it.
PerformanceOptions ToPerformanceOptions(const Job& job, const ProjectionOptions& o,
                                        std::vector<std::string>* warnings,
                                        std::optional<BenchmarkArtifact>* to_save) {
  PerformanceOptions p;
  p.compare_all_schedules = o.schedule == "all";
  p.scaling_nodes = o.scaling_nodes;
  if (!o.load_benchmark.empty()) {
    const BenchmarkArtifact a =
        ParseBenchmarkArtifact(ReadFile(o.load_benchmark, kMaxArtifactBytes), o.load_benchmark);
    p.measured_layers = a.layers;
    p.measured_step = a.step;
  } else if (o.profiling_mode == "trace" || o.profiling_mode == "both") {
    // Before reading traces that may take minutes; the write checks again.
    if (!o.save_benchmark.empty()) CheckOutputFile(o.save_benchmark, InputFiles(o));
    const std::vector<ProfiledFile> traces = ReadProfiledFiles(o.traces);
    BenchmarkArtifact a;
    a.sources = o.traces;
    if (HasLayerRanges(traces)) {
      auto m = std::make_shared<MeasuredLayerTimes>(MeasureLayerTimes(traces));
      a.device_name = m->device_name;
      p.measured_layers = a.layers = std::move(m);
    } else {
      auto m = std::make_shared<MeasuredStep>(MeasureStepPhases(traces));
      a.device_name = m->device_name;
      p.measured_step = a.step = std::move(m);
    }
    if (!o.save_benchmark.empty()) *to_save = std::move(a);
  }
  if (!o.calibration.empty()) {
    std::string source;
    p.gemm_table = std::make_shared<EfficiencyTable>(
        CalibratedTable(o.calibration, job.cluster.gpu, &source, warnings));
  }
  return p;
}

void AddGemmNote(const PerformanceOptions& p, PerformanceReport& r) {
  if (p.gemm_table) r.assumptions.push_back("efficiency table: " + p.gemm_table->source());
}

}  // namespace

namespace {

// For a job that does not fit at the node count Sextant chose: the fewest nodes (doubling, up
// to 1024 times as many) at which data-parallel sharding (distributed optimizer, FSDP) brings
// the peak under the GPU's memory — "fits from N nodes (...)", or, where it first holds only
// AT-RISK, that count and the first that FITS — with the global batch each count runs when it
// differs from the configured one; "" when it fits or the node count was the user's.
std::string FewestNodesThatFit(const Job& job, const MemoryReport& memory) {
  if (memory.verdict != Verdict::kOom || !job.fewest_nodes_chosen) return "";
  const int64_t most = std::max<int64_t>(1, 100'000 / std::max(1, job.cluster.gpus_per_node));
  std::string at_risk;  // the first count that holds the job, AT-RISK
  for (int64_t n = int64_t{job.cluster.num_nodes} * 2;
       n <= std::min<int64_t>(most, int64_t{job.cluster.num_nodes} * 1024); n *= 2) {
    try {
      const Job scaled = RescaleToNodes(job, static_cast<int>(n));
      const MemoryReport at = MemoryAtSchedule(scaled);
      if (at.verdict == Verdict::kOom) continue;
      const TrainingSettings& t = scaled.training;
      const std::string where = fmt::format(
          "{} nodes ({:.2f} GiB peak, {:.1f}% of {:.2f} GiB{})", n,
          static_cast<double>(at.peak_bytes) / (1 << 30),
          100.0 * static_cast<double>(at.peak_bytes) / static_cast<double>(at.capacity_bytes),
          static_cast<double>(at.capacity_bytes) / (1 << 30),
          t.unrounded_global_batch_size > 0
              ? fmt::format("; global batch {} -> {}", t.unrounded_global_batch_size,
                            t.global_batch_size)
              : "");
      if (at.verdict == Verdict::kFits) {
        return fmt::format("{}fits from {}: --target-nodes {}",
                           at_risk.empty() ? "" : at_risk + "; ", where, n);
      }
      if (at_risk.empty()) at_risk = fmt::format("AT-RISK from {}: --target-nodes {}", where, n);
    } catch (const UserError&) {
      continue;  // that node count does not divide the grids
    }
  }
  if (!at_risk.empty()) {
    return at_risk + fmt::format(
                         "; no node count up to 1024 x this one makes it FIT: data-parallel "
                         "sharding does not shrink what is left (activations, weights unsharded "
                         "by DP); more TP / PP / CP or recomputation does");
  }
  return fmt::format(
      "no node count up to {} x this one fits: data-parallel sharding does not shrink what is "
      "left (activations, weights unsharded by DP); more TP / PP / CP or recomputation does",
      1024);
}

}  // namespace

void CheckDistinctOutputs(const ProjectionOptions& o) {
  // Two outputs in one file would leave only the last; /dev/null takes any number.
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--chrome-trace", &o.chrome_trace},
      {"--save-benchmark", &o.save_benchmark},
      {"--pp-dump", &o.pp_dump},
      {"--export_config", &o.export_config}};
  for (size_t i = 0; i < std::size(outputs); ++i) {
    for (size_t k = 0; k < i; ++k) {
      const std::string& path = *outputs[i].second;
      if (!path.empty() && path != "/dev/null" && !outputs[k].second->empty() &&
          SameFile(path, *outputs[k].second)) {
        ThrowUserError(fmt::format("{} and {} name one file, {}: give each its own",
                                   outputs[k].first, outputs[i].first, path));
      }
    }
  }
}

MemoryReport RunMemoryProjection(const Job& job, const ProjectionOptions& options) {
  CheckModes(options);
  if (!options.chrome_trace.empty() || !options.pp_dump.empty() || !options.calibration.empty() ||
      !options.traces.empty() || !options.compare.empty() || !options.scaling_nodes.empty() ||
      !options.load_benchmark.empty() || !options.save_benchmark.empty()) {
    ThrowUserError(
        "--chrome-trace, --pp-dump, --calibration, --trace, --compare, --scaling-nodes and "
        "--save-benchmark/--load-benchmark belong to the timed step: use `projection "
        "performance` or `projection both` (a memory projection has no step time)");
  }
  const Job j = WithSchedule(job, options);
  MemoryReport report = MemoryAtSchedule(j);
  if (std::string fits = FewestNodesThatFit(j, report); !fits.empty()) {
    report.assumptions.insert(
        report.assumptions.begin(),
        fmt::format("scale: {} node(s) do not hold this job; {}", j.cluster.num_nodes, fits));
  }
  if (options.schedule != "all") return report;
  // Every schedule the layout can run, at its simulated in-flight activations.
  for (ScheduleKind k : AllScheduleKinds()) {
    ScheduleMemory s;
    s.schedule = std::string(ScheduleKindName(k));
    Job jk = j;
    jk.training.pipeline_schedule = k;
    try {
      if (std::string_view why = VirtualStageMismatch(k, j.parallel.vpp); !why.empty()) {
        ThrowUserError(why);
      }
      if (j.framework == "torchtitan" && TorchTitanScheduleFor(k) == nullptr) {
        ThrowUserError("not a torchtitan schedule class (torch.distributed.pipelining)");
      }
      const MemoryReport mk = MemoryAtSchedule(jk);
      s.ran = true;
      s.peak_bytes = mk.peak_bytes;
      s.peak_rank = mk.peak_rank;
      s.verdict = mk.verdict;
    } catch (const UserError& e) {
      s.skipped_because = e.what();
    }
    report.schedules.push_back(std::move(s));
  }
  return report;
}

PerformanceReport ProjectJobPerformance(const Job& job, const ProjectionOptions& options,
                                        MemoryReport* memory_out) {
  CheckModes(options);
  const Job j = WithSchedule(job, options);
  std::vector<std::string> warnings;
  std::optional<BenchmarkArtifact> to_save;
  const PerformanceOptions po = ToPerformanceOptions(j, options, &warnings, &to_save);
  PerformanceReport perf = ProjectPerformance(j, po);
  // Kept only once the traces passed the checks against this job: a refused measurement
  // leaves no artifact behind to be loaded later.
  if (to_save)
    WriteFileAtomically(options.save_benchmark, BenchmarkArtifactJson(*to_save),
                        InputFiles(options));
  perf.warnings.insert(perf.warnings.end(), warnings.begin(), warnings.end());
  AddGemmNote(po, perf);
  // A step time for a job that cannot start is easy to misread as a plan: say so first.
  MemoryReport memory = ProjectMemoryFor(j, perf);
  if (memory.verdict == Verdict::kOom) {
    perf.assumptions.insert(
        perf.assumptions.begin(),
        fmt::format("memory: this job needs {:.2f} GiB on PP rank {} of {:.2f} GiB {} (OOM; "
                    "`projection memory` breaks it down): it would not run as configured, and the "
                    "times above assume it did{}",
                    static_cast<double>(memory.peak_bytes) / (1 << 30), memory.peak_rank,
                    static_cast<double>(memory.capacity_bytes) / (1 << 30),
                    memory.capacity_bytes < memory.hbm_bytes ? "that JAX preallocates" : "HBM",
                    [&] {
                      const std::string fits = FewestNodesThatFit(j, memory);
                      return fits.empty() ? fits : "; " + fits;
                    }()));
  }
  if (memory_out != nullptr) *memory_out = std::move(memory);
  return perf;
}

MemoryReport ProjectMemoryFor(const Job& job, const PerformanceReport& perf) {
  Job j = job;
  j.training.pipeline_schedule = perf.schedule_kind;
  return ProjectMemory(j, perf.in_flight);
}

namespace {

// --compare: the run's traces next to the projection ("" without the flag).
std::string ComparisonText(const PerformanceReport& perf, const ProjectionOptions& options,
                           const std::vector<MeasuredRank>& measured) {
  std::string text;
  if (options.compare.empty()) return text;
  for (const Table& t : RunComparisonTables(perf, measured)) text += "\n" + RenderConsoleTable(t);
  return text;
}

// The measured run of --compare, and what in it differs from the projected job.
std::vector<MeasuredRank> MeasureComparedRun(const Job& job, const ProjectionOptions& options,
                                             PerformanceReport& perf) {
  if (options.compare.empty()) return {};
  std::vector<MeasuredRank> measured = MeasureRun(options.compare);
  for (std::string& w : ComparisonWarnings(job, perf, measured)) {
    perf.warnings.push_back(std::move(w));
  }
  return measured;
}

// --profiling-mode both: the same job with every layer modelled, and the side-by-side table.
PerformanceReport ModelledOnly(const Job& job, const ProjectionOptions& options) {
  ProjectionOptions simulate = options;
  simulate.profiling_mode = "simulate";
  simulate.traces.clear();
  simulate.compare.clear();
  simulate.save_benchmark.clear();
  simulate.load_benchmark.clear();
  return ProjectJobPerformance(job, simulate);
}

nlohmann::json WithWarnings(nlohmann::json j, const PerformanceReport& perf) {
  if (!perf.warnings.empty()) j["warnings"] = perf.warnings;
  return j;
}

}  // namespace

std::vector<std::string> RunPerformanceProjection(const Job& job, const ProjectionOptions& options,
                                                  std::ostream& out) {
  PerformanceReport perf = ProjectJobPerformance(job, options);
  WriteExports(perf, WithSchedule(job, options), options);
  const std::vector<MeasuredRank> measured = MeasureComparedRun(job, options, perf);
  if (options.profiling_mode == "both") {
    const PerformanceReport modelled = ModelledOnly(job, options);
    if (options.json) {
      nlohmann::json j = ProfilingComparisonJson(modelled, perf);
      if (!options.compare.empty()) j["compare"] = RunComparisonJson(perf, measured);
      out << WithWarnings(std::move(j), perf).dump(2) << "\n";
    } else {
      out << RenderPerformanceReport(perf) << "\n"
          << RenderConsoleTable(ProfilingComparisonTable(modelled, perf));
      out << ComparisonText(perf, options, measured);
    }
    return perf.warnings;
  }
  if (options.json) {
    nlohmann::json j = PerformanceReportJson(perf);
    if (!options.compare.empty()) j["compare"] = RunComparisonJson(perf, measured);
    out << WithWarnings(std::move(j), perf).dump(2) << "\n";
  } else {
    out << RenderPerformanceReport(perf);
    out << ComparisonText(perf, options, measured);
  }
  return perf.warnings;
}

std::vector<std::string> RunBothProjections(const Job& job, const ProjectionOptions& options,
                                            std::ostream& out) {
  MemoryReport memory;
  PerformanceReport perf = ProjectJobPerformance(job, options, &memory);
  WriteExports(perf, WithSchedule(job, options), options);
  // The job's own notes (where a value came from, what was rounded) close the memory report;
  // the performance report below keeps only its own assumptions.
  PerformanceReport shown = perf;
  std::erase_if(shown.assumptions, [&](const std::string& a) {
    return std::find(memory.assumptions.begin(), memory.assumptions.end(), a) !=
           memory.assumptions.end();
  });
  const std::vector<MeasuredRank> measured = MeasureComparedRun(job, options, perf);
  std::optional<PerformanceReport> modelled;
  if (options.profiling_mode == "both") modelled = ModelledOnly(job, options);
  if (options.json) {
    nlohmann::json j{{"memory", MemoryReportJson(memory)},
                     {"performance", PerformanceReportJson(perf)}};
    if (modelled) {
      const nlohmann::json side_by_side = ProfilingComparisonJson(*modelled, perf);
      j["simulated"] = side_by_side["simulated"];
      j["comparison"] = side_by_side["comparison"];
    }
    if (!options.compare.empty()) j["compare"] = RunComparisonJson(perf, measured);
    out << WithWarnings(std::move(j), perf).dump(2) << "\n";
  } else {
    out << RenderMemoryReport(memory) << "\n" << RenderPerformanceReport(shown);
    if (modelled) out << "\n" << RenderConsoleTable(ProfilingComparisonTable(*modelled, perf));
    out << ComparisonText(perf, options, measured);
  }
  return perf.warnings;
}

}  // namespace sextant
