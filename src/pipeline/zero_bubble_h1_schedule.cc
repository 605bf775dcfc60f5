#include <algorithm>

#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"

namespace sextant {

Schedule MakeZeroBubbleH1Schedule(const PipelineShape& shape) {
  const ScheduleKind kind = ScheduleKind::kZeroBubbleH1;
  RequireChunksPerRank(kind, shape, 1);
  Schedule schedule = EmptySchedule(kind, shape, StageShape::kInterleaved);
  const int m = shape.micro_batches;
  for (int rank = 0; rank < shape.pipeline_ranks; ++rank) {
    auto& ops = schedule.ops_per_rank[static_cast<size_t>(rank)];
    ops.reserve(static_cast<size_t>(m) * 3);
    const int warmup = std::min(shape.pipeline_ranks - rank - 1, m);
    int forwards = 0;
    int inputs = 0;
    int weights = 0;
    while (forwards < warmup) ops.push_back({OpKind::kForward, forwards++, 0});
    // Steady state: F, B, and from the (rank+1)-th step on a W, so rank r keeps r weight
    // gradients in hand to fill the cool-down bubble that 1F1B leaves on it.
    while (forwards < m) {
      ops.push_back({OpKind::kForward, forwards++, 0});
      ops.push_back({OpKind::kBackwardInput, inputs++, 0});
      if (inputs > rank) ops.push_back({OpKind::kBackwardWeight, weights++, 0});
    }
    while (inputs < m) {
      ops.push_back({OpKind::kBackwardInput, inputs++, 0});
      ops.push_back({OpKind::kBackwardWeight, weights++, 0});
    }
    while (weights < m) ops.push_back({OpKind::kBackwardWeight, weights++, 0});
  }
  return schedule;
}

}  // namespace sextant
