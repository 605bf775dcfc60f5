#include "model/parameter_count.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace sextant {
namespace {

int64_t NormWidth(const ModelSpec& m) { return m.normalization == NormType::kLayerNorm ? 2 : 1; }

// Q/K/V/O matrices and the column-parallel biases of one attention block.
// Standard attention: Megatron attention.py linear_qkv (h -> (n + 2g)·d) and linear_proj
// (n·d -> h). MLA: Megatron multi_latent_attention.py / DeepSeek-V2 paper §2.1
// (linear_q_down_proj, linear_q_up_proj, linear_kv_down_proj, linear_kv_up_proj, linear_proj).
int64_t AttentionMatrices(const ModelSpec& m, int64_t layer) {
  const int64_t h = m.hidden_size;
  const int64_t n = m.num_attention_heads;
  if (m.attention == AttentionType::kMultiLatent) {
    const MlaSpec& a = m.mla;
    const int64_t q_head = a.qk_head_dim + a.qk_pos_emb_head_dim;
    const int64_t q =
        a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * n * q_head : h * n * q_head;
    // The down projection also produces the shared rotary key.
    const int64_t kv_down = h * (a.kv_lora_rank + a.qk_pos_emb_head_dim);
    const int64_t kv_up = a.kv_lora_rank * n * (a.qk_head_dim + a.v_head_dim);
    const int64_t out = n * a.v_head_dim * h;
    return q + kv_down + kv_up + out;
  }
  // Per-layer geometry: Gemma 4's global layers have wider heads, fewer KV heads and one
  // shared K/V projection.
  const ModelSpec::LayerAttention a = m.AttentionOf(layer);
  const int64_t q_width = n * a.head_dim;
  const int64_t kv_width = a.kv_tensors * a.kv_heads * a.head_dim;
  int64_t params = h * (q_width + kv_width) + q_width * h;
  if (m.add_qkv_bias || m.add_bias_linear) params += q_width + kv_width;
  return params;
}

// Norm weights inside one layer: the pre-attention / pre-MLP norms (and Gemma's post-norms),
// per-head q/k norms of width kv_channels (Megatron qk_layernorm), or MLA's latent norms.
int64_t LayerNorms(const ModelSpec& m, int64_t layer) {
  const int64_t w = NormWidth(m);
  int64_t params = static_cast<int64_t>(m.norms_per_layer) * m.hidden_size * w;
  if (m.qk_layernorm) {
    if (m.attention == AttentionType::kMultiLatent) {
      params += (m.mla.q_lora_rank + m.mla.kv_lora_rank) * w;
    } else {
      params += 2 * m.AttentionOf(layer).head_dim * w;
    }
  }
  return params;
}

// Parameters of one routed expert (an MLP of the expert width, biases included).
int64_t ExpertParams(const ModelSpec& m) { return MlpParams(m, m.moe.ffn_hidden_size); }

LayerParams CountLayer(const ModelSpec& m, int64_t layer) {
  const bool is_moe = m.IsMoeLayer(layer);
  LayerParams p;
  p.is_moe = is_moe;
  p.attention = AttentionMatrices(m, layer);
  if (m.add_bias_linear) p.attention_bias += m.hidden_size;  // row-parallel output bias
  if (m.attention_sinks) p.attention_bias += m.num_attention_heads;
  p.norms = LayerNorms(m, layer);
  if (is_moe) {
    p.routed_experts = m.moe.num_experts * ExpertParams(m);
    if (m.moe.shared_expert_ffn_hidden_size > 0) {
      p.shared_experts = MlpParams(m, m.moe.shared_expert_ffn_hidden_size);
    }
    p.router = m.hidden_size * m.moe.num_experts + (m.moe.router_bias ? m.moe.num_experts : 0);
  } else {
    p.dense_mlp = MlpParams(m, m.ffn_hidden_size);
  }
  return p;
}

}  // namespace

int64_t AttentionParams(const ModelSpec& model, int64_t layer) {
  return AttentionMatrices(model, layer);
}

// Megatron mlp.py: linear_fc1 h -> f (2f when gated, SwiGLU/GeGLU), linear_fc2 f -> h.
int64_t MlpParams(const ModelSpec& model, int64_t ffn_hidden_size) {
  const int64_t fc1_out = (model.swiglu ? 2 : 1) * ffn_hidden_size;
  int64_t params = model.hidden_size * fc1_out + ffn_hidden_size * model.hidden_size;
  if (model.add_bias_linear) params += fc1_out + model.hidden_size;
  return params;
}

int64_t LayerParams::Active(const ModelSpec& m) const {
  int64_t routed_active = 0;
  if (is_moe && m.moe.num_experts > 0) {
    routed_active = routed_experts / m.moe.num_experts * m.moe.router_topk;
  }
  return attention + attention_bias + norms + dense_mlp + router + shared_experts + routed_active;
}

int64_t ModelParams::Total() const {
  int64_t total = embedding + output_layer + final_norm + mtp_extra;
  for (const LayerParams& l : layers) total += l.Total();
  for (const LayerParams& l : mtp_layers) total += l.Total();
  return total;
}

int64_t ModelParams::Active(const ModelSpec& m) const {
  int64_t total = embedding + output_layer + final_norm + mtp_extra;
  for (const LayerParams& l : layers) total += l.Active(m);
  for (const LayerParams& l : mtp_layers) total += l.Active(m);
  return total;
}

ModelParams CountParameters(const ModelSpec& model) {
  return CountParameters(model, model.vocab_size);
}

ModelParams CountParameters(const ModelSpec& m, int64_t vocab_size) {
  ModelParams p;
  const int64_t h = m.hidden_size;
  const int64_t w = NormWidth(m);
  p.embedding = vocab_size * h;
  if (m.learned_position_embeddings) p.embedding += m.max_position_embeddings * h;
  p.output_layer = m.untie_embeddings_and_output_weights ? vocab_size * h : 0;
  p.final_norm = h * w;
  p.layers.reserve(static_cast<size_t>(m.num_layers));
  // A layer's counts depend on its index only through whether it routes tokens and its
  // attention geometry: counted once per distinct kind (the search counts models often).
  std::vector<std::pair<std::tuple<bool, int64_t, int64_t, int, int64_t>, LayerParams>> kinds;
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const ModelSpec::LayerAttention a = m.AttentionOf(i);
    const auto key =
        std::make_tuple(m.IsMoeLayer(i), a.head_dim, a.kv_heads, a.kv_tensors, a.window);
    const auto it = std::find_if(kinds.begin(), kinds.end(),
                                 [&](const auto& kind) { return kind.first == key; });
    if (it != kinds.end()) {
      p.layers.push_back(it->second);
    } else {
      kinds.emplace_back(key, CountLayer(m, i));
      p.layers.push_back(kinds.back().second);
    }
  }
  // DeepSeek-V3 §2.2: each MTP module shares the embedding and output head with the main
  // model and adds RMSNorms on the hidden state and on the embedding (hnorm, enorm), a
  // projection M ∈ R^{h×2h} (eh_proj), one transformer block, and a final norm before the
  // shared head. Megatron multi_token_prediction.py builds the block like the last layer.
  for (int64_t i = 0; i < m.mtp_num_layers; ++i) {
    p.mtp_layers.push_back(CountLayer(m, m.num_layers - 1));
    p.mtp_extra += 2 * h * h + 3 * h * w;
  }
  return p;
}

}  // namespace sextant
