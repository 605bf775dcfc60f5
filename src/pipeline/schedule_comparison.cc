#include "pipeline/schedule_comparison.h"

#include "pipeline/schedule_generators.h"
#include "util/error.h"

namespace sextant {
namespace {

int ChunksFor(ScheduleKind kind, const PipelineShape& shape) {
  switch (kind) {
    case ScheduleKind::kInterleaved1F1B: return shape.chunks_per_rank;
    case ScheduleKind::kZbvFormatted:
    case ScheduleKind::kZbvGreedyHalf:
    case ScheduleKind::kZbvGreedyMin:
    case ScheduleKind::kDualPipeV: return 2;
    default: return 1;
  }
}

const PipelineCosts& CostsFor(ScheduleKind kind, const ComparisonCosts& costs) {
  switch (kind) {
    case ScheduleKind::kInterleaved1F1B: return costs.vpp_n;
    case ScheduleKind::kZbvFormatted:
    case ScheduleKind::kZbvGreedyHalf:
    case ScheduleKind::kZbvGreedyMin:
    case ScheduleKind::kDualPipeV: return costs.v_shape;
    default: return costs.vpp1;
  }
}

}  // namespace

std::vector<ScheduleComparisonRow> CompareSchedules(const PipelineShape& shape,
                                                    const ComparisonCosts& costs) {
  std::vector<ScheduleComparisonRow> rows;
  for (ScheduleKind kind : AllScheduleKinds()) {
    ScheduleComparisonRow row;
    row.kind = kind;
    const PipelineCosts& stage_costs = CostsFor(kind, costs);
    if (stage_costs.stages.empty()) {
      row.skipped_because = "no stage costs given for this layout";
      rows.push_back(std::move(row));
      continue;
    }
    PipelineShape own = shape;
    own.chunks_per_rank = ChunksFor(kind, shape);
    try {
      const Schedule schedule = GenerateSchedule(kind, own, &stage_costs);
      row.simulation = SimulatePipeline(schedule, stage_costs);
      row.ran = true;
    } catch (const UserError& e) {
      row.skipped_because = e.what();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

int FastestSchedule(const std::vector<ScheduleComparisonRow>& rows) {
  int best = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].ran) continue;
    if (best < 0 ||
        rows[i].simulation.step_time_s < rows[static_cast<size_t>(best)].simulation.step_time_s) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace sextant
