#include "memory/model_state_memory.h"

#include <algorithm>
#include <cmath>

#include "memory/lora_adapters.h"

namespace sextant {
namespace {

double MomentBytes(const Job& job) {
  const PrecisionRecipe& pr = job.training.precision;
  switch (job.training.optimizer) {
    case OptimizerKind::kAdam: return DTypeBytes(pr.exp_avg) + DTypeBytes(pr.exp_avg_sq);
    case OptimizerKind::kMuon:
    case OptimizerKind::kSgd: return DTypeBytes(pr.exp_avg);  // one momentum buffer
  }
  return 0;
}

// Master weights exist only when the training dtype differs from the master dtype.
double MasterBytes(const Job& job) {
  const PrecisionRecipe& pr = job.training.precision;
  return pr.params == pr.main_params ? 0.0 : DTypeBytes(pr.main_params);
}

// Megatron's FP16 optimizer copies gradients kept below the master dtype into FP32 gradients
// of the master weights before the step (main_param.grad = main_grad.float()): the 4 extra
// bytes of Megatron's "fp16 param, fp16 grads: 20 / 4 + 16/d" row (docs distrib_optimizer.md).
double GradCopyBytes(const PrecisionRecipe& pr) {
  if (pr.precision_aware_optimizer) return 0.0;
  return DTypeBytes(pr.main_grads) < DTypeBytes(pr.main_params) ? DTypeBytes(pr.main_params) : 0.0;
}

struct PerParam {
  double params, grads, optimizer;
};

PerParam BytesPerParam(const Job& job, int shards) {
  const PrecisionRecipe& pr = job.training.precision;
  const double s = std::max(1, shards);
  if (job.parallel.fsdp2) {
    // ZeRO-3: the FP32 shard is both the master copy and what is all-gathered (cast to the
    // compute dtype on the fly); gradients are reduce-scattered into FP32 shards.
    const double master = DTypeBytes(pr.main_params);
    return {master / s, DTypeBytes(pr.main_grads) / s, MomentBytes(job) / s};
  }
  const double weight = pr.fp8_param_gather ? 1.0 : DTypeBytes(pr.params);
  double opt = MasterBytes(job) + MomentBytes(job) + GradCopyBytes(pr);
  if (job.parallel.distributed_optimizer) opt /= s;
  return {weight, DTypeBytes(pr.main_grads), opt};
}

}  // namespace

int DenseOptimizerShards(const ParallelPlan& plan) {
  return plan.fsdp2 ? plan.FsdpShardGroup() : std::max(1, plan.dp * plan.cp);
}

int64_t OptimizerParamsPerGpu(const Job& job) {
  const bool sharded = job.parallel.distributed_optimizer || job.parallel.fsdp2;
  int64_t most = 0;
  if (job.training.lora.enabled) {
    for (int64_t adapters : LoraAdapterParamsPerRank(job, job.parallel)) {
      most = std::max(most, sharded ? adapters / DenseOptimizerShards(job.parallel) : adapters);
    }
    return most;
  }
  for (const RankParams& p : ParamsPerRank(job.model, job.parallel)) {
    int64_t owned = p.Total();
    if (sharded) {
      owned = p.dense / DenseOptimizerShards(job.parallel) +
              p.expert / job.parallel.ExpertDataParallel();
    }
    most = std::max(most, owned);
  }
  return most;
}

ModelStateMemory ModelStateBytes(const Job& job, const RankParams& params, int64_t lora_adapters) {
  const PerParam dense = BytesPerParam(job, DenseOptimizerShards(job.parallel));
  const PerParam expert = BytesPerParam(job, job.parallel.ExpertDataParallel());
  const double nd = static_cast<double>(params.dense);
  const double ne = static_cast<double>(params.expert);
  ModelStateMemory m;
  if (job.training.lora.enabled) {
    const double na = static_cast<double>(lora_adapters);
    m.params_bytes = std::llround(nd * dense.params + ne * expert.params + na * dense.params);
    m.grads_bytes = std::llround(na * dense.grads);
    m.optimizer_bytes = std::llround(na * dense.optimizer);
    return m;
  }
  m.params_bytes = std::llround(nd * dense.params + ne * expert.params);
  m.grads_bytes = std::llround(nd * dense.grads + ne * expert.grads);
  m.optimizer_bytes = std::llround(nd * dense.optimizer + ne * expert.optimizer);
  return m;
}

double BytesPerDenseParam(const Job& job) {
  const PerParam p = BytesPerParam(job, DenseOptimizerShards(job.parallel));
  return p.params + p.grads + p.optimizer;
}

}  // namespace sextant
