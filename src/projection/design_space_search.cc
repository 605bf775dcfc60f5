#include "projection/design_space_search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "cost/collective_model.h"
#include "cost/efficiency_table.h"
#include "job/config_reader.h"
#include "job/job_validation.h"
#include "job/maxtext_remat.h"
#include "pipeline/pipeline_costs.h"
#include "pipeline/schedule_generators.h"
#include "projection/performance_model.h"
#include "projection/search_report.h"
#include "projection/step_time_estimate.h"
#include "util/error.h"
#include "util/mpi_gather.h"
#include "util/thread_pool.h"
#include "util/units.h"

namespace sextant {
namespace {

using Clock = std::chrono::steady_clock;

// Total order on candidates, the last tie-breaker: results do not depend on how the work was
// split over threads or processes.
auto Key(const Candidate& c) {
  return std::make_tuple(c.tp, c.pp, c.vpp, c.cp, c.ep, c.etp, c.micro_batch_size,
                         static_cast<int>(c.recompute), c.distributed_optimizer, c.fsdp2,
                         static_cast<int>(c.schedule));
}

// A schedule's generator decides whether it can run a (PP, chunks, micro-batches) shape.
struct ScheduleShape {
  ScheduleKind kind;
  int pp, chunks;
  int64_t micro_batches;
  auto operator<=>(const ScheduleShape&) const = default;
};

ScheduleShape ShapeOf(const Candidate& c, int64_t micro_batches) {
  return {c.schedule, c.pp, ShapeOf(c.schedule) == StageShape::kVShape ? 2 : c.vpp, micro_batches};
}

struct Partial {
  SearchCounts counts;
  std::vector<SearchEntry> survivors;
  std::optional<SearchEntry> smallest;  // lowest peak memory seen, whatever its verdict
  std::string first_invalid;
};

// Whether a schedule runs a shape, and for the schedules without a closed-form bubble the
// bubble the simulator gives it with unit costs (step_time_estimate.h).
struct ShapeCheck {
  bool runnable = false;
  double uniform_bubble = 0;
};

bool NeedsUniformBubble(ScheduleKind kind) {
  return kind == ScheduleKind::kZbvGreedyHalf || kind == ScheduleKind::kZbvGreedyMin ||
         kind == ScheduleKind::kZeroBubbleH2;
}

// Everything the per-shape workers share, read-only.
struct Context {
  const Job& base;
  const SearchOptions& options;
  std::unique_ptr<CollectiveModel> comm;
  EfficiencyTable table;
  std::map<ScheduleShape, ShapeCheck> runnable;
};

int64_t MicroBatches(const Job& base, const Candidate& c) {
  const int64_t per_step = c.micro_batch_size * c.dp;
  const int64_t gbs = base.training.global_batch_size;
  return per_step > 0 && gbs % per_step == 0 ? gbs / per_step : 0;
}

std::map<ScheduleShape, ShapeCheck> CheckScheduleShapes(
    const Job& base, const std::vector<std::vector<Candidate>>& all, unsigned threads) {
  std::map<ScheduleShape, ShapeCheck> runnable;
  // A pipeline with more model chunks than layers (plus the embedding and loss stages
  // Megatron may count) cannot be placed, and the job validator refuses it: its schedule is not
  // generated, which for the greedy schedules at hundreds of ranks would be most of the work.
  const int64_t max_chunks = base.model.num_layers + 2;
  for (const auto& candidates : all) {
    for (const Candidate& c : candidates) {
      const int64_t m = MicroBatches(base, c);
      const ScheduleShape shape = ShapeOf(c, m);
      if (m > 0 && int64_t{shape.pp} * shape.chunks <= max_chunks)
        runnable.emplace(shape, ShapeCheck{});
    }
  }
  std::vector<std::pair<const ScheduleShape, ShapeCheck>*> slots;
  for (auto& entry : runnable) slots.push_back(&entry);
  ParallelFor(
      slots.size(),
      [&](size_t i) {
        const ScheduleShape& s = slots[i]->first;
        if (s.micro_batches > std::numeric_limits<int>::max()) return;
        try {
          const int m = static_cast<int>(s.micro_batches);
          if (NeedsUniformBubble(s.kind)) {
            slots[i]->second.uniform_bubble = UniformBubble(s.kind, s.pp, s.chunks, m);
          } else {
            const PipelineShape shape{s.pp, s.chunks, m};
            const PipelineCosts costs = UniformCosts(s.pp * s.chunks, 1.0, 1.0, 1.0);
            GenerateSchedule(s.kind, shape, &costs);
          }
          slots[i]->second.runnable = true;
        } catch (const UserError&) {
          slots[i]->second.runnable = false;
        }
      },
      threads);
  return runnable;
}

void NoteInvalid(Partial& out, const std::string& why) {
  ++out.counts.invalid;
  if (out.first_invalid.empty()) out.first_invalid = why;
}

// Filters 1-3 for every candidate of one layer shape.
void EvaluateShape(const Context& ctx, const std::vector<Candidate>& candidates, Partial& out) {
  const Provenance no_provenance;
  std::vector<std::string> notes;
  std::optional<ModelTimings> timings;
  bool timings_failed = false;
  std::string timings_error;
  for (const Candidate& c : candidates) {
    ++out.counts.enumerated;
    // The schedule's shape first: a map lookup, where the validator parses layouts.
    const int64_t m = MicroBatches(ctx.base, c);
    const auto checked = ctx.runnable.find(ShapeOf(c, m));
    if (m > 0 && (checked == ctx.runnable.end() || !checked->second.runnable)) {
      NoteInvalid(out, fmt::format("{} cannot run PP {} x {} chunk(s) with {} micro-batches",
                                   ScheduleKindName(c.schedule), c.pp,
                                   ShapeOf(c.schedule) == StageShape::kVShape ? 2 : c.vpp, m));
      continue;
    }
    const Job job = ApplyCandidate(ctx.base, c);
    try {
      notes.clear();
      ValidateJob(job, no_provenance, /*allow_uneven_layers=*/false, notes);
    } catch (const UserError& e) {
      NoteInvalid(out, e.what());
      continue;
    }
    SearchEntry entry;
    entry.candidate = c;
    entry.micro_batches = m;
    try {
      const MemoryReport memory = ProjectMemory(job, {}, MemoryDetail::kNumbersOnly);
      entry.peak_bytes = memory.peak_bytes;
      entry.peak_rank = memory.peak_rank;
      entry.capacity_bytes = memory.capacity_bytes;
      entry.verdict = memory.verdict;
    } catch (const UserError& e) {
      NoteInvalid(out, e.what());
      continue;
    }
    if (!out.smallest || entry.peak_bytes < out.smallest->peak_bytes) out.smallest = entry;
    if (entry.verdict == Verdict::kOom) {
      ++out.counts.out_of_memory;
      continue;
    }
    if (!timings && !timings_failed) {
      try {
        timings = ComputeModelTimings(job, ctx.options.calibration);
      } catch (const UserError& e) {
        timings_failed = true;
        timings_error = e.what();
      }
    }
    if (timings_failed) {
      NoteInvalid(out, timings_error);
      continue;
    }
    const StepEstimate estimate =
        EstimateIteration(job, c.schedule, *timings, *ctx.comm, ctx.table,
                          ctx.options.calibration.in_training_efficiency,
                          checked->second.uniform_bubble, nullptr, UnevenStages::kClosedForm);
    entry.estimated_iteration_ms = estimate.IterationSeconds() * 1e3;
    entry.estimate_refinable = estimate.closed_form_on_uneven_stages;
    ++out.counts.evaluated;
    out.survivors.push_back(entry);
  }
}

Partial Merge(std::vector<Partial>& parts) {
  Partial all;
  for (Partial& p : parts) {
    all.counts.enumerated += p.counts.enumerated;
    all.counts.pruned += p.counts.pruned;
    all.counts.invalid += p.counts.invalid;
    all.counts.out_of_memory += p.counts.out_of_memory;
    all.counts.evaluated += p.counts.evaluated;
    all.counts.shapes_skipped += p.counts.shapes_skipped;
    all.survivors.insert(all.survivors.end(), std::make_move_iterator(p.survivors.begin()),
                         std::make_move_iterator(p.survivors.end()));
    if (p.smallest &&
        (!all.smallest ||
         std::make_pair(p.smallest->peak_bytes, Key(p.smallest->candidate)) <
             std::make_pair(all.smallest->peak_bytes, Key(all.smallest->candidate)))) {
      all.smallest = p.smallest;
    }
    if (all.first_invalid.empty()) all.first_invalid = p.first_invalid;
  }
  return all;
}

// Better-first orders: by the analytic estimate before re-evaluation, by the full numbers after.
// Every configuration that fits ranks before any that is AT-RISK: above 92% of HBM, the
// allocator's reserve (x1.115 at the median of the corpus snapshots) already passes HBM.
bool FitsBefore(const SearchEntry& a, const SearchEntry& b) {
  return a.verdict == Verdict::kFits && b.verdict != Verdict::kFits;
}

bool EstimateBetter(SearchObjective o, const SearchEntry& a, const SearchEntry& b) {
  if (FitsBefore(a, b) || FitsBefore(b, a)) return FitsBefore(a, b);
  if (o == SearchObjective::kMemory && a.peak_bytes != b.peak_bytes)
    return a.peak_bytes < b.peak_bytes;
  if (a.estimated_iteration_ms != b.estimated_iteration_ms)
    return a.estimated_iteration_ms < b.estimated_iteration_ms;
  if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
  return Key(a.candidate) < Key(b.candidate);
}

// A schedule Primus runs as configured: Megatron's own (1F1B, interleaved) or one of its
// pipeline patch's pp_algorithm values.
bool PrimusRuns(ScheduleKind k) {
  return k == ScheduleKind::k1F1B || k == ScheduleKind::kInterleaved1F1B ||
         !PrimusPipelineAlgorithm(k).empty();
}

bool FullBetter(SearchObjective o, const SearchEntry& a, const SearchEntry& b) {
  if (FitsBefore(a, b) || FitsBefore(b, a)) return FitsBefore(a, b);
  if (o == SearchObjective::kMemory && a.HeadroomBytes() != b.HeadroomBytes())
    return a.HeadroomBytes() > b.HeadroomBytes();
  // Speeds equal to a thousandth of a token/s are one speed (two greedy schedules often build
  // the same order): then the schedule Primus can run goes first, so that the overrides
  // printed for the winner reproduce it.
  const long long speed_a = std::llround(a.tokens_per_s_per_gpu * 1000);
  const long long speed_b = std::llround(b.tokens_per_s_per_gpu * 1000);
  if (speed_a != speed_b) return speed_a > speed_b;
  if (PrimusRuns(a.candidate.schedule) != PrimusRuns(b.candidate.schedule)) {
    return PrimusRuns(a.candidate.schedule);
  }
  if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
  return Key(a.candidate) < Key(b.candidate);
}

// Entries no other entry beats on both speed (higher `speed`) and peak memory (lower), sorted
// fastest first. Sweep by memory: an entry survives if it is faster than every smaller one.
template <typename Speed>
std::vector<SearchEntry> ParetoFront(std::vector<SearchEntry> entries, Speed speed) {
  std::sort(entries.begin(), entries.end(), [&](const SearchEntry& a, const SearchEntry& b) {
    if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    if (speed(a) != speed(b)) return speed(a) > speed(b);
    return Key(a.candidate) < Key(b.candidate);
  });
  std::vector<SearchEntry> front;
  for (const SearchEntry& e : entries) {
    if (front.empty() || speed(e) > speed(front.back())) front.push_back(e);
  }
  std::reverse(front.begin(), front.end());
  return front;
}

double FullSpeed(const SearchEntry& e) { return e.tokens_per_s_per_gpu; }

// What the recompute column's values mean, in the framework's own terms.
std::string RecomputeAssumption(const std::string& framework) {
  if (framework == "torchtitan") {
    return "recompute: selective = activation_checkpoint.mode selective with op-level "
           "selective_ac_option (attention outputs and every other matmul output saved), full = "
           "every block";
  }
  if (framework == "maxtext") {
    return fmt::format(
        "recompute: selective = remat_policy {} (Q, K and V saved, the rest re-run), full = "
        "remat_policy full",
        kMaxTextSelectivePolicy);
  }
  return "recompute: selective = Megatron's core attention, full = every layer (uniform)";
}

// Said when the global batch, not the model, limits how the GPUs are used: fewer sequences
// than GPUs cap data parallelism (every replica must then be split TP x PP x CP ways), and
// fewer micro-batches than pipeline stages leave most of each stage idle. Either way more
// nodes add GPUs faster than they add tokens/s.
std::string BatchLimitNote(const SearchEntry& best, int64_t global_batch, int world) {
  const Candidate& c = best.candidate;
  std::string note;
  if (global_batch > 0 && global_batch < world) {
    note = fmt::format(
        "the global batch ({} sequences) is smaller than the {} GPUs: at most {} data-parallel "
        "replicas, each of at least {} GPUs, so the rest goes to model parallelism",
        global_batch, world, global_batch, (world + global_batch - 1) / global_batch);
  }
  if (c.pp > 1 && best.micro_batches > 0 && best.micro_batches < c.pp) {
    note += fmt::format(
        "{}the best configuration runs {} micro-batches through {} pipeline stages "
        "(bubble {:.0f}%)",
        note.empty() ? "" : "; ", best.micro_batches, c.pp, best.bubble_ratio * 100);
  }
  if (note.empty()) return note;
  return note +
         ": fewer nodes or a larger global batch would give more tokens/s per GPU (the batch, "
         "not the model, limits this search)";
}

// Greedy schedules (ZB-H2, the zero-bubble heuristic, ...) often build the same order for a
// configuration: rows that differ only in the schedule and have the same speed (to a thousandth
// of a token/s) and peak become one, the best-ranked, naming the others. `ranked` is sorted
// best first, so the row kept is the one FullBetter prefers (a schedule Primus runs).
std::vector<SearchEntry> MergeSameStepSchedules(std::vector<SearchEntry> ranked) {
  auto same_but_schedule = [](const SearchEntry& a, const SearchEntry& b) {
    Candidate x = a.candidate;
    x.schedule = b.candidate.schedule;
    return Key(x) == Key(b.candidate) && x.layout == b.candidate.layout &&
           x.first_stage_layers == b.candidate.first_stage_layers &&
           x.last_stage_layers == b.candidate.last_stage_layers && a.peak_bytes == b.peak_bytes &&
           std::llround(a.tokens_per_s_per_gpu * 1000) ==
               std::llround(b.tokens_per_s_per_gpu * 1000);
  };
  std::vector<SearchEntry> kept;
  for (SearchEntry& e : ranked) {
    auto same = std::find_if(kept.begin(), kept.end(),
                             [&](const SearchEntry& k) { return same_but_schedule(k, e); });
    if (same == kept.end()) {
      kept.push_back(std::move(e));
    } else {
      same->same_step_schedules.push_back(e.candidate.schedule);
    }
  }
  return kept;
}

// How far (relative) an estimate may be from the full projection's iteration time and still
// leave the ranking to the full projection: candidates within it of the estimated front are
// re-evaluated, so a front point the estimate places slightly wrong is not lost.
constexpr double kEstimateTolerance = 0.01;

// Entries no smaller-or-equal-memory entry beats by more than `tolerance` in estimated
// iteration time: the estimated Pareto front and everything close to it.
std::vector<SearchEntry> NearEstimatedFront(std::vector<SearchEntry> entries,
                                            double tolerance = kEstimateTolerance) {
  std::sort(entries.begin(), entries.end(), [](const SearchEntry& a, const SearchEntry& b) {
    if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    if (a.estimated_iteration_ms != b.estimated_iteration_ms)
      return a.estimated_iteration_ms < b.estimated_iteration_ms;
    return Key(a.candidate) < Key(b.candidate);
  });
  std::vector<SearchEntry> near;
  double fastest = std::numeric_limits<double>::infinity();
  for (SearchEntry& e : entries) {
    if (e.estimated_iteration_ms <= fastest * (1 + tolerance)) near.push_back(e);
    fastest = std::min(fastest, e.estimated_iteration_ms);
  }
  return near;
}

// The best `n` by the objective plus the entries near the estimated Pareto front: what
// re-evaluation needs.
std::vector<SearchEntry> Shortlist(const std::vector<SearchEntry>& survivors, SearchObjective o,
                                   size_t n) {
  std::vector<SearchEntry> best = survivors;
  const size_t keep = std::min(n, best.size());
  std::partial_sort(
      best.begin(), best.begin() + static_cast<std::ptrdiff_t>(keep), best.end(),
      [o](const SearchEntry& a, const SearchEntry& b) { return EstimateBetter(o, a, b); });
  best.resize(keep);
  for (SearchEntry& e : NearEstimatedFront(survivors)) {
    const bool listed = std::any_of(best.begin(), best.end(), [&](const SearchEntry& b) {
      return Key(b.candidate) == Key(e.candidate);
    });
    if (!listed) best.push_back(std::move(e));
  }
  return best;
}

std::string Describe(const Candidate& c) {
  return fmt::format("{}{}, micro-batch {}, recompute {}, optimizer sharding {}, {}",
                     DescribeParallelSizes(c.Sizes()),
                     c.first_stage_layers >= 0
                         ? fmt::format(" (first/last stage {}/{} layers)", c.first_stage_layers,
                                       c.last_stage_layers)
                     : !c.layout.empty() ? fmt::format(" (layout {})", c.layout)
                                         : "",
                     c.micro_batch_size, RecomputeName(c.recompute), ShardingName(c),
                     ScheduleKindName(c.schedule));
}

size_t ShortlistSize(const SearchOptions& o) {
  return static_cast<size_t>(std::max(1, o.top_k)) *
         static_cast<size_t>(std::max(1, o.rerank_factor));
}

// How far a closed form on uneven stages may be from the simulation (measured up to 7%,
// step_time_estimate.h): flagged candidates this close to the shortlist or the estimated front
// are simulated before the shortlist is drawn, so none is kept out or let in by the closed form.
constexpr double kClosedFormSlack = 0.10;

// Replaces the closed-form estimates that are off on uneven stages by simulated ones, for the
// flagged candidates that could reach the shortlist: within kClosedFormSlack of its last
// member's estimate or of the estimated front. One timing set and memo per layer shape.
void RefineUnevenEstimates(const Job& base, const SearchOptions& options, const Context& ctx,
                           std::vector<SearchEntry>& survivors) {
  if (survivors.empty()) return;
  std::vector<double> times;
  times.reserve(survivors.size());
  for (const SearchEntry& e : survivors) times.push_back(e.estimated_iteration_ms);
  const size_t n = std::min(ShortlistSize(options), times.size()) - 1;
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(n), times.end());
  const double threshold = times[n] * (1 + kClosedFormSlack);
  std::set<decltype(Key(Candidate{}))> near_front;
  for (const SearchEntry& e : NearEstimatedFront(survivors, kClosedFormSlack)) {
    if (e.estimate_refinable) near_front.insert(Key(e.candidate));
  }
  using ShapeKey = std::tuple<int, int, int, int, int64_t, int>;
  std::map<ShapeKey, std::vector<SearchEntry*>> by_shape;
  for (SearchEntry& e : survivors) {
    if (!e.estimate_refinable) continue;
    if (e.estimated_iteration_ms <= threshold || near_front.count(Key(e.candidate)) > 0) {
      const Candidate& c = e.candidate;
      by_shape[ShapeKey{c.tp, c.cp, c.ep, c.etp, c.micro_batch_size, static_cast<int>(c.recompute)}]
          .push_back(&e);
    }
  }
  std::vector<std::vector<SearchEntry*>*> groups;
  for (auto& [shape, entries] : by_shape) groups.push_back(&entries);
  ParallelFor(
      groups.size(),
      [&](size_t g) {
        const std::vector<SearchEntry*>& entries = *groups[g];
        const ModelTimings timings = ComputeModelTimings(
            ApplyCandidate(base, entries.front()->candidate), options.calibration);
        PipelineStepMemo memo;
        for (SearchEntry* e : entries) {
          const Job job = ApplyCandidate(base, e->candidate);
          e->estimated_iteration_ms =
              EstimateIteration(job, e->candidate.schedule, timings, *ctx.comm, ctx.table,
                                options.calibration.in_training_efficiency, 0, &memo,
                                UnevenStages::kSimulate)
                  .IterationSeconds() *
              1e3;
          e->estimate_refinable = false;
        }
      },
      options.threads);
}

// Filter 4 and the answer: full projections of the shortlist, ranked, front, counts.
SearchResult Finish(const Job& base, const SearchOptions& options, Partial all,
                    Clock::time_point start, int processes, unsigned threads) {
  const GpuSpec& gpu = base.cluster.gpu;
  if (all.survivors.empty() && all.counts.shapes_skipped > 0) {
    ThrowUserError(fmt::format(
        "--time-budget {:g} s ran out before any configuration that fits was found ({} layer "
        "shapes not reached, {} candidates seen): give the search more time",
        options.time_budget_s, all.counts.shapes_skipped, all.counts.enumerated));
  }
  if (all.survivors.empty()) {
    if (all.smallest) {
      ThrowUserError(fmt::format(
          "no configuration of {} fits on {} node(s) of {} x {} ({:.1f} GiB each): the smallest "
          "peak memory seen is {:.1f} GiB, with {} ({} of {} candidates out of memory, {} "
          "invalid)",
          base.model.name, base.cluster.num_nodes, base.cluster.gpus_per_node, gpu.name,
          static_cast<double>(gpu.hbm_bytes) / kGiB,
          static_cast<double>(all.smallest->peak_bytes) / kGiB, Describe(all.smallest->candidate),
          all.counts.out_of_memory, all.counts.enumerated, all.counts.invalid));
    }
    ThrowUserError(fmt::format(
        "no valid configuration of {} on {} node(s) of {} x {} among {} candidates (first "
        "reason: {})",
        base.model.name, base.cluster.num_nodes, base.cluster.gpus_per_node, gpu.name,
        all.counts.enumerated,
        !all.first_invalid.empty() ? all.first_invalid
        : all.counts.pruned > 0    ? "the layers split evenly over none of the PP x VPP tried"
                                   : "none"));
  }

  std::vector<SearchEntry> shortlist =
      Shortlist(all.survivors, options.objective, ShortlistSize(options));
  enum class Outcome { kRanked, kInvalid, kOom };
  std::vector<Outcome> outcome(shortlist.size(), Outcome::kRanked);
  ParallelFor(
      shortlist.size(),
      [&](size_t i) {
        SearchEntry& e = shortlist[i];
        Job job = ApplyCandidate(base, e.candidate);
        PerformanceOptions perf_options;
        perf_options.scaling_nodes = {job.cluster.num_nodes};  // no scaling table needed
        perf_options.calibration = options.calibration;
        try {
          const PerformanceReport perf = ProjectPerformance(job, perf_options);
          // Memory at the schedule's simulated in-flight counts, as `projection both` does.
          job.training.pipeline_schedule = perf.schedule_kind;
          const MemoryReport memory = ProjectMemory(job, perf.in_flight);
          e.full = true;
          e.iteration_time_ms = perf.iteration_time_ms;
          e.tokens_per_s_per_gpu = perf.tokens_per_s_per_gpu;
          e.model_tflops_per_gpu = perf.model_tflops_per_gpu;
          e.hardware_tflops_per_gpu = perf.hardware_tflops_per_gpu;
          e.mfu = perf.mfu;
          e.bubble_ratio = perf.bubble_ratio;
          e.peak_bytes = memory.peak_bytes;
          e.peak_rank = memory.peak_rank;
          e.capacity_bytes = memory.capacity_bytes;
          e.verdict = memory.verdict;
          if (memory.verdict == Verdict::kOom) outcome[i] = Outcome::kOom;
        } catch (const UserError&) {
          outcome[i] = Outcome::kInvalid;
        }
      },
      threads);

  SearchResult r;
  r.model = base.model.name;
  r.module = base.module;
  r.framework = base.framework;
  r.layers = base.model.num_layers;
  r.moe = base.model.IsMoe();
  r.gpu = gpu.name;
  r.nodes = base.cluster.num_nodes;
  r.gpus_per_node = base.cluster.gpus_per_node;
  r.global_batch_size = base.training.global_batch_size;
  r.seq_length = base.training.seq_length;
  r.objective = options.objective;
  r.counts = all.counts;
  r.counts.fully_evaluated = static_cast<int64_t>(shortlist.size());
  std::vector<SearchEntry> ranked;
  for (size_t i = 0; i < shortlist.size(); ++i) {
    // What the full projection rejects moves from "evaluated" to where it belongs.
    if (outcome[i] == Outcome::kRanked) {
      ranked.push_back(shortlist[i]);
    } else {
      --r.counts.evaluated;
      ++(outcome[i] == Outcome::kOom ? r.counts.out_of_memory : r.counts.invalid);
    }
  }
  std::sort(ranked.begin(), ranked.end(), [&](const SearchEntry& a, const SearchEntry& b) {
    return FullBetter(options.objective, a, b);
  });
  r.pareto = ParetoFront(ranked, FullSpeed);
  ranked = MergeSameStepSchedules(std::move(ranked));
  if (ranked.size() > static_cast<size_t>(std::max(0, options.top_k)))
    ranked.resize(static_cast<size_t>(std::max(0, options.top_k)));
  r.top = std::move(ranked);
  // How far the analytic ranking was from the full projection on the answer's rows.
  std::vector<double> errors;
  for (const SearchEntry& e : r.top) {
    if (e.iteration_time_ms > 0) {
      errors.push_back(std::abs(e.estimated_iteration_ms / e.iteration_time_ms - 1) * 100);
    }
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    r.estimate_error_median_pct = errors[errors.size() / 2];
    r.estimate_error_max_pct = errors.back();
  }
  r.processes = processes;
  r.threads = threads == 0 ? HardwareThreads() : threads;
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  const bool megatron =
      base.framework.empty() || base.framework == "megatron" || base.framework == "megatron_bridge";
  r.assumptions = {
      fmt::format("global batch {} and sequence length {} fixed; precision, fusion and overlap "
                  "settings from the config{}",
                  r.global_batch_size, r.seq_length,
                  base.training.lora.enabled
                      ? fmt::format(", LoRA rank {} with frozen base weights in every layout",
                                    base.training.lora.rank)
                      : std::string()),
      fmt::format("grid: TP divides the GPUs per node; CP powers of two; PP divides the rest; "
                  "EP powers of two and ETP 1 or TP (MoE); sequence parallelism whenever TP > 1; "
                  "{}; {}",
                  megatron ? "optimizer sharding off, distributed or FSDP2"
                           : "parameters, gradients and optimizer state sharded over the "
                             "data-parallel GPUs (FSDP) wherever there are several",
                  base.framework == "torchtitan"
                      ? "layers split as torchtitan splits them (the embedding and the output "
                        "weigh one layer each, the first stages take the remainder)"
                      : fmt::format("layers split evenly, else (one chunk per rank) {} "
                                    "first/last stage layer counts with the middle stages at "
                                    "ceil(layers / PP), or (interleaved chunks) a balanced "
                                    "pipeline_model_parallel_layout with the embedding and the "
                                    "loss counted as layers",
                                    megatron ? "Megatron's" : "balanced")),
      RecomputeAssumption(base.framework),
      fmt::format(
          "ranked by an analytic step time (closed-form pipeline bubble; interleaved, ZB-H1 "
          "and ZB-H2 on uneven stages simulated near the top); the best {} "
          "and those within {:.0f}% of the estimated Pareto front re-run with the full "
          "projection: tokens/s, TFLOP/s and MFU are what `projection performance` "
          "prints, memory what `projection both` prints; on the top {} the analytic "
          "iteration time is {:.1f}% from the full projection's (median; worst {:.1f}%)",
          ShortlistSize(options), kEstimateTolerance * 100, r.top.size(),
          r.estimate_error_median_pct, r.estimate_error_max_pct),
      fmt::format("AT-RISK (above {:.0f}% of HBM) configurations rank after every one that "
                  "fits and are marked (the Pareto front keeps them); OOM ones are pruned",
                  kAtRiskFraction * 100)};
  if (!r.top.empty()) {
    const std::string note =
        BatchLimitNote(r.top.front(), r.global_batch_size, base.cluster.WorldSize());
    if (!note.empty()) r.assumptions.push_back(note);
  }
  if (r.counts.shapes_skipped > 0) {
    r.assumptions.push_back(fmt::format(
        "--time-budget {:g} s: {} layer shapes (TP, CP, EP, ETP, micro-batch, recompute) were "
        "not reached and are not in the ranking",
        options.time_budget_s, r.counts.shapes_skipped));
  }
  return r;
}

Context MakeContext(const Job& base, const SearchOptions& options) {
  return Context{base,
                 options,
                 MakeCollectiveModel(base.cluster, "auto"),
                 EfficiencyTable::Default(base.cluster.gpu),
                 {}};
}

// Filters 1-3 over the given layer shapes, one shape per job on `threads` threads.
Partial EvaluateShapes(const Job& base, const SearchOptions& options,
                       const std::vector<LayerShape>& shapes) {
  Context ctx = MakeContext(base, options);
  std::vector<std::vector<Candidate>> candidates(shapes.size());
  std::vector<Partial> parts(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    candidates[i] = EnumerateCandidates(base, options.space, shapes[i], &parts[i].counts.pruned);
    parts[i].counts.enumerated += parts[i].counts.pruned;
  }
  ctx.runnable = CheckScheduleShapes(base, candidates, options.threads);
  const Clock::time_point start = Clock::now();
  std::atomic<size_t> finished{0};
  std::atomic<int64_t> skipped{0};
  std::mutex progress_mutex;
  ParallelFor(
      shapes.size(),
      [&](size_t i) {
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        if (options.time_budget_s > 0 && elapsed > options.time_budget_s) {
          ++skipped;
        } else {
          EvaluateShape(ctx, candidates[i], parts[i]);
        }
        const size_t done = ++finished;
        if (options.progress) {
          const std::lock_guard<std::mutex> lock(progress_mutex);
          options.progress(done, shapes.size());
        }
      },
      options.threads);
  Partial all = Merge(parts);
  all.counts.shapes_skipped = skipped;
  RefineUnevenEstimates(base, options, ctx, all.survivors);
  return all;
}

void CheckOptions(const Job& base, const SearchOptions& options) {
  if (options.top_k < 1)
    ThrowUserError(fmt::format("--top must be at least 1, got {}", options.top_k));
  if (base.cluster.num_nodes < 1)
    ThrowUserError("projection search needs --target-nodes N (N >= 1)");
  if (base.training.global_batch_size < 1)
    ThrowUserError("projection search needs a global batch size (global_batch_size)");
}

nlohmann::json PartialJson(const Partial& p, SearchObjective objective, size_t shortlist) {
  nlohmann::json j;
  j["counts"] = {p.counts.enumerated, p.counts.invalid,        p.counts.out_of_memory,
                 p.counts.evaluated,  p.counts.shapes_skipped, p.counts.pruned};
  j["survivors"] = nlohmann::json::array();
  // Only what the root can still need: the local shortlist and front.
  for (const SearchEntry& e : Shortlist(p.survivors, objective, shortlist))
    j["survivors"].push_back(SearchEntryJson(e));
  if (p.smallest) j["smallest"] = SearchEntryJson(*p.smallest);
  j["first_invalid"] = p.first_invalid;
  return j;
}

Partial PartialFromJson(const nlohmann::json& j) {
  Partial p;
  const auto& c = j.at("counts");
  p.counts.enumerated = c.at(0).get<int64_t>();
  p.counts.invalid = c.at(1).get<int64_t>();
  p.counts.out_of_memory = c.at(2).get<int64_t>();
  p.counts.evaluated = c.at(3).get<int64_t>();
  p.counts.shapes_skipped = c.at(4).get<int64_t>();
  p.counts.pruned = c.at(5).get<int64_t>();
  for (const auto& e : j.at("survivors")) p.survivors.push_back(SearchEntryFromJson(e));
  if (j.contains("smallest")) p.smallest = SearchEntryFromJson(j.at("smallest"));
  p.first_invalid = j.at("first_invalid").get<std::string>();
  return p;
}

}  // namespace

SearchResult SearchDesignSpace(const Job& base, const SearchOptions& options) {
  const Clock::time_point start = Clock::now();
  CheckOptions(base, options);
  Partial all = EvaluateShapes(base, options, EnumerateLayerShapes(base, options.space));
  return Finish(base, options, std::move(all), start, 1, options.threads);
}

SearchResult SearchDesignSpaceMpi(const Job& base, const SearchOptions& options, bool* is_root) {
  const Clock::time_point start = Clock::now();
  CheckOptions(base, options);
  std::vector<Partial> parts;
  int processes = 1;
  {
    const MpiSession mpi;
    *is_root = mpi.IsRoot();
    processes = mpi.size();
    const std::vector<LayerShape> shapes = EnumerateLayerShapes(base, options.space);
    std::vector<LayerShape> mine;
    for (size_t i = static_cast<size_t>(mpi.rank()); i < shapes.size();
         i += static_cast<size_t>(mpi.size())) {
      mine.push_back(shapes[i]);
    }
    // A failure is reported to process 0 instead of leaving the others waiting.
    nlohmann::json payload;
    try {
      payload = PartialJson(EvaluateShapes(base, options, mine), options.objective,
                            ShortlistSize(options));
    } catch (const std::exception& e) {
      payload = {{"error", e.what()}};
    }
    for (const std::string& part : mpi.GatherToRoot(payload.dump())) {
      const nlohmann::json j = nlohmann::json::parse(part);
      if (j.contains("error")) {
        ThrowUserError(
            fmt::format("MPI process {}: {}", parts.size(), j["error"].get<std::string>()));
      }
      parts.push_back(PartialFromJson(j));
    }
  }
  if (!*is_root) return {};
  return Finish(base, options, Merge(parts), start, processes, options.threads);
}

}  // namespace sextant
