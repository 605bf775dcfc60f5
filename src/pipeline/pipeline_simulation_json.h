// Machine-readable summary of a simulated step, with stable keys for `--json` output:
// {"schedule", "pp", "vpp", "micro_batches", "step_time_ms", "max_bubble_ratio",
//  "max_peak_activation_bytes", "ranks": [{"rank", "end_ms", "busy_ms", "bubble_ms",
//  "bubble_ratio", "peak_activation_bytes", "peak_inflight_chunks",
//  "peak_inflight_micro_batches"}]}
// With `with_timeline`, every rank also gets "timeline": [{"op", "micro_batch", "chunk",
// "stage", "start_ms", "end_ms"}] (op: F, B, W, BW, send, recv; transfers add "peer_rank"
// and "payload").
#pragma once

#include <nlohmann/json.hpp>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/schedule_comparison.h"

namespace sextant {

nlohmann::json SimulationToJson(const PipelineSimulation& simulation, bool with_timeline = false);
// `all`: {"schedules": [{"schedule", "ran", "skipped_because"?, ...summary}], "fastest"}.
nlohmann::json ComparisonToJson(const std::vector<ScheduleComparisonRow>& rows);

}  // namespace sextant
