// Shared argument checks of the schedule generators, so every schedule words its
// requirements the same way.
#pragma once

#include "pipeline/schedule.h"

namespace sextant {

// PP, VPP and micro-batches must be positive and the problem small enough to simulate.
void CheckShapeBasics(ScheduleKind kind, const PipelineShape& shape);
void RequireChunksPerRank(ScheduleKind kind, const PipelineShape& shape, int vpp);
void RequireAtLeastTwoChunks(ScheduleKind kind, const PipelineShape& shape);
void RequireMicroBatchesAtLeast(ScheduleKind kind, const PipelineShape& shape, int minimum,
                                const char* why);
// An empty schedule of `kind` with one op list per rank.
Schedule EmptySchedule(ScheduleKind kind, const PipelineShape& shape, StageShape placement);

}  // namespace sextant
