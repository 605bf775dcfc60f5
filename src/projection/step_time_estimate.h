// A fast, analytic iteration time for ranking many candidate configurations (projection
// search): the pipeline step from the closed-form bubble of each schedule instead of the
// event simulation, plus data-parallel communication and the optimizer step as the full
// projection charges them. Microseconds instead of milliseconds; the search re-runs the
// full ProjectPerformance on the best candidates, so these numbers are never printed.
#pragma once

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
//   ZB-H2:       m t + (PP - 1)(F + R + B - 2W), at least m t + the simulator's unit-cost
//                bubble for the shape (its 2 PP - 1 in-flight cap) x the slowest stage's mean op
//   ZBV:         m t_rank + (PP - 1)(F + R + B - 2W) of the slowest chunk
//   DualPipeV:   m t_rank + (PP/2 - 1)(F + R + 2B - 3W) of the slowest chunk
//   ZBV greedy-half / greedy-min (memory-limited, no closed form): m t_rank + the bubble the
//     simulator gives the same (PP, m) with every op 1 (`uniform_bubble`, in ops) times the
//     slowest chunk's mean op (F + R + B + W) / 3
// plus 2 (PP - 1) P2P hops for the fill and the drain; never less than the critical path.
StepEstimate EstimateIteration(const Job& job, ScheduleKind schedule, const ModelTimings& timings,
                               const CollectiveModel& comm, const EfficiencyTable& table,
                               double in_training_efficiency, double uniform_bubble = 0);

// Idle time of the busiest rank, in ops, when `schedule` runs (PP, chunks, m) with every F, B
// and W taking 1: the step minus m x chunks x 3. Throws UserError when the shape cannot run.
double UniformBubble(ScheduleKind schedule, int pp, int chunks, int micro_batches);

}  // namespace sextant
