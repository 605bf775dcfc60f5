#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"
#include "util/error.h"

namespace sextant {
namespace {

// Megatron's virtual-step table: micro-batches are taken in groups of PP; each group runs
// through chunk 0, then chunk 1, ... When fewer than PP micro-batches remain they form the
// last group (Megatron's get_schedule_table with microbatch_group_size_per_vp_stage = PP).
std::vector<std::pair<int, int>> VirtualStepTable(const PipelineShape& shape) {
  const int group = shape.pipeline_ranks;
  const int m = shape.micro_batches;
  std::vector<std::pair<int, int>> table;  // (micro-batch, chunk)
  table.reserve(static_cast<size_t>(m) * shape.chunks_per_rank);
  for (int first = 0; first < m; first += group) {
    const int last = std::min(first + group, m);
    for (int chunk = 0; chunk < shape.chunks_per_rank; ++chunk) {
      for (int mb = first; mb < last; ++mb) table.emplace_back(mb, chunk);
    }
  }
  return table;
}

// With a last group smaller than PP, Megatron's order can contain a cycle: an early rank that
// runs all its forwards first waits for a forward that a later rank only issues after a
// backward the early rank has not run yet. Such an order would hang a real job; say so.
void RequireCompletes(const Schedule& schedule) {
  const PipelineShape& shape = schedule.shape;
  try {
    SimulatePipeline(schedule, UniformCosts(schedule.NumStages(), 1, 2, 0));
  } catch (const UserError&) {
    ThrowUserError(fmt::format(
        "interleaved schedule: with PP {}, VPP {} and {} micro-batches, Megatron's order "
        "(groups of {} micro-batches, the last one of {}) cannot complete: a rank would wait "
        "forever; use a multiple of {} micro-batches",
        shape.pipeline_ranks, shape.chunks_per_rank, shape.micro_batches, shape.pipeline_ranks,
        shape.micro_batches % shape.pipeline_ranks, shape.pipeline_ranks));
  }
}

}  // namespace

Schedule MakeInterleavedSchedule(const PipelineShape& shape) {
  const ScheduleKind kind = ScheduleKind::kInterleaved1F1B;
  RequireAtLeastTwoChunks(kind, shape);
  RequireMicroBatchesAtLeast(kind, shape, shape.pipeline_ranks,
                             "Megatron's interleaved schedule needs one per pipeline rank");
  Schedule schedule = EmptySchedule(kind, shape, StageShape::kInterleaved);
  const auto table = VirtualStepTable(shape);
  const int total = static_cast<int>(table.size());
  const int pp = shape.pipeline_ranks;
  const int vpp = shape.chunks_per_rank;
  for (int rank = 0; rank < pp; ++rank) {
    auto& ops = schedule.ops_per_rank[static_cast<size_t>(rank)];
    ops.reserve(static_cast<size_t>(total) * 2);
    // Megatron: (PP - rank - 1) * 2 + (VPP - 1) * group forwards before the first backward.
    const int warmup = std::min((pp - rank - 1) * 2 + (vpp - 1) * pp, total);
    auto forward = [&](int k) {
      ops.push_back({OpKind::kForward, table[static_cast<size_t>(k)].first,
                     table[static_cast<size_t>(k)].second});
    };
    // Backward visits the chunks in reverse: the last chunk's gradients come back first.
    auto backward = [&](int k) {
      ops.push_back({OpKind::kBackwardCombined, table[static_cast<size_t>(k)].first,
                     vpp - 1 - table[static_cast<size_t>(k)].second});
    };
    for (int k = 0; k < warmup; ++k) forward(k);
    for (int k = 0; k < total - warmup; ++k) {
      forward(warmup + k);
      backward(k);
    }
    for (int k = total - warmup; k < total; ++k) backward(k);
  }
  if (shape.micro_batches % pp != 0) RequireCompletes(schedule);
  return schedule;
}

}  // namespace sextant
