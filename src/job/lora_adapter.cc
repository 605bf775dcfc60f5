#include "job/lora_adapter.h"

#include <algorithm>

#include "util/units.h"

namespace sextant {
namespace {

// Every linear layer of the model, targeted or not, with the per-GPU widths of the layer cost
// model (cost/layer_cost.cc LayerCostModel::Layer), which names each one as Megatron does.
std::vector<LoraAdaptedLinear> LinearsOf(const Job& job, int64_t layer) {
  const ModelSpec& m = job.model;
  const ParallelPlan& p = job.parallel;
  const int64_t tp = std::max(1, p.tp);
  const int64_t H = m.hidden_size;
  // Tokens of one micro-batch on this CP rank (memory/activation_memory.h TokensPerRank).
  const int64_t T = job.training.micro_batch_size * job.training.seq_length / std::max(1, p.cp);
  std::vector<LoraAdaptedLinear> out;
  auto add = [&](std::string_view module, int64_t tokens, int64_t in, int64_t width, int64_t shards,
                 bool expert) {
    out.push_back({module, tokens, in, width, LoraTpSplit(module), shards, expert});
  };
  const int64_t q_heads = CeilDiv(m.num_attention_heads, tp);
  int64_t attention_out = 0;
  if (m.attention == AttentionType::kMultiLatent) {
    const MlaSpec& a = m.mla;
    const int64_t qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    if (a.q_lora_rank > 0) {
      add("linear_q_down_proj", T, H, a.q_lora_rank, tp, false);
      add("linear_q_up_proj", T, a.q_lora_rank, q_heads * qk, tp, false);
    } else {
      add("linear_q_proj", T, H, q_heads * qk, tp, false);
    }
    add("linear_kv_down_proj", T, H, a.kv_lora_rank + a.qk_pos_emb_head_dim, tp, false);
    add("linear_kv_up_proj", T, a.kv_lora_rank, q_heads * (a.qk_head_dim + a.v_head_dim), tp,
        false);
    attention_out = q_heads * a.v_head_dim;
  } else {
    const ModelSpec::LayerAttention g = m.AttentionOf(layer);
    const int64_t kv_heads = std::max<int64_t>(1, CeilDiv(g.kv_heads, tp));
    add("linear_qkv", T, H, (q_heads + g.kv_tensors * kv_heads) * g.head_dim, tp, false);
    attention_out = q_heads * g.head_dim;
  }
  add("linear_proj", T, attention_out, H, tp, false);
  const int64_t gate = m.swiglu ? 2 : 1;
  auto mlp = [&](int64_t tokens, int64_t ffn, int64_t shards, bool expert) {
    const int64_t local = CeilDiv(ffn, shards);
    add("linear_fc1", tokens, H, gate * local, shards, expert);
    add("linear_fc2", tokens, local, H, shards, expert);
  };
  if (!m.IsMoeLayer(layer)) {
    mlp(T, m.ffn_hidden_size, tp, false);
  } else {
    // Megatron's MoE layer sees the sequence-parallel shard; the local experts receive
    // tokens·top-k copies, x ETP after the expert-TP gather (balanced routing).
    const int64_t T_moe = tp > 1 ? CeilDiv(T, tp) : T;
    add("router", T_moe, H, m.moe.num_experts, tp, false);
    mlp(T_moe * m.moe.router_topk * std::max(1, p.etp), m.moe.ffn_hidden_size, std::max(1, p.etp),
        true);
    if (m.moe.shared_expert_ffn_hidden_size > 0) {
      mlp(T, m.moe.shared_expert_ffn_hidden_size, tp, false);
    }
  }
  return out;
}

}  // namespace

TpSplit LoraTpSplit(std::string_view module) {
  for (std::string_view column : {"linear_qkv", "linear_fc1", "linear_q_proj", "linear_q_up_proj",
                                  "linear_kv_up_proj", "output_layer"}) {
    if (module == column) return TpSplit::kColumn;
  }
  if (module == "linear_proj" || module == "linear_fc2") return TpSplit::kRow;
  return TpSplit::kReplicated;
}

int64_t LoraAdapterParamsOf(int64_t r, int64_t in, int64_t out, TpSplit split, int64_t shards) {
  const int64_t s = std::max<int64_t>(1, shards);
  switch (split) {
    case TpSplit::kColumn: return r * in / s + r * out;
    case TpSplit::kRow: return r * in + r * out / s;
    case TpSplit::kReplicated: return r * (in + out) / s;
  }
  return 0;
}

std::vector<LoraAdaptedLinear> LoraAdaptedLinears(const Job& job, int64_t layer) {
  std::vector<LoraAdaptedLinear> linears;
  if (!job.training.lora.enabled) return linears;
  for (const LoraAdaptedLinear& l : LinearsOf(job, layer)) {
    if (job.training.lora.Targets(l.module) && l.in > 0 && l.out > 0) linears.push_back(l);
  }
  return linears;
}

std::vector<std::string> LoraTargetsWithoutModule(const Job& job) {
  std::vector<std::string> missing;
  const LoraSpec& lora = job.training.lora;
  if (!lora.enabled) return missing;
  for (const std::string& target : lora.target_modules) {
    bool found = target == "output_layer" || (target == "eh_proj" && job.model.mtp_num_layers > 0);
    for (int64_t layer = 0; layer < job.model.num_layers && !found; ++layer) {
      for (const LoraAdaptedLinear& l : LinearsOf(job, layer)) found = found || l.module == target;
    }
    if (!found) missing.push_back(target);
  }
  return missing;
}

}  // namespace sextant
