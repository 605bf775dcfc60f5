// `all`: every schedule that can serve a pipeline shape, simulated with the same costs, so they
// can be ranked side by side. Schedules that cannot serve the shape are listed with the reason.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline_costs.h"
#include "pipeline/pipeline_simulator.h"
#include "pipeline/schedule.h"

namespace sextant {

struct ScheduleComparisonRow {
  ScheduleKind kind = ScheduleKind::k1F1B;
  bool ran = false;
  std::string skipped_because;    // the generator's error when it cannot serve the shape
  PipelineSimulation simulation;  // valid when ran
};

// Schedules need specific layouts (1F1B one chunk per rank, ZBV two in a V), and a layout
// changes which layers form a stage, so the caller gives the stage costs of each layout it
// wants compared; an empty PipelineCosts skips that layout. `shape.chunks_per_rank` is the
// VPP of the interleaved schedule.
struct ComparisonCosts {
  PipelineCosts vpp1;     // PP stages: GPipe, 1F1B, ZB-H1, ZB-H2, zero-bubble heuristic
  PipelineCosts vpp_n;    // PP*VPP stages: interleaved
  PipelineCosts v_shape;  // 2*PP stages: ZBV and DualPipeV
};

std::vector<ScheduleComparisonRow> CompareSchedules(const PipelineShape& shape,
                                                    const ComparisonCosts& costs);

// Index of the fastest row that ran, or -1 when none did.
int FastestSchedule(const std::vector<ScheduleComparisonRow>& rows);

}  // namespace sextant
