// Time of one optimizer step on one GPU. The update kernels (Megatron's / Apex's fused
// multi-tensor Adam) stream every optimizer-state tensor once, so the step is memory-bound:
// bytes touched per parameter x parameters updated / achievable HBM bandwidth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/efficiency_table.h"
#include "hardware/gpu_spec.h"
#include "job/job.h"

namespace sextant {

struct OptimizerTraffic {
  std::string what;  // "read main grad", "read+write exp_avg", ...
  double bytes_per_param = 0;
};

// HBM bytes per updated parameter, item by item, for the precision recipe:
//   Adam: read main grad; read + write master weight; read + write exp_avg and exp_avg_sq;
//         write the model-dtype weight copy when the master is a separate, wider tensor.
//   SGD (momentum) and Muon: the same without exp_avg_sq.
// Megatron's default (BF16 weights, FP32 main grads, master and moments) gives
// 4 + 8 + 8 + 8 + 2 = 30 B/param, Primus's constant (research/primus-projection.md §4.2).
std::vector<OptimizerTraffic> OptimizerUpdateTraffic(const PrecisionRecipe& precision,
                                                     OptimizerKind optimizer);
double OptimizerBytesPerParam(const PrecisionRecipe& precision, OptimizerKind optimizer);

struct OptimizerCost {
  double seconds = 0;
  double update_seconds = 0;     // the fused update over the parameters this GPU owns
  double grad_norm_seconds = 0;  // gradient-norm pass for clipping over the grads it owns
  double bytes = 0;
};

// `params_updated` is what this GPU's optimizer owns: all of its parameters without the
// distributed optimizer, 1/DP of them with it (the sharding engine decides). Gradient
// clipping (Megatron's default clip_grad = 1.0) reads each owned main grad once more.
OptimizerCost OptimizerStepCost(const GpuSpec& gpu, const EfficiencyTable& table,
                                const PrecisionRecipe& precision, OptimizerKind optimizer,
                                int64_t params_updated, bool clip_grad = true);

}  // namespace sextant
