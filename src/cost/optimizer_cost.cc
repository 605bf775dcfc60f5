#include "cost/optimizer_cost.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

std::vector<OptimizerTraffic> OptimizerUpdateTraffic(const PrecisionRecipe& p,
                                                     OptimizerKind optimizer) {
  std::vector<OptimizerTraffic> t;
  t.push_back({"read main grad", DTypeBytes(p.main_grads)});
  t.push_back({"read+write master weight", 2 * DTypeBytes(p.main_params)});
  t.push_back({"read+write exp_avg (momentum)", 2 * DTypeBytes(p.exp_avg)});
  if (optimizer == OptimizerKind::kAdam) {
    t.push_back({"read+write exp_avg_sq", 2 * DTypeBytes(p.exp_avg_sq)});
  }
  // With a master copy wider than the model weights, the step also writes the weights back
  // in their own dtype (Megatron's _copy_main_params_to_model_params).
  if (p.main_params != p.params || p.fp8_param_gather) {
    const DType model = p.fp8_param_gather ? DType::kFP8 : p.params;
    t.push_back({"write model weight", DTypeBytes(model)});
  }
  return t;
}

double OptimizerBytesPerParam(const PrecisionRecipe& precision, OptimizerKind optimizer) {
  double sum = 0;
  for (const OptimizerTraffic& t : OptimizerUpdateTraffic(precision, optimizer)) {
    sum += t.bytes_per_param;
  }
  return sum;
}

OptimizerCost OptimizerStepCost(const GpuSpec& gpu, const EfficiencyTable& table,
                                const PrecisionRecipe& precision, OptimizerKind optimizer,
                                int64_t params_updated, bool clip_grad) {
  if (params_updated < 0) ThrowUserError("optimizer step: negative parameter count");
  if (gpu.hbm_bandwidth <= 0) {
    ThrowUserError(fmt::format("GPU {}: hbm_bandwidth must be positive", gpu.name));
  }
  OptimizerCost c;
  const double n = static_cast<double>(params_updated);
  const double update_bytes = n * OptimizerBytesPerParam(precision, optimizer);
  c.update_seconds =
      update_bytes > 0 ? update_bytes / (gpu.hbm_bandwidth * table.HbmFraction(update_bytes)) : 0;
  double norm_bytes = 0;
  if (clip_grad) {
    norm_bytes = n * DTypeBytes(precision.main_grads);
    c.grad_norm_seconds =
        norm_bytes > 0 ? norm_bytes / (gpu.hbm_bandwidth * table.HbmFraction(norm_bytes)) : 0;
  }
  c.bytes = update_bytes + norm_bytes;
  c.seconds = c.update_seconds + c.grad_norm_seconds;
  return c;
}

}  // namespace sextant
