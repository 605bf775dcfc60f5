#include "memory/lora_adapters.h"

#include <algorithm>
#include <string_view>

#include "util/units.h"

namespace sextant {
// The linear layers and their per-GPU widths are those of the layer cost model
// (cost/layer_cost.cc LayerCostModel::Layer), which names each one as Megatron does.
int64_t LoraAdapterParams(const Job& job, int64_t layer) {
  const LoraSpec& lora = job.training.lora;
  if (!lora.enabled) return 0;
  const ModelSpec& m = job.model;
  const ParallelPlan& p = job.parallel;
  const int64_t tp = p.tp;
  const int64_t H = m.hidden_size;
  int64_t params = 0;
  auto adapt = [&](std::string_view module, int64_t in, int64_t out) {
    if (lora.Targets(module) && in > 0 && out > 0) params += lora.rank * (in + out);
  };
  const int64_t q_heads = CeilDiv(m.num_attention_heads, tp);
  int64_t attention_out = 0;
  if (m.attention == AttentionType::kMultiLatent) {
    const MlaSpec& a = m.mla;
    const int64_t qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    if (a.q_lora_rank > 0) {
      adapt("linear_q_down_proj", H, a.q_lora_rank);
      adapt("linear_q_up_proj", a.q_lora_rank, q_heads * qk);
    } else {
      adapt("linear_q_proj", H, q_heads * qk);
    }
    adapt("linear_kv_down_proj", H, a.kv_lora_rank + a.qk_pos_emb_head_dim);
    adapt("linear_kv_up_proj", a.kv_lora_rank, q_heads * (a.qk_head_dim + a.v_head_dim));
    attention_out = q_heads * a.v_head_dim;
  } else {
    const ModelSpec::LayerAttention g = m.AttentionOf(layer);
    const int64_t kv_heads = std::max<int64_t>(1, CeilDiv(g.kv_heads, tp));
    adapt("linear_qkv", H, (q_heads + g.kv_tensors * kv_heads) * g.head_dim);
    attention_out = q_heads * g.head_dim;
  }
  adapt("linear_proj", attention_out, H);
  const int64_t gate = m.swiglu ? 2 : 1;
  auto mlp = [&](int64_t ffn, int64_t shards) {
    const int64_t local = CeilDiv(ffn, shards);
    adapt("linear_fc1", H, gate * local);
    adapt("linear_fc2", local, H);
  };
  if (!m.IsMoeLayer(layer)) {
    mlp(m.ffn_hidden_size, tp);
  } else {
    adapt("router", H, m.moe.num_experts);
    mlp(m.moe.ffn_hidden_size, p.etp);  // one adapter shared by the local experts
    if (m.moe.shared_expert_ffn_hidden_size > 0) mlp(m.moe.shared_expert_ffn_hidden_size, tp);
  }
  return params;
}

std::vector<int64_t> LoraAdapterParamsPerRank(const Job& job, const ParallelPlan& plan,
                                              StageShape shape) {
  std::vector<int64_t> out(static_cast<size_t>(plan.pp), 0);
  if (!job.training.lora.enabled) return out;
  for (const VirtualStage& vs : PlaceLayers(job.model, plan, shape)) {
    int64_t& rank = out[static_cast<size_t>(vs.pp_rank)];
    for (int64_t i = 0; i < vs.num_layers; ++i) rank += LoraAdapterParams(job, vs.first_layer + i);
    // An MTP module's transformer layer is the model's last layer again.
    rank += vs.mtp_layers * LoraAdapterParams(job, job.model.num_layers - 1);
  }
  return out;
}

}  // namespace sextant
