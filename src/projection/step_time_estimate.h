// A fast, analytic iteration time for ranking many candidate configurations (projection
// search): the pipeline step from the closed-form bubble of each schedule instead of the
// event simulation (the zero-bubble H1 / H2 schedules are simulated, memoized per shape), plus
// data-parallel communication and the optimizer step as the full projection charges them.
// Microseconds instead of milliseconds; the search re-runs the full ProjectPerformance on the best
// candidates, so these numbers are never printed.
#pragma once

#include <compare>
#include <cstdint>
#include <map>

#include "cost/collective_model.h"
#include "cost/efficiency_table.h"
#include "job/job.h"
#include "pipeline/schedule.h"
#include "projection/layer_timing.h"

namespace sextant {

struct StepEstimate {
  double step_s = 0;        // pipeline step: steady state + closed-form bubble
  double dp_exposed_s = 0;  // data-parallel collectives not hidden under backward/forward
  double optimizer_s = 0;   // optimizer update on the busiest GPU
  // A closed form was used on uneven stages where UnevenStages::kSimulate would simulate:
  // the step may be off by several percent (see below).
  bool closed_form_on_uneven_stages = false;
  double IterationSeconds() const { return step_s + dp_exposed_s + optimizer_s; }
};

// `timings` must come from ComputeModelTimings on a job with the same TP, CP, EP, ETP,
// micro-batch size, sequence length and recomputation as `job` (its per-layer times do not
// depend on PP, VPP, DP or the schedule, so one set serves all of them). Pipeline formulas
// per micro-batch, with t = F + R + B + W of the slowest stage (Narayanan et al. 2021;
// Qi et al. 2023 for the zero-bubble family; DeepSeek-V3 report for DualPipe):
//   1F1B:        sum of the stage times + (m - 1) t
//   interleaved: (m + (PP - 1) / VPP) t_rank          (t_rank: all chunks of the slowest rank)
//   ZB-H1:       m t + (PP - 1)(F + R + B - W)
//   ZB-H2:       m t + (PP - 1)(F + R + B - 2W)
//   (these three assume equal stages: on uneven ones, one more than 10% lighter than the
//   slowest, they are simulated on the stage costs instead; the closed forms were off by up
//   to 7% there)
//   ZBV:         m t_rank + (PP - 1)(F + R + B - 2W) of the slowest chunk
//   DualPipeV:   m t_rank + (PP/2 - 1)(F + R + 2B - 3W) of the slowest chunk
//   ZBV greedy-half / greedy-min (memory-limited, no closed form): m t_rank + the bubble the
//     simulator gives the same (PP, m) with every op 1 (`uniform_bubble`, in ops) times the
//     slowest chunk's mean op (F + R + B + W) / 3
// plus 2 (PP - 1) P2P hops for the fill and the drain; never less than the critical path.
// Simulated pipeline steps by (schedule, PP, chunks, first / last stage layers, micro-batches):
// with one set of `timings` the stage costs depend on nothing else, so a caller evaluating many
// candidates of one layer shape keeps one memo for them.
struct PipelineStepKey {
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int pp = 0;
  int chunks = 1;  // per rank; the layout is a function of (layers, PP, chunks)
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  int64_t micro_batches = 0;
  auto operator<=>(const PipelineStepKey&) const = default;
};
using PipelineStepMemo = std::map<PipelineStepKey, double>;

// kClosedForm keeps the closed forms everywhere (microseconds; a search's first pass, which
// then refines the flagged candidates near the top), kSimulate simulates where they are off.
enum class UnevenStages { kSimulate, kClosedForm };

StepEstimate EstimateIteration(const Job& job, ScheduleKind schedule, const ModelTimings& timings,
                               const CollectiveModel& comm, const EfficiencyTable& table,
                               double in_training_efficiency, double uniform_bubble = 0,
                               PipelineStepMemo* memo = nullptr,
                               UnevenStages uneven = UnevenStages::kSimulate);

// Idle time of the busiest rank, in ops, when `schedule` runs (PP, chunks, m) with every F, B
// and W taking 1: the step minus m x chunks x 3. Throws UserError when the shape cannot run.
double UniformBubble(ScheduleKind schedule, int pp, int chunks, int micro_batches);

}  // namespace sextant
