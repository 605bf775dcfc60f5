// Communication an iteration pays outside the layers: the data-parallel gradient reduction
// and parameter gathering, and the pipeline's stage-to-stage hand-off. The full projection
// (performance_model) and the search's analytic estimate (step_time_estimate) both charge
// these, so they are defined once here.
#pragma once

#include <cstdint>
#include <string>

#include "cost/collective_model.h"
#include "job/job.h"
#include "projection/layer_timing.h"

namespace sextant {

struct DataParallelCost {
  double total_s = 0;
  double exposed_s = 0;
  std::string how;
};

// Gradient reduction and parameter gathering over the data-parallel group of pipeline rank 0
// (Megatron DDP / distributed optimizer: reduce-scatter grads + all-gather params; plain DDP:
// all-reduce; FSDP2: per-layer all-gather in forward and backward + reduce-scatter). The
// windows are the backward / forward time of one micro-batch on rank 0 that overlapped
// reduction can hide under.
DataParallelCost DataParallelTime(const Job& job, const CollectiveModel& comm,
                                  double backward_window_s, double forward_window_s,
                                  const ModelTimings& t, int64_t micro_batches);

// Bytes handed from one pipeline stage to the next for one micro-batch: the hidden state,
// sequence-sharded under SP (Megatron scatters it before the send) and split by CP.
int64_t PipelineHandoffBytes(const Job& job);

// One hand-off between neighbouring pipeline ranks (intra- or inter-node as the PP group
// lies); 0 without pipeline parallelism.
double PipelineHandoffSeconds(const Job& job, const CollectiveModel& comm);

}  // namespace sextant
