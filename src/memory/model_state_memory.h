// Bytes of weights, gradients and optimizer state held by one GPU (the "model state").
//
// Megatron mixed precision (Megatron-LM theoretical_memory_usage.py; Rajbhandari et al. 2020,
// ZeRO §3): BF16 weights (2 B) + FP32 main gradients (4 B) + FP32 master weights and two Adam
// moments (12 B) = 18 B/param; the distributed optimizer shards the 12 B over the data-parallel
// group including context-parallel ranks (6 + 12/DP). Expert parameters shard over the
// expert-data-parallel group instead. FSDP2 / ZeRO-3 keeps only FP32 shards of the weights,
// gradients and moments. Muon and SGD keep one moment instead of two. Precision-aware
// optimizers may store master weights and moments in 16 bits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job/job.h"
#include "parallel/sharding.h"

namespace sextant {

struct ModelStateMemory {
  int64_t params_bytes = 0;
  int64_t grads_bytes = 0;
  int64_t optimizer_bytes = 0;  // master weights + moments
  int64_t Total() const { return params_bytes + grads_bytes + optimizer_bytes; }
};

// Data-parallel shard count of the dense optimizer state: DP x CP (Megatron reduces gradients
// and shards the distributed optimizer over the combined data+context parallel group).
int DenseOptimizerShards(const ParallelPlan& plan);

// Parameters the optimizer step updates on one GPU of the busiest pipeline rank: its shard
// under the distributed optimizer or FSDP2, everything it holds otherwise. Under LoRA only the
// adapters train.
int64_t OptimizerParamsPerGpu(const Job& job);

// `lora_adapters`: trainable LoRA parameters on this GPU (memory/lora_adapters.h). With LoRA
// on, `params` are frozen: Megatron's DDP and distributed optimizer build main-gradient buffers
// and optimizer shards only for parameters that require gradients, so a frozen parameter costs
// its weight alone, and the adapters carry the full mixed-precision state.
ModelStateMemory ModelStateBytes(const Job& job, const RankParams& params,
                                 int64_t lora_adapters = 0);

// Bytes per parameter for reporting ("18", "6 + 12/8 = 7.5").
double BytesPerDenseParam(const Job& job);

}  // namespace sextant
