#include "pipeline/schedule_shape_check.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

// Bounds the op count (PP * VPP * m * 3) so that one simulated step stays within seconds and
// 1 GiB: the simulator keeps ~100-250 bytes per operation; ZB-H2's greedy placement costs
// ~5 us per operation, every other generator under 1 us (measured on a 2-core VM: 768k
// operations of ZB-H2 in 3.9 s, 1.5M of zbv-greedy in 1.3 s and 330 MB). Real jobs stay far
// below: PP 16 x VPP 8 x 4096 micro-batches is 1.6M operations. At 2^21 operations of each
// schedule, `--pipeline-schedule-algorithm all` takes ~5 s and 0.7 GB.
int64_t MaxOpsPerStep(ScheduleKind kind) {
  return kind == ScheduleKind::kZeroBubbleH2 ? int64_t{1} << 20 : int64_t{1} << 21;
}

void CheckShapeBasics(ScheduleKind kind, const PipelineShape& shape) {
  if (shape.pipeline_ranks < 1 || shape.chunks_per_rank < 1 || shape.micro_batches < 1) {
    ThrowUserError(fmt::format(
        "{} schedule: PP ({}), VPP ({}) and micro-batches ({}) must all "
        "be at least 1",
        ScheduleKindName(kind), shape.pipeline_ranks, shape.chunks_per_rank, shape.micro_batches));
  }
  const int64_t ops =
      int64_t{shape.pipeline_ranks} * shape.chunks_per_rank * shape.micro_batches * 3;
  if (const int64_t most = MaxOpsPerStep(kind); ops > most) {
    ThrowUserError(fmt::format(
        "{} schedule: PP {} x VPP {} x {} micro-batches is too large to simulate (at most {} "
        "micro-batches per iteration at this PP x VPP; micro-batches = global_batch_size / "
        "(micro_batch_size x data-parallel size): lower global_batch_size or raise "
        "micro_batch_size)",
        ScheduleKindName(kind), shape.pipeline_ranks, shape.chunks_per_rank, shape.micro_batches,
        most / (int64_t{shape.pipeline_ranks} * shape.chunks_per_rank * 3)));
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
    ThrowUserError(fmt::format(
        "{} schedule needs at least {} micro-batches ({}), got {} (micro-batches per iteration "
        "= global_batch_size / (micro_batch_size x data-parallel size): raise "
        "global_batch_size, or run on fewer nodes)",
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
