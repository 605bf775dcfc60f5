// The LoRA adapters (job.h LoraSpec, job/lora_adapter.h) of each transformer layer: which of
// its linear layers are adapted, their trainable parameters on one GPU and the activations the
// adapters keep beyond what the frozen layers would.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "job/job.h"
#include "job/lora_adapter.h"
#include "parallel/sharding.h"

namespace sextant {

// Adapter parameters one GPU holds for transformer layer `layer` (0 without LoRA).
int64_t LoraAdapterParams(const Job& job, int64_t layer);

// Bytes the adapters of `layer` store per micro-batch beyond full fine-tuning's activations:
// the 1-byte dropout mask of each adapter input when lora.dropout > 0 before A, and, with
// sequence parallelism, the whole-sequence input each adapter beside a column-parallel or
// replicated layer gathers and keeps for A's weight gradient where the frozen layer would
// keep its 1/TP shard (ParallelLinearAdapter.forward: gather_from_sequence_parallel_region).
int64_t LoraActivationBytes(const Job& job, int64_t layer);

// Adapter parameters summed over each pipeline rank's layers, its LM head when targeted
// (output_layer) and its MTP modules.
std::vector<int64_t> LoraAdapterParamsPerRank(const Job& job, const ParallelPlan& plan,
                                              StageShape shape = StageShape::kInterleaved);

}  // namespace sextant
