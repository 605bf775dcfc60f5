#include "projection/iteration_communication.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "memory/activation_memory.h"
#include "memory/lora_adapters.h"
#include "parallel/sharding.h"
#include "util/dtype.h"

namespace sextant {

DataParallelCost DataParallelTime(const Job& job, const CollectiveModel& comm,
                                  double backward_window_s, double forward_window_s,
                                  const ModelTimings& t, int64_t micro_batches) {
  DataParallelCost out;
  const ParallelPlan& p = job.parallel;
  const RankParams params = ParamsOnRank(job.model, p, 0);
  // Under LoRA only the adapters have gradients to reduce (and, with the distributed
  // optimizer, updated shards to gather back); FSDP2 still gathers the frozen weights.
  const bool lora = job.training.lora.enabled;
  const RankParams trained =
      lora ? RankParams{LoraAdapterParamsPerRank(job, p).front(), 0, 0} : params;
  const int dp_cp = p.dp * p.cp;
  CommGroup dense = GroupFor(ParallelDim::kDP, p, job.cluster.gpus_per_node);
  dense.size = dp_cp;
  CommGroup expert = GroupFor(ParallelDim::kExpertDP, p, job.cluster.gpus_per_node);
  const double grad_bytes = DTypeBytes(job.training.precision.main_grads);
  const double param_bytes = DTypeBytes(job.training.precision.params);
  auto reduce = [&](int64_t n, const CommGroup& g) {
    if (g.size <= 1 || n == 0) return std::pair<double, double>{0, 0};
    if (p.distributed_optimizer || p.fsdp2) {
      return std::pair<double, double>{
          comm.Time(Collective::kReduceScatter, static_cast<int64_t>(n * grad_bytes), g),
          comm.Time(Collective::kAllGather, static_cast<int64_t>(n * param_bytes), g)};
    }
    return std::pair<double, double>{
        comm.Time(Collective::kAllReduce, static_cast<int64_t>(n * grad_bytes), g), 0.0};
  };
  if (p.fsdp2) {
    // MaxText shards over its fsdp mesh axis and XLA schedules the gathers; the collectives
    // are the same, the name is not PyTorch's.
    const std::string fsdp =
        job.framework == "maxtext"
            ? "FSDP (XLA, MaxText's fsdp mesh axis)"
            : (p.fsdp_replicas > 1
                   ? fmt::format("HSDP (FSDP2 over {} GPUs, gradient shards all-reduced over {} "
                                 "replicas)",
                                 p.FsdpShardGroup(), p.fsdp_replicas)
                   : std::string("FSDP2"));
    // Per layer and micro-batch: all-gather before forward and again before backward,
    // reduce-scatter after backward; prefetching overlaps each with the neighbour's compute.
    // The layers are pipeline rank 0's (all of them without pipeline parallelism): its
    // parameters are the ones gathered.
    std::vector<const PieceTiming*> own;
    for (const VirtualStage& vs : PlaceLayers(job.model, p)) {
      if (vs.pp_rank != 0) continue;
      for (int64_t i = 0; i < vs.num_layers; ++i) {
        const size_t layer = static_cast<size_t>(vs.first_layer + i);
        if (layer < t.layers.size()) own.push_back(&t.layers[layer]);
      }
    }
    const int64_t layers = std::max<int64_t>(1, static_cast<int64_t>(own.size()));
    const int64_t per_layer = params.Total() / layers;
    // HSDP: gathers and reduce-scatters stay inside a shard group (torchtitan's dp_shard mesh
    // dimension, the inner one), whose gradient shards are then all-reduced across the
    // replicas (torch.distributed.fsdp HYBRID_SHARD).
    CommGroup shard = dense;
    shard.size = p.FsdpShardGroup();
    shard.ranks_per_node = std::min(shard.size, dense.ranks_per_node);
    const double ag =
        comm.Time(Collective::kAllGather, static_cast<int64_t>(per_layer * param_bytes), shard);
    const int64_t trained_per_layer = trained.Total() / layers;
    double rs = comm.Time(Collective::kReduceScatter,
                          static_cast<int64_t>(trained_per_layer * grad_bytes), shard);
    if (p.fsdp_replicas > 1) {
      const int64_t stride = int64_t{std::max(1, p.tp)} * shard.size;
      const int64_t per_node = stride >= job.cluster.gpus_per_node
                                   ? 1
                                   : job.cluster.gpus_per_node / std::max<int64_t>(1, stride);
      const CommGroup replicas{p.fsdp_replicas,
                               static_cast<int>(std::min<int64_t>(p.fsdp_replicas, per_node))};
      rs += comm.Time(Collective::kAllReduce,
                      static_cast<int64_t>(trained_per_layer * grad_bytes / shard.size), replicas);
    }
    if (p.pp > 1) {
      // PyTorch's pipeline stages keep the parameters gathered and the gradients unsharded
      // until the last micro-batch's backward (torch/distributed/pipelining/stage.py): one
      // gather per layer in the first forward, one reduce-scatter in the last backward.
      double exposed = ag + rs;  // the first gather and the last scatter cannot be hidden
      for (const PieceTiming* l : own) {
        exposed += std::max(0.0, ag - l->forward_s) + std::max(0.0, rs - l->Backward());
      }
      out.total_s = (ag + rs) * layers;
      out.exposed_s = exposed;
      out.how = fsdp +
                " under pipeline parallelism: per-layer all-gather in the first forward, "
                "reduce-scatter in the last backward, prefetched";
      return out;
    }
    double exposed = ag;  // the first layer's gather cannot be hidden
    for (const PieceTiming* l : own) {
      exposed += std::max(0.0, ag - l->forward_s) + std::max(0.0, ag + rs - l->Backward());
    }
    out.total_s = (2 * ag + rs) * layers * micro_batches;
    out.exposed_s = exposed * micro_batches;
    out.how = fsdp + ": per-layer all-gather (forward, backward) + reduce-scatter, prefetched";
    return out;
  }
  const auto [dense_rs, dense_ag] = reduce(trained.dense, dense);
  const auto [exp_rs, exp_ag] = reduce(trained.expert, expert);
  const double rs = dense_rs + exp_rs, ag = dense_ag + exp_ag;
  out.total_s = rs + ag;
  // Megatron's DDP buckets (at least 40M parameters each): with overlap, only what does not
  // fit under the last micro-batch's backward, and at least the final bucket, is exposed.
  const double buckets = std::max(1.0, std::ceil(trained.Total() / 40e6));
  const double exposed_rs =
      job.training.overlap_grad_reduce ? std::max(rs / buckets, rs - backward_window_s) : rs;
  const double exposed_ag =
      job.training.overlap_param_gather ? std::max(ag / buckets, ag - forward_window_s) : ag;
  out.exposed_s = exposed_rs + exposed_ag;
  out.how = p.distributed_optimizer
                ? "distributed optimizer: reduce-scatter grads + all-gather params"
                : "all-reduce of gradients";
  if (job.training.overlap_grad_reduce) out.how += ", overlapped with backward";
  if (lora) out.how += " (LoRA adapters only)";
  return out;
}

int64_t PipelineHandoffBytes(const Job& job) {
  const int64_t tokens = TokensPerRank(job);
  const int64_t sp = job.parallel.sequence_parallel ? job.parallel.tp : 1;
  return 2 * tokens * job.model.hidden_size / std::max<int64_t>(1, sp);
}

double PipelineHandoffSeconds(const Job& job, const CollectiveModel& comm) {
  if (job.parallel.pp <= 1) return 0.0;
  // Adjacent pipeline ranks are one PP "hop" apart; the group tells whether they share a node.
  const CommGroup pp_group = GroupFor(ParallelDim::kPP, job.parallel, job.cluster.gpus_per_node);
  const CommGroup pair{2, pp_group.ranks_per_node >= 2 ? 2 : 1};
  return comm.Time(Collective::kSendRecv, PipelineHandoffBytes(job), pair);
}

}  // namespace sextant
