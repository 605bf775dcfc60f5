#include "pipeline/schedule_shape_check.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

// Bounds the op count (PP * VPP * m * 3) well below what fits in memory and int indices.
constexpr int64_t kMaxOpsPerStep = int64_t{1} << 26;

void CheckShapeBasics(ScheduleKind kind, const PipelineShape& shape) {
  if (shape.pipeline_ranks < 1 || shape.chunks_per_rank < 1 || shape.micro_batches < 1) {
    ThrowUserError(fmt::format(
        "{} schedule: PP ({}), VPP ({}) and micro-batches ({}) must all "
        "be at least 1",
        ScheduleKindName(kind), shape.pipeline_ranks, shape.chunks_per_rank, shape.micro_batches));
  }
  const int64_t ops =
      int64_t{shape.pipeline_ranks} * shape.chunks_per_rank * shape.micro_batches * 3;
  if (ops > kMaxOpsPerStep) {
    ThrowUserError(fmt::format(
        "{} schedule: PP {} x VPP {} x {} micro-batches is too large to simulate (micro-batches "
        "per iteration = global_batch_size / (micro_batch_size x DP); at most {} operations)",
        ScheduleKindName(kind), shape.pipeline_ranks, shape.chunks_per_rank, shape.micro_batches,
        kMaxOpsPerStep));
  }
}

void RequireChunksPerRank(ScheduleKind kind, const PipelineShape& shape, int vpp) {
  CheckShapeBasics(kind, shape);
  if (shape.chunks_per_rank != vpp) {
    ThrowUserError(
        fmt::format("{} schedule needs VPP (virtual stages per pipeline rank) = {}, "
                    "got {}",
                    ScheduleKindName(kind), vpp, shape.chunks_per_rank));
  }
}

void RequireAtLeastTwoChunks(ScheduleKind kind, const PipelineShape& shape) {
  CheckShapeBasics(kind, shape);
  if (shape.chunks_per_rank < 2) {
    ThrowUserError(
        fmt::format("{} schedule needs VPP (virtual stages per pipeline rank) >= 2, "
                    "got {}; use 1f1b for VPP 1",
                    ScheduleKindName(kind), shape.chunks_per_rank));
  }
}

void RequireMicroBatchesAtLeast(ScheduleKind kind, const PipelineShape& shape, int minimum,
                                const char* why) {
  if (shape.micro_batches < minimum) {
    ThrowUserError(fmt::format("{} schedule needs at least {} micro-batches ({}), got {}",
                               ScheduleKindName(kind), minimum, why, shape.micro_batches));
  }
}

Schedule EmptySchedule(ScheduleKind kind, const PipelineShape& shape, StageShape placement) {
  Schedule schedule;
  schedule.kind = kind;
  schedule.shape = shape;
  schedule.placement = placement;
  schedule.ops_per_rank.resize(static_cast<size_t>(shape.pipeline_ranks));
  return schedule;
}

}  // namespace sextant
