// Per-layer time on one GPU of a job, for one micro-batch: forward, backward split into the
// input-gradient part (B) and the weight-gradient part (W) that zero-bubble schedules move
// around, and the recompute cost. Every pass is broken down into GEMM, attention,
// memory-bound kernels and the communication of the TP, CP and EP groups the layer belongs
// to. Also the embedding, the output head (final norm + LM head + loss), the MTP modules and
// the optimizer step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost/attention_model.h"
#include "cost/collective_model.h"
#include "cost/efficiency_table.h"
#include "cost/gemm_model.h"
#include "cost/memory_bound_model.h"
#include "cost/optimizer_cost.h"
#include "job/job.h"

namespace sextant {

// Seconds per category. Communication fields are what is left exposed after the overlap the
// model assumes (CP ring exchange behind the attention steps, DeepEP behind compute).
struct CostParts {
  double gemm = 0;
  double attention = 0;
  double memory_bound = 0;
  double tp_comm = 0;
  double cp_comm = 0;
  double ep_comm = 0;

  double Compute() const { return gemm + attention + memory_bound; }
  double Communication() const { return tp_comm + cp_comm + ep_comm; }
  double Total() const { return Compute() + Communication(); }
  CostParts& operator+=(const CostParts& o);
};

enum class Pass { kForward, kBackwardInput, kBackwardWeight };

// One collective the layer issues, as it was costed.
struct CommCall {
  std::string what;  // "attention output reduce-scatter", "MoE dispatch all-to-all", ...
  Pass pass = Pass::kForward;
  Collective op = Collective::kAllReduce;
  ParallelDim dim = ParallelDim::kTP;
  int64_t bytes = 0;   // NCCL's per-rank convention (see collective_model.h)
  int count = 1;       // issued this many times in the pass
  double seconds = 0;  // one call, before any overlap
};

struct LayerCost {
  std::string kind;  // "dense", "moe", "embedding", "output", "mtp"
  CostParts forward;
  CostParts backward_input;   // B: activation gradients (and all backward communication)
  CostParts backward_weight;  // W: weight gradients
  CostParts recompute;  // forward work re-run in the backward pass when this layer is recomputed
  // Useful FLOPs of GEMMs and attention (what a profiler would count as hardware FLOPs).
  double flops_forward = 0;
  double flops_backward = 0;
  double flops_recompute = 0;  // of those forward FLOPs, what recomputation re-runs
  // Communication that the overlap assumptions hid (not included in the parts above).
  double hidden_comm_forward = 0;
  double hidden_comm_backward = 0;
  std::vector<CommCall> comms;
  // Trainable LoRA adapter parameters on this GPU (0 without LoRA).
  int64_t lora_params = 0;

  double Forward() const { return forward.Total(); }
  double BackwardInput() const { return backward_input.Total(); }
  double BackwardWeight() const { return backward_weight.Total(); }
  double Backward() const { return BackwardInput() + BackwardWeight(); }
  double Recompute() const { return recompute.Total(); }
};

// Expert capacity of one sequence in MaxText's dense_matmul (layers/moe.py generate_masks):
// int(max(ceil(sequence x top-k / experts) x capacity_factor, capacity_factor)); 0 without a
// positive capacity factor.
int64_t MaxTextExpertCapacity(int64_t sequence, int64_t topk, int64_t experts,
                              double capacity_factor);

// DeepEP's dispatch sends a token over the network once per destination node and fans it out
// to that node's experts over NVLink (DeepEP README, "normal kernels": NVLink-to-RDMA
// forwarding; DeepSeek-V3 report, arXiv 2412.19437, §3.2.2). The network therefore carries
// tokens x (distinct remote nodes) rather than tokens x top-k x (n - r)/n copies. With the k
// experts of a token drawn uniformly (balanced routing) from E spread evenly over the EP
// group's N nodes, a given other node is hit with probability 1 - C(E - E/N, k) / C(E, k).
// Returns the ratio of the two byte counts (1 when the group sits in one node).
// With group-limited routing (`groups` > 0: the experts in `groups` equal groups, in order, a
// token's top-k taken among the experts of `group_topk` groups chosen at random, as forced
// load balancing's random scores choose them) a node is missed when none of the k experts
// falls on it among the chosen groups' experts; groups and nodes must nest (one divides the
// other), else the routing counts as unlimited.
double DeepEpNetworkShare(int64_t experts, int64_t topk, const CommGroup& ep_group,
                          int64_t groups = 0, int64_t group_topk = 0);

// One MoE layer cut where Megatron's combined 1F1B schedule cuts it
// (megatron/core/models/gpt/fine_grained_callables.py): the computation before the dispatch
// all-to-all (attention, norms, router, permutation, shared experts), the experts between
// dispatch and combine, and what follows the combine all-to-all on the communication stream
// (unpermutation, residual). Seconds of one micro-batch.
struct MoeLayerPhases {
  double forward_pre = 0, forward_experts = 0, forward_post = 0;
  double backward_pre = 0;  // input and weight gradients
  double backward_experts_input = 0, backward_experts_weight = 0, backward_post = 0;
  // The EP collectives of each side, expert-TP gather / reduce-scatter included.
  double dispatch_forward = 0, combine_forward = 0, dispatch_backward = 0, combine_backward = 0;
};

// EP all-to-all seconds hidden when the forward of one micro-batch's layer runs beside the
// backward of another's (TransformerLayerSchedulePlan.run, model_chunk_schedule_plan.py):
//   comm stream:    combine bwd      | dispatch fwd -> dispatch bwd             | combine fwd
//   compute stream: pre-dispatch fwd | experts bwd -> [delayed wgrad] -> experts fwd | pre bwd
// Each of the three stages takes its longer side; the experts' forward waits for the dispatch
// forward, the dispatch backward for the experts' input gradient. The saving against running
// the two passes one after the other, at most the all-to-all time.
double CombinedOneFOneBHiddenComm(const MoeLayerPhases& p, bool delay_wgrad_compute);

// Of a pipeline rank's forward (and backward) passes in one iteration, the share the combined
// 1F1B schedule pairs with a pass of another micro-batch: all but the warm-up forwards (one
// more than the schedule's own) and as many cool-down backwards. Rank 0 of Megatron's
// schedules (get_pp_rank_microbatches): p - 1 warm-up passes without interleaving, 2(p - 1) +
// (v - 1)p with v virtual stages; without pipelining, one.
double CombinedOneFOneBPairedShare(int64_t micro_batches, int pp, int vpp);

struct LayerCostOptions {
  // Fraction of the EP all-to-all that DeepEP / Turbo kernels hide behind compute; < 0: by
  // the job's sync-free stage (DeepEpOverlapEfficiency, job/framework_defaults.h).
  double deepep_overlap_efficiency = -1;
};

class LayerCostModel {
 public:
  // `collectives` may be null: communication is still listed (bytes, groups) but costs 0.
  // The model must outlive this object. Throws UserError for inconsistent jobs.
  LayerCostModel(const Job& job, const EfficiencyTable& table, const CollectiveModel* collectives,
                 LayerCostOptions options = {});

  // Transformer layer `layer` (global index, 0-based): dense or MoE per the ModelSpec;
  // sliding-window layers per its period.
  LayerCost TransformerLayer(int64_t layer) const;
  LayerCost Embedding() const;
  LayerCost OutputHead() const;  // final norm + LM head + cross-entropy loss
  // One multi-token-prediction module (DeepSeek-V3): embedding of the shifted tokens, two
  // norms, the 2H -> H projection, one transformer layer and the shared output head.
  LayerCost MtpModule() const;
  OptimizerCost OptimizerStep(int64_t params_updated) const;

  const GemmModel& gemm() const { return gemm_; }
  const AttentionModel& attention() const { return attention_; }
  const MemoryBoundModel& memory_bound() const { return memory_bound_; }
  const Job& job() const { return job_; }

 private:
  class Builder;
  LayerCost Layer(int64_t layer, bool moe) const;

  Job job_;
  EfficiencyTable table_;
  const CollectiveModel* collectives_;
  LayerCostOptions options_;
  GemmModel gemm_;
  AttentionModel attention_;
  MemoryBoundModel memory_bound_;
};

// Whether transformer layer `global_layer`, the `index_in_chunk`-th layer of its model chunk,
// is recomputed: explicit layer ids win; selective recompute applies to every layer; full
// uniform recomputes every layer (in groups of num_layers); full block recomputes the first
// num_layers of each chunk.
bool IsLayerRecomputed(const RecomputeSpec& spec, int64_t global_layer, int64_t index_in_chunk);

}  // namespace sextant
