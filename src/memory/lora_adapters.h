// Trainable parameters of LoRA adapters (job.h LoraSpec): an adapter on a linear layer of
// in -> out features holds A (in x r) and B (r x out), r·(in + out) parameters, counted with
// the in/out widths the layer has on one GPU (its tensor-parallel shard), as Megatron-Bridge's
// ParallelLinearAdapter shards A and B along with the layer it adapts.
#pragma once

#include <cstdint>
#include <vector>

#include "job/job.h"
#include "parallel/sharding.h"

namespace sextant {

// Adapter parameters one GPU holds for transformer layer `layer` (0 without LoRA).
int64_t LoraAdapterParams(const Job& job, int64_t layer);

// The same summed over each pipeline rank's layers (and its MTP modules).
std::vector<int64_t> LoraAdapterParamsPerRank(const Job& job, const ParallelPlan& plan,
                                              StageShape shape = StageShape::kInterleaved);

}  // namespace sextant
