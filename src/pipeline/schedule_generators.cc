#include "pipeline/schedule_generators.h"

#include "pipeline/schedule_shape_check.h"

namespace sextant {

Schedule GenerateSchedule(ScheduleKind kind, const PipelineShape& shape,
                          const PipelineCosts* costs) {
  switch (kind) {
    case ScheduleKind::kGPipe: return MakeGPipeSchedule(shape);
    case ScheduleKind::k1F1B: return MakeOneFOneBSchedule(shape);
    case ScheduleKind::kInterleaved1F1B: return MakeInterleavedSchedule(shape);
    case ScheduleKind::kZeroBubbleH1: return MakeZeroBubbleH1Schedule(shape);
    case ScheduleKind::kZeroBubbleH2: return MakeZeroBubbleH2Schedule(shape, costs);
    case ScheduleKind::kZeroBubbleHeuristic: return MakeZeroBubbleHeuristicSchedule(shape, costs);
    case ScheduleKind::kZbvFormatted: return MakeZbvFormattedSchedule(shape);
    case ScheduleKind::kZbvGreedyHalf: return MakeZbvGreedySchedule(shape, false);
    case ScheduleKind::kZbvGreedyMin: return MakeZbvGreedySchedule(shape, true);
    case ScheduleKind::kDualPipeV: return MakeDualPipeVSchedule(shape);
  }
  return MakeOneFOneBSchedule(shape);
}

}  // namespace sextant
