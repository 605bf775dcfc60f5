// Event-driven simulation of one pipeline step. Each rank runs its op list in order; an op
// starts when the rank is free and its input has arrived:
//   F(m, s)  after F(m, s-1) on the stage before, plus the transfer across that boundary;
//   B(m, s)  after B(m, s+1) on the stage after (plus transfer), or after F(m, s) on the last
//            stage; BW the same way;
//   W(m, s)  after B(m, s) on the same rank.
// Work is proportional to the number of ops (PP * VPP * m): every op is visited once and a
// blocked rank is resumed only by the op it waits for. An order that can never finish is
// reported as a UserError naming each stuck rank and what it waits for; it never hangs.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/pipeline_costs.h"
#include "pipeline/schedule.h"

namespace sextant {

enum class TimelineEventKind {
  kForward,
  kBackwardInput,
  kBackwardWeight,
  kBackwardCombined,
  kSend,
  kRecv
};

struct TimelineEvent {
  TimelineEventKind kind = TimelineEventKind::kForward;
  int micro_batch = 0;
  int chunk = 0;
  int stage = 0;
  // For kSend/kRecv: the other rank, and whether the payload is a forward activation (true)
  // or a backward gradient (false). -1 / unused for compute.
  int peer_rank = -1;
  bool carries_activation = true;
  double start_s = 0;
  double end_s = 0;
};

struct RankSimulation {
  int rank = 0;
  std::vector<TimelineEvent> timeline;  // compute and transfers, in order of start on each rank
  double end_s = 0;                     // when this rank finished its last op (or send)
  double busy_s = 0;                    // sum of compute durations (F, B, W, BW, recompute)
  double bubble_s = 0;                  // step time - busy: idle, waiting and blocking sends
  double bubble_ratio = 0;              // bubble_s / step time
  int64_t peak_activation_bytes = 0;
  int peak_inflight_chunks = 0;         // (micro-batch, chunk) activations alive at once
  int peak_inflight_micro_batches = 0;  // distinct micro-batches with any activation alive
};

struct PipelineSimulation {
  ScheduleKind kind = ScheduleKind::k1F1B;
  PipelineShape shape;
  double step_time_s = 0;  // max over ranks of end_s
  double max_bubble_ratio = 0;
  int64_t max_peak_activation_bytes = 0;
  std::vector<RankSimulation> ranks;
};

// kStepOnly leaves every rank's timeline empty (the times, bubbles and memory peaks are the
// same): for callers that simulate thousands of candidates and need only the step.
enum class SimulationDetail { kTimeline, kStepOnly };

PipelineSimulation SimulatePipeline(const Schedule& schedule, const PipelineCosts& costs,
                                    SimulationDetail detail = SimulationDetail::kTimeline);

// Time-weighted shares as the analytic formulas state them, for checking and reporting.
// 1F1B / GPipe: bubble / ideal = (PP-1)/m; interleaved: (PP-1)/(VPP*m) (Narayanan et al. 2021).
double AnalyticBubbleFraction(ScheduleKind kind, const PipelineShape& shape);

}  // namespace sextant
