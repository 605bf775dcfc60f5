// torch.distributed.pipelining's schedule classes, as torchtitan's
// parallelism.pipeline_parallel_schedule names them (get_schedule_class), and the schedule
// Sextant simulates for each: one table for reading a torchtitan job, for the schedules the
// search offers a torchtitan job, and for writing its answer back in torchtitan's names.
#pragma once

#include <string_view>
#include <vector>

#include <cstdint>
#include <string>

#include "parallel/schedule_kind.h"

namespace sextant {

struct TorchTitanSchedule {
  std::string_view name;
  ScheduleKind simulated;
  bool multi_stage;  // a PipelineScheduleMulti: two stages per rank by default, at least two
  // Simulated by the nearest schedule Sextant has (InterleavedZeroBubble: the looped chunk
  // placement of interleaved 1F1B, without its split backward); never offered by the search.
  bool approximate;
};

const std::vector<TorchTitanSchedule>& TorchTitanSchedules();
// The class of this name, compared without case as get_schedule_class does; null if none.
const TorchTitanSchedule* FindTorchTitanSchedule(std::string_view name);
// The class that runs `kind` itself (not by approximation); null if torchtitan has none.
const TorchTitanSchedule* TorchTitanScheduleFor(ScheduleKind kind);

// torchtitan's split of `layers` over `stages` pipeline stages as a Megatron layout string
// ("Et*8|t*9|t*8|t*7,L"): the embedding weighs `input_weight` layers and the output
// `output_weight` (parallelism.pipeline_parallel_first/last_stage_less_layers, default 1), and
// the first stages take the remainder (distributed/pipeline_parallel.py
// generate_llm_fqn_per_model_part). "" when a stage would get no layer slot or the weights
// exceed a stage's share (torchtitan refuses those).
std::string TorchTitanPipelineLayout(int64_t layers, int64_t stages, int64_t input_weight,
                                     int64_t output_weight);

}  // namespace sextant
