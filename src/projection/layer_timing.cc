#include "projection/layer_timing.h"

#include <fmt/format.h>

#include "cost/collective_model.h"
#include "cost/efficiency_table.h"
#include "cost/layer_cost.h"
#include "memory/model_state_memory.h"
#include "parallel/sharding.h"

namespace sextant {
namespace {

PieceTiming ToTiming(const LayerCost& c, bool recomputed) {
  PieceTiming t;
  t.type = c.kind;
  t.forward_s = c.Forward();
  t.backward_input_s = c.BackwardInput();
  t.backward_weight_s = c.BackwardWeight();
  t.recompute_s = recomputed ? c.Recompute() : 0.0;
  t.tp_comm_s = c.forward.tp_comm + c.backward_input.tp_comm + c.backward_weight.tp_comm;
  t.cp_comm_s = c.forward.cp_comm + c.backward_input.cp_comm + c.backward_weight.cp_comm;
  t.ep_comm_s = c.forward.ep_comm + c.backward_input.ep_comm + c.backward_weight.ep_comm;
  return t;
}

}  // namespace

ModelTimings ComputeModelTimings(const Job& job) {
  const auto collectives = MakeCollectiveModel(job.cluster, "auto");
  const EfficiencyTable table = EfficiencyTable::Default(job.cluster.gpu);
  const LayerCostModel model(job, table, collectives.get());
  ModelTimings out;
  const auto stages = PlaceLayers(job.model, job.parallel);
  out.layers.resize(job.model.num_layers);
  for (const auto& vs : stages) {
    for (int64_t i = 0; i < vs.num_layers; ++i) {
      const int64_t layer = vs.first_layer + i;
      out.layers[layer] = ToTiming(model.TransformerLayer(layer),
                                   IsLayerRecomputed(job.training.recompute, layer, i));
    }
  }
  out.embedding = ToTiming(model.Embedding(), false);
  out.output = ToTiming(model.OutputHead(), false);
  if (job.model.mtp_num_layers > 0) out.mtp = ToTiming(model.MtpModule(), false);
  // The optimizer updates what this GPU owns: its shard under the distributed optimizer or
  // FSDP2, everything it holds otherwise. The largest pipeline rank decides.
  int64_t most = 0;
  for (int r = 0; r < job.parallel.pp; ++r) {
    const RankParams p = ParamsOnRank(job.model, job.parallel, r);
    int64_t owned = p.Total();
    if (job.parallel.distributed_optimizer || job.parallel.fsdp2) {
      owned = p.dense / DenseOptimizerShards(job.parallel) +
              p.expert / job.parallel.ExpertDataParallel();
    }
    most = std::max(most, owned);
  }
  out.optimizer_step_s = model.OptimizerStep(most).seconds;
  out.assumptions.push_back(fmt::format(
      "layer times: analytical GEMM (tile/wave quantisation, roofline), flash-attention and "
      "memory-bound models with the {} efficiency table",
      job.cluster.gpu.name));
  return out;
}

}  // namespace sextant
