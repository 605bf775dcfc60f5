#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"

namespace sextant {

Schedule MakeGPipeSchedule(const PipelineShape& shape) {
  RequireChunksPerRank(ScheduleKind::kGPipe, shape, 1);
  Schedule schedule = EmptySchedule(ScheduleKind::kGPipe, shape, StageShape::kInterleaved);
  for (auto& ops : schedule.ops_per_rank) {
    ops.reserve(static_cast<size_t>(shape.micro_batches) * 2);
    for (int mb = 0; mb < shape.micro_batches; ++mb) ops.push_back({OpKind::kForward, mb, 0});
    for (int mb = 0; mb < shape.micro_batches; ++mb) {
      ops.push_back({OpKind::kBackwardCombined, mb, 0});
    }
  }
  return schedule;
}

}  // namespace sextant
