#include "model/flop_count.h"

namespace sextant {
namespace {

double VocabFor(const ModelSpec& m, const FlopInputs& in) {
  return static_cast<double>(in.vocab_size > 0 ? in.vocab_size : m.vocab_size);
}

// Per-token forward multiply-adds of one attention block: projections plus the causal core
// (QKᵀ and AV over half of the s×s scores). Megatron training.py transformer_flops.
double AttentionMacsPerToken(const ModelSpec& m, int64_t layer, double s) {
  const double h = static_cast<double>(m.hidden_size);
  const double n = static_cast<double>(m.num_attention_heads);
  if (m.attention == AttentionType::kMultiLatent) {
    const MlaSpec& a = m.mla;
    const double qk = static_cast<double>(a.qk_head_dim);
    const double rope = static_cast<double>(a.qk_pos_emb_head_dim);
    const double v = static_cast<double>(a.v_head_dim);
    const double q_lora = static_cast<double>(a.q_lora_rank);
    const double kv_lora = static_cast<double>(a.kv_lora_rank);
    // The "+ 1" terms are Megatron's allowance for the latent RMSNorms.
    const double q_term =
        a.q_lora_rank > 0 ? q_lora * (h + n * (qk + rope) + 1) : h * n * (qk + rope);
    return q_term + kv_lora * (h + n * (qk + v) + 1) + h * rope + n * v * h +
           s * n * (qk + rope) / 2 + s * n * v / 2;
  }
  // Per-layer geometry (Gemma 4's global layers differ; one K/V projection when shared).
  const ModelSpec::LayerAttention a = m.AttentionOf(layer);
  const double q = n * static_cast<double>(a.head_dim);
  const double kv = static_cast<double>(a.kv_tensors * a.kv_heads * a.head_dim);
  return h * (q + kv) + q * s / 2 * 2 + q * h;
}

struct LayerCounts {
  double dense = 0;  // dense-MLP layers, MTP blocks included
  double moe = 0;    // MoE layers, MTP blocks included
};

LayerCounts CountLayers(const ModelSpec& m) {
  LayerCounts c;
  const double mtp = static_cast<double>(m.mtp_num_layers);
  const double moe = static_cast<double>(m.NumMoeLayers());
  c.moe = moe;
  c.dense = static_cast<double>(m.num_layers) - moe;
  // Megatron builds each MTP block like the last decoder layer.
  const bool last_is_moe = m.num_layers > 0 && m.IsMoeLayer(m.num_layers - 1);
  (last_is_moe ? c.moe : c.dense) += mtp;
  return c;
}

// Forward multiply-adds per token, split into the part inside transformer blocks (which full
// recomputation repeats) and the logit layer(s) (which it does not).
struct MacsPerToken {
  double blocks = 0;
  double logits = 0;
};

MacsPerToken MegatronMacsPerToken(const ModelSpec& m, const FlopInputs& in) {
  const double h = static_cast<double>(m.hidden_size);
  const double gated = m.swiglu ? 3 : 2;  // matrices per MLP
  const LayerCounts layers = CountLayers(m);
  const double mtp = static_cast<double>(m.mtp_num_layers);
  double mlp = gated * static_cast<double>(m.ffn_hidden_size) * layers.dense;
  if (m.IsMoe()) {
    mlp += gated * static_cast<double>(m.moe.ffn_hidden_size * m.moe.router_topk) * layers.moe;
    mlp += gated * static_cast<double>(m.moe.shared_expert_ffn_hidden_size) * layers.moe;
  }
  // Attention blocks: every layer, and each MTP block built like the last layer.
  const double s = static_cast<double>(in.seq_length);
  double attention = 0;
  for (int64_t l = 0; l < m.num_layers; ++l) attention += AttentionMacsPerToken(m, l, s);
  if (m.num_layers > 0) attention += mtp * AttentionMacsPerToken(m, m.num_layers - 1, s);
  MacsPerToken macs;
  macs.blocks =
      h * mlp + attention + mtp * (3 * h + 2 * h * h);  // MTP: enorm/hnorm/final norm and eh_proj
  macs.logits = h * VocabFor(m, in) * (mtp + 1);
  return macs;
}

double Tokens(const FlopInputs& in) {
  return static_cast<double>(in.seq_length) * static_cast<double>(in.global_batch);
}

// Narayanan's closed form: 24·B·s·h²·L·(1 + s/(6h)) per forward of the blocks, 2·B·s·h·V per
// forward of the logit layer.
double NarayananFlops(const ModelSpec& m, const FlopInputs& in, double block_passes) {
  const double h = static_cast<double>(m.hidden_size);
  const double L = static_cast<double>(m.num_layers);
  const double s = static_cast<double>(in.seq_length);
  const double blocks = 24 * h * h * L + 4 * s * h * L;  // = 24·h²·L·(1 + s/(6h))
  const double logits = 2 * h * VocabFor(m, in);
  return Tokens(in) * (block_passes * blocks + 3 * logits);
}

}  // namespace

// 2 FLOPs per multiply-add × 3 passes (forward, backward w.r.t. inputs and w.r.t. weights).
double MegatronModelFlops(const ModelSpec& m, const FlopInputs& in) {
  const MacsPerToken macs = MegatronMacsPerToken(m, in);
  return Tokens(in) * 6 * (macs.blocks + macs.logits);
}

double MegatronFullRecomputeFlops(const ModelSpec& m, const FlopInputs& in) {
  const MacsPerToken macs = MegatronMacsPerToken(m, in);
  return Tokens(in) * (8 * macs.blocks + 6 * macs.logits);
}

double NarayananModelFlops(const ModelSpec& m, const FlopInputs& in) {
  return NarayananFlops(m, in, 3);
}

double NarayananFullRecomputeFlops(const ModelSpec& m, const FlopInputs& in) {
  return NarayananFlops(m, in, 4);
}

double NemoModelFlops(const ModelSpec& m, const FlopInputs& in) {
  const double h = static_cast<double>(m.hidden_size);
  const double s = static_cast<double>(in.seq_length);
  const double L = static_cast<double>(m.num_layers);
  const double a = static_cast<double>(m.num_attention_heads);
  const double g = m.num_query_groups > 0 ? static_cast<double>(m.num_query_groups) : a;
  const double v = static_cast<double>(in.vocab_size > 0 ? in.vocab_size : m.vocab_size);
  const double mlp_matrices = m.swiglu ? 3.0 : 2.0;
  double mlp = 0;  // 6·matrices·f/h summed over layers, divided by L below
  for (int64_t layer = 0; layer < m.num_layers; ++layer) {
    double width = static_cast<double>(m.ffn_hidden_size);
    if (m.IsMoeLayer(layer)) {
      width = static_cast<double>(m.moe.router_topk * m.moe.ffn_hidden_size +
                                  m.moe.shared_expert_ffn_hidden_size);
    }
    mlp += 6.0 * mlp_matrices * width / h;
  }
  const double per_layer = 12.0 + 12.0 * g / a + mlp / L + 12.0 * s / h;
  return static_cast<double>(in.global_batch) * s * L * h * h * (per_layer + 6.0 * v / (L * h));
}

double MegatronFlopsPerToken(const ModelSpec& m) {
  FlopInputs in;
  in.seq_length = m.seq_length;
  in.global_batch = 1;
  in.vocab_size = m.PaddedVocabSize(1);
  return MegatronModelFlops(m, in) / static_cast<double>(m.seq_length);
}

}  // namespace sextant
