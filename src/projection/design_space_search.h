// `projection search` (SPEC §3.7): the best ways to train one model on N nodes.
//
// Every point of the design space (design_space.h) goes through increasingly expensive
// filters, so that most never reach the costly ones:
//   1. validity: the job validator (job_validation.h) and the schedule generators' shape rules
//   2. memory: ProjectMemory with closed-form in-flight micro-batches; OOM is pruned
//   3. rank: an analytic iteration time (step_time_estimate.h) from per-layer times that are
//      computed once per layer shape (TP, CP, EP, ETP, micro-batch, recompute)
//   4. re-evaluate the best rerank_factor x K (and the estimated Pareto front) with the full
//      ProjectPerformance and the memory at its simulated in-flight counts (`projection
//      both`), so every printed number is what those commands print for that configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "job/job.h"
#include "memory/memory_model.h"
#include "projection/design_space.h"
#include "projection/layer_timing.h"

namespace sextant {

enum class SearchObjective { kTokens, kMemory };

struct SearchOptions {
  DesignSpace space;
  SearchObjective objective = SearchObjective::kTokens;
  int top_k = 10;
  int rerank_factor = 4;  // full re-evaluation of the best rerank_factor x top_k estimates
  unsigned threads = 0;   // 0 = all cores
  Calibration calibration;
  // Stop taking new layer shapes after this many seconds (0 = no limit); the shapes not
  // reached are counted and said. The re-evaluation of the shortlist still runs.
  double time_budget_s = 0;
  // Called after each layer shape with (shapes done, shapes in all), from one thread at a time.
  std::function<void(size_t, size_t)> progress;
};

// One configuration that fits, with its memory and (after re-evaluation) its performance.
struct SearchEntry {
  Candidate candidate;
  int64_t micro_batches = 0;
  int64_t peak_bytes = 0;
  int peak_rank = 0;
  int64_t capacity_bytes = 0;
  Verdict verdict = Verdict::kFits;
  double estimated_iteration_ms = 0;  // analytic, for ranking only
  bool estimate_refinable = false;    // a closed form on uneven stages: simulated near the top
  bool full = false;                  // the fields below come from ProjectPerformance
  double iteration_time_ms = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  double bubble_ratio = 0;
  // Other schedules that built the same step for this configuration (equal speed and memory):
  // one row stands for them all.
  std::vector<ScheduleKind> same_step_schedules;

  int64_t HeadroomBytes() const { return capacity_bytes - peak_bytes; }
};

struct SearchCounts {
  int64_t enumerated = 0;       // grid points, pruned ones included
  int64_t pruned = 0;           // refused before being built (layers not split over PP x VPP)
  int64_t invalid = 0;          // built, then rejected by the validators or a schedule's rules
  int64_t out_of_memory = 0;    // OOM by the memory model
  int64_t evaluated = 0;        // fit, and ranked by the analytic estimate
  int64_t fully_evaluated = 0;  // of those, re-run with the full projection
  int64_t shapes_skipped = 0;   // layer shapes left out by --time-budget
  // Built and costed by the memory model: fitting or not.
  int64_t Valid() const { return evaluated + out_of_memory; }
};

struct SearchResult {
  std::string model, gpu;
  std::string module;     // the Primus module the overrides belong to ("" outside Primus)
  std::string framework;  // the job's ("megatron", "torchtitan", "maxtext"): the overrides' keys
  int64_t layers = 0;     // transformer layers of the model
  bool moe = false;       // the model routes tokens to experts (EP and ETP are searched)
  int nodes = 0, gpus_per_node = 0;
  int64_t global_batch_size = 0, seq_length = 0;
  SearchObjective objective = SearchObjective::kTokens;
  SearchCounts counts;
  std::vector<SearchEntry> top;     // best first by the objective, at most top_k
  std::vector<SearchEntry> pareto;  // non-dominated in (tokens/s/GPU up, peak memory down)
  double wall_s = 0;
  // |analytic estimate / full projection - 1| of the iteration time over the top rows, in %.
  double estimate_error_median_pct = 0, estimate_error_max_pct = 0;
  int processes = 1;
  unsigned threads = 1;  // per process
  std::vector<std::string> assumptions;
};

// Runs the whole search on this process's cores. `base` fixes the model, GPU, node count,
// global batch, sequence length and everything not searched (precision, fusion, overlap).
// Throws UserError when nothing fits (naming the smallest peak seen and its configuration)
// or nothing is valid.
SearchResult SearchDesignSpace(const Job& base, const SearchOptions& options);

// The same under mpirun: process p takes every K-th layer shape, process 0 merges the
// survivors and re-evaluates the best. Returns the result on process 0 (`*is_root`).
SearchResult SearchDesignSpaceMpi(const Job& base, const SearchOptions& options, bool* is_root);

}  // namespace sextant
