// Schedule generators: each turns a pipeline shape into every rank's ordered op list.
// Requests a schedule cannot serve (wrong VPP, too few micro-batches) are UserErrors that say
// what the schedule needs.
#pragma once

#include "pipeline/pipeline_costs.h"
#include "pipeline/schedule.h"

namespace sextant {

// GPipe (Huang et al. 2019): all forwards, then all backwards. VPP must be 1.
Schedule MakeGPipeSchedule(const PipelineShape& shape);
// 1F1B / PipeDream-flush (Narayanan et al. 2021): rank r runs PP-r-1 warm-up forwards, then
// alternates one forward and one backward. VPP must be 1.
Schedule MakeOneFOneBSchedule(const PipelineShape& shape);
// Megatron-LM's interleaved 1F1B (megatron/core/pipeline_parallel/schedules.py): micro-batches
// advance in groups of PP through the chunks; needs VPP >= 2 and at least PP micro-batches (a
// last group smaller than PP is allowed, as in Megatron).
Schedule MakeInterleavedSchedule(const PipelineShape& shape);
// ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism"): 1F1B with split backward; rank r
// delays its weight gradients by r steps, which fills the cool-down bubble while keeping
// 1F1B's PP in-flight micro-batches. VPP must be 1.
Schedule MakeZeroBubbleH1Schedule(const PipelineShape& shape);
// ZB-H2 and the zero-bubble heuristic: the ZB paper's greedy list scheduler (Qi et al. 2024
// section 3.1). Every rank, when free, runs a ready B first, else a ready F while the
// activation limit allows, else a pending W; it idles only when none is possible. ZB-H2 uses a
// limit of 2*PP-1 in-flight micro-batches; the heuristic has no limit unless `max_inflight` > 0.
// The greedy follows `costs` (uniform F=B=W when null). VPP must be 1.
Schedule MakeZeroBubbleH2Schedule(const PipelineShape& shape, const PipelineCosts* costs);
Schedule MakeZeroBubbleHeuristicSchedule(const PipelineShape& shape, const PipelineCosts* costs,
                                         int max_inflight = 0);
// ZBV (Qi et al. 2024, V-shape, "formatted" order as the ZB reference implementation writes
// it): VPP must be 2 and micro-batches >= 2*PP-1.
Schedule MakeZbvFormattedSchedule(const PipelineShape& shape);
// ZBV with controllable memory (Qi et al. 2024, "Pipeline Parallelism with Controllable
// Memory"): V-Half keeps about half, V-Min about a third of ZBV's activations. VPP must be 2.
Schedule MakeZbvGreedySchedule(const PipelineShape& shape, bool min_memory);
// DualPipeV (DeepSeek, the V-shape "cut-in-half" DualPipe): VPP must be 2 and micro-batches
// >= 2*PP. Its overlapped forward+backward pairs are ordered forward first: the overlap hides
// expert-parallel communication, which is not part of these costs.
Schedule MakeDualPipeVSchedule(const PipelineShape& shape);

// Dispatches on `kind`; `costs` feeds the cost-aware greedy schedules and may be null.
Schedule GenerateSchedule(ScheduleKind kind, const PipelineShape& shape,
                          const PipelineCosts* costs = nullptr);

}  // namespace sextant
