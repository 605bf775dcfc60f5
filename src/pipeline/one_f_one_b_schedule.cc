#include <algorithm>

#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"

namespace sextant {

Schedule MakeOneFOneBSchedule(const PipelineShape& shape) {
  RequireChunksPerRank(ScheduleKind::k1F1B, shape, 1);
  Schedule schedule = EmptySchedule(ScheduleKind::k1F1B, shape, StageShape::kInterleaved);
  const int m = shape.micro_batches;
  for (int rank = 0; rank < shape.pipeline_ranks; ++rank) {
    auto& ops = schedule.ops_per_rank[static_cast<size_t>(rank)];
    ops.reserve(static_cast<size_t>(m) * 2);
    // Earlier ranks start more forwards so the last rank never waits for its first input.
    const int warmup = std::min(shape.pipeline_ranks - rank - 1, m);
    int forwards = 0;
    int backwards = 0;
    while (forwards < warmup) ops.push_back({OpKind::kForward, forwards++, 0});
    while (forwards < m) {
      ops.push_back({OpKind::kForward, forwards++, 0});
      ops.push_back({OpKind::kBackwardCombined, backwards++, 0});
    }
    while (backwards < m) ops.push_back({OpKind::kBackwardCombined, backwards++, 0});
  }
  return schedule;
}

}  // namespace sextant
