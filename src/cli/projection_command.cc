// `sextant projection memory|performance|both|search`, with Primus's flag names.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/command_hints.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/projection_flags.h"
#include "job/job_builder.h"
#include "memory/memory_model.h"
#include "memory/memory_report.h"
#include "pipeline/schedule.h"
#include "projection/design_space_search.h"
#include "projection/projection_options.h"
#include "projection/projection_runner.h"
#include "projection/search_base.h"
#include "projection/search_report.h"
#include "report/csv_writer.h"
#include "report/xlsx_writer.h"
#include "util/error.h"

namespace sextant::cli {
namespace {

// `projection search` options beyond the shared projection flags.
struct SearchFlags {
  int top = 10;
  std::string objective = "tokens";
  bool mpi = false;
  unsigned threads = 0;
  double time_budget_s = 0;
  std::string csv_dir;  // top.csv and pareto.csv
  std::string xlsx;     // one sheet each
};

// --csv-dir / --xlsx: the whole ranked list and front, for a spreadsheet. Never over an input.
void WriteSearchExports(const SearchResult& result, const SearchFlags& f,
                        const ProjectionOptions& o) {
  if (f.csv_dir.empty() && f.xlsx.empty()) return;
  std::vector<std::string> inputs;
  for (const std::string* p : {&o.config, &o.hardware_config}) {
    if (!p->empty()) inputs.push_back(*p);
  }
  const std::vector<Table> tables = SearchResultTables(result);
  std::vector<const Table*> pointers;
  for (const Table& t : tables) pointers.push_back(&t);
  if (!f.csv_dir.empty()) {
    const std::string leftover =
        LeftoverCsvWarning(f.csv_dir, WriteCsvDirectory(pointers, f.csv_dir, inputs));
    if (!leftover.empty()) std::fprintf(stderr, "sextant: warning: %s\n", leftover.c_str());
  }
  if (!f.xlsx.empty()) WriteXlsx(pointers, f.xlsx, inputs);
}

// A progress line on stderr while the search runs, when stderr is a terminal (a pipe or a log
// file gets nothing); the line is cleared at the end.
std::function<void(size_t, size_t)> TerminalProgress() {
  if (!isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [start](size_t done, size_t total) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\rsearch: %zu of %zu layer shapes, %.1f s", done, total, s);
    if (done == total) std::fprintf(stderr, "\r%60s\r", "");
    std::fflush(stderr);
  };
}

SearchOptions ToSearchOptions(const ProjectionOptions& o, const SearchFlags& f) {
  SearchOptions s;
  s.time_budget_s = f.time_budget_s;
  s.progress = TerminalProgress();
  s.top_k = f.top;
  s.objective = f.objective == "memory" ? SearchObjective::kMemory : SearchObjective::kTokens;
  s.threads = f.threads;
  // --pipeline-schedule-algorithm narrows the search to one schedule.
  if (!o.schedule.empty() && o.schedule != "auto" && o.schedule != "all") {
    const ScheduleKind kind = ParseScheduleKind(o.schedule);
    s.space.schedules = {kind};
    if (kind == ScheduleKind::k1F1B) s.space.schedules.push_back(ScheduleKind::kInterleaved1F1B);
  }
  return s;
}

}  // namespace

void AddProjectionCommands(CLI::App& app) {
  auto* projection = app.add_subcommand(
      "projection", "Project per-GPU memory and iteration time of a training job");
  projection->require_subcommand(1);
  auto opts = std::make_shared<ProjectionOptions>();

  auto* memory = projection->add_subcommand("memory", "Per-GPU memory per pipeline stage");
  AddProjectionFlags(memory, *opts);
  memory->callback([opts, memory] {
    // The arguments are checked first: a stray argument is an error, not the default example.
    const JobRequest request = ToJobRequest(*opts, memory);
    AnnounceDefault(*opts, memory);
    CheckDistinctOutputs(*opts);  // before --export_config writes anything
    Job job = BuildJobAndExport(request);
    const MemoryReport report = RunMemoryProjection(job, *opts);
    PrintJobWarnings(job);
    if (opts->json) {
      std::cout << MemoryReportJson(report).dump(2) << "\n";
    } else {
      std::cout << RenderMemoryReport(report);
    }
  });

  auto* performance = projection->add_subcommand(
      "performance", "Iteration time, tokens/s/GPU, TFLOP/s/GPU and MFU");
  AddProjectionFlags(performance, *opts);
  performance->callback([opts, performance] {
    // The arguments are checked first: a stray argument is an error, not the default example.
    const JobRequest request = ToJobRequest(*opts, performance);
    AnnounceDefault(*opts, performance);
    CheckDistinctOutputs(*opts);  // before --export_config writes anything
    Job job = BuildJobAndExport(request);
    std::ostringstream out;
    const std::vector<std::string> warnings = RunPerformanceProjection(job, *opts, out);
    PrintJobWarnings(job);
    for (const std::string& w : warnings) std::fprintf(stderr, "sextant: warning: %s\n", w.c_str());
    std::cout << out.str();
  });

  auto* both = projection->add_subcommand("both", "Memory and performance together");
  AddProjectionFlags(both, *opts);
  both->callback([opts, both] {
    // The arguments are checked first: a stray argument is an error, not the default example.
    const JobRequest request = ToJobRequest(*opts, both);
    AnnounceDefault(*opts, both);
    CheckDistinctOutputs(*opts);  // before --export_config writes anything
    Job job = BuildJobAndExport(request);
    std::ostringstream out;
    const std::vector<std::string> warnings = RunBothProjections(job, *opts, out);
    PrintJobWarnings(job);
    for (const std::string& w : warnings) std::fprintf(stderr, "sextant: warning: %s\n", w.c_str());
    std::cout << out.str();
  });

  auto* search = projection->add_subcommand(
      "search", "Best TP/PP/VPP/CP/EP, micro-batch, recompute and schedule for N nodes");
  AddProjectionFlags(search, *opts);
  auto flags = std::make_shared<SearchFlags>();
  search->add_option("--top", flags->top, "configurations to list (default 10)")->check(AtLeast(1));
  search->add_option("--objective", flags->objective, "rank by tokens (tokens/s/GPU) or memory")
      ->check(CLI::IsMember({"tokens", "memory"}));
  search->add_flag("--mpi", flags->mpi, "spread the search over MPI processes (run under mpirun)");
  search->add_option("--threads", flags->threads, "threads per process (default: all cores)")
      ->check(WholeNumberBetween(0, 4096));
  search
      ->add_option("--time-budget", flags->time_budget_s,
                   "stop taking new layer shapes after SECONDS (the ones not reached are "
                   "counted and said)")
      ->check(Positive());
  search->add_option("--csv-dir", flags->csv_dir,
                     "write the ranked list and the Pareto front as top.csv and pareto.csv");
  search->add_option("--xlsx", flags->xlsx, "write them as an Excel workbook (one sheet each)");
  search->callback([opts, flags, search] {
    // Flags of the single-configuration projections that a search would silently ignore.
    std::vector<std::string> chosen, elsewhere;
    for (const char* name :
         {"--micro-batch-size", "--num-virtual-stages-per-pipeline-rank", "--target-ep-size"}) {
      if (search->count(name) > 0) chosen.emplace_back(name);
    }
    for (const char* name :
         {"--profiling-mode", "--memory-mode", "--memory-safety-margin", "--benchmark-gpus",
          "--calibration", "--save-benchmark", "--load-benchmark", "--compare", "--trace",
          "--scaling-nodes", "--chrome-trace", "--pp-dump", "--export_config"}) {
      if (search->count(name) > 0) elsewhere.emplace_back(name);
    }
    if (!chosen.empty()) {
      ThrowUserError(fmt::format(
          "projection search chooses {} itself (it tries every value the layout allows); "
          "leave it out, and give the winner's value to `projection performance`",
          fmt::join(chosen, ", ")));
    }
    if (!elsewhere.empty()) {
      ThrowUserError(fmt::format(
          "projection search ranks configurations with the cost models and does not use {}: "
          "give {} to `projection performance` or `projection both` with the winner's overrides",
          fmt::join(elsewhere, ", "), elsewhere.size() == 1 ? "it" : "them"));
    }
    const SearchOptions options = ToSearchOptions(*opts, *flags);
    bool is_root = true;
    SearchResult result;
    if (flags->mpi) {
      // Every process builds the same job; only process 0 speaks.
      const Job base = BuildSearchBase(ToJobRequest(*opts, search), opts->target_nodes);
      result = SearchDesignSpaceMpi(base, options, &is_root);
      if (!is_root) return;
    } else {
      const JobRequest request = ToJobRequest(*opts, search);
      AnnounceDefault(*opts, search);
      result = SearchDesignSpace(BuildSearchBase(request, opts->target_nodes), options);
    }
    if (flags->mpi) AnnounceDefault(*opts, search);
    WriteSearchExports(result, *flags, *opts);
    if (opts->json) {
      std::cout << SearchResultJson(result).dump(2) << "\n";
    } else {
      std::cout << RenderSearchResult(result);
    }
  });
}

}  // namespace sextant::cli
