#include "memory/activation_memory.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "memory/lora_adapters.h"

namespace sextant {
namespace {

double heads_of(const ModelSpec& m) { return static_cast<double>(m.num_attention_heads); }

bool RecomputesModule(const Job& job, std::string_view module) {
  const auto& rc = job.training.recompute;
  if (rc.granularity != RecomputeGranularity::kSelective) return false;
  if (rc.modules.empty()) return module == "core_attn";  // Megatron's default selective set
  return std::find(rc.modules.begin(), rc.modules.end(), module) != rc.modules.end();
}

// Bytes of one activation element: 2 under bf16 / fp16 mixed precision, 4 when a job trains
// in fp32 (Megatron without --bf16 / --fp16).
double ElementBytes(const Job& job) {
  return static_cast<double>(DTypeBytes(job.training.precision.ActivationDType()));
}

// Bytes of a saved linear-layer input: FP8 recipes (Transformer Engine, torchao float8) keep
// the quantised copy for the weight-gradient GEMM instead of the BF16 tensor.
double LinearInputBytes(const Job& job) {
  const DType g = job.training.precision.gemm;
  return (g == DType::kFP8 || g == DType::kMXFP8 || g == DType::kFP4) ? 1.0 : ElementBytes(job);
}

// Bytes per attention score that materialised attention saves: the softmax output, and with
// attention dropout its 1-byte mask and the dropped-out copy (Korthikanti et al. 2022 §4.1:
// 2as²b + as²b + 2as²b per layer at 16-bit).
double SavedScoreBytes(double element_bytes, bool dropout) {
  return element_bytes + (dropout ? 1.0 + element_bytes : 0.0);
}

}  // namespace

int64_t TokensPerRank(const Job& job) {
  const int64_t cp = std::max(1, job.parallel.cp);
  return job.training.micro_batch_size * job.training.seq_length / cp;
}

namespace {

// Expert rows per token: top-k, times the capacity factor when slots are padded; every expert
// when MaxText's dense_matmul runs without a capacity (job.h MoeExpertCompute).
double RoutedCopiesPerToken(const Job& job) {
  const MoeSpec& e = job.model.moe;
  if (job.training.moe_expert_compute == MoeExpertCompute::kEveryExpert)
    return static_cast<double>(e.num_experts);
  double copies = static_cast<double>(e.router_topk);
  if (e.capacity_factor > 0) copies *= e.capacity_factor;
  return copies;
}

// Widths per token of a standard-attention layer's projections: Q, K and V together counted
// as 2·kv (kv_tensors / 2 per head when K and V share one projection), and the dense MLP.
struct ProjectionWidths {
  double q, kv, f;
};
ProjectionWidths ProjectionWidthsOf(const ModelSpec& m, int64_t layer) {
  const ModelSpec::LayerAttention a = m.AttentionOf(layer);
  const double d = static_cast<double>(a.head_dim);
  return {heads_of(m) * d, static_cast<double>(a.kv_heads) * d * a.kv_tensors / 2.0,
          static_cast<double>(m.ffn_hidden_size)};
}

}  // namespace

// What full training stores; LayerActivationBytes adds the LoRA adapters' extras.
static LayerActivation FullTrainingActivationBytes(const Job& job, int64_t layer) {
  const ModelSpec& m = job.model;
  const ParallelPlan& p = job.parallel;
  const double t = std::max(1, p.tp);
  const double sp_div = p.sequence_parallel ? t : 1.0;  // replicated parts shard only with SP
  const double tokens = static_cast<double>(TokensPerRank(job));
  const double h = static_cast<double>(m.hidden_size);
  const double a = ElementBytes(job);
  const double lin = LinearInputBytes(job);
  const bool hidden_dropout = job.training.hidden_dropout > 0;
  const bool attn_dropout = job.training.attention_dropout > 0;
  const double mask = hidden_dropout ? 1.0 : 0.0;  // 1-byte dropout masks
  const bool recompute_norm = RecomputesModule(job, "layernorm");
  const double norm_input = recompute_norm ? 0.0 : a * h;
  const int norms_before_attn = m.norms_per_layer / 2;
  const int norms_before_mlp = m.norms_per_layer - norms_before_attn;

  if (job.training.recompute.granularity == RecomputeGranularity::kSelective &&
      job.training.recompute.per_op_policy && !m.IsMoeLayer(layer) &&
      m.attention == AttentionType::kStandard) {
    // torchtitan's per-op policy (torchtitan/models/llama3/parallelize: _save_list) keeps the
    // attention output (+ fp32 log-sum-exp) and every other matmul output; everything else is
    // recomputed from those and the layer input.
    const auto [q, kv, f] = ProjectionWidthsOf(m, layer);
    const double mm_outputs = q + 2 * kv + h + f * (m.swiglu ? 2.0 : 1.0) + h;  // per token
    const double shard = (0.5 * mm_outputs * a + a * q + 4.0 * m.num_attention_heads) / t;
    const double input = a * h / sp_div;
    return LayerActivation{static_cast<int64_t>(std::llround((input + shard / 2) * tokens)),
                           static_cast<int64_t>(std::llround(shard / 2 * tokens))};
  }
  if (job.training.recompute.granularity == RecomputeGranularity::kSelective &&
      job.training.recompute.matmul_outputs_only && m.attention == AttentionType::kStandard) {
    // MaxText's minimal policies let the named projection outputs be saved (layers/decoders.py
    // minimal_policy: save_only_these_names; checkpoint_dots_with_no_batch_dims before
    // August 2025, the same tensors in a dense layer), and JAX keeps those the backward uses: Q, K,
    // V (attention backward), the output projection (to recompute the residual sum the next norm
    // reads), gate and up (SwiGLU backward); plus the flash-attention context and its fp32
    // log-sum-exp under minimal_flash, and the layer input the scan carries. Norm outputs and the
    // SwiGLU product are recomputed; the down projection's output is not needed by any backward.
    const auto [q, kv, f] = ProjectionWidthsOf(m, layer);
    const RecomputeSpec& rc = job.training.recompute;
    const bool context = rc.save_attention_context;
    const double attn_shard = (rc.save_qkv_projections ? a * (q + 2 * kv) : 0.0) +
                              (context ? a * q + 4.0 * heads_of(m) : 0.0);
    // The layer input, and the output projection where the policy saves it.
    const double attn_repl = a * h + (rc.save_output_projection ? a * h : 0.0);
    const double gate = m.swiglu ? 2.0 : 1.0;
    const bool save_mlp = job.training.recompute.save_mlp_outputs;
    double mlp_shard = save_mlp ? a * f * gate : 0.0;
    if (m.IsMoeLayer(layer) && !save_mlp) {
      mlp_shard = 0.0;
    } else if (m.IsMoeLayer(layer)) {
      // Routed experts keep mlpwi_0/mlpwi_1 and mlpwo, which the combine's backward reads (its
      // mask carries the router weights), per routed copy or capacity slot; shared experts
      // keep gate and up like a dense MLP. Router logits and the dispatched input are
      // recomputed.
      const MoeSpec& e = m.moe;
      const double copies = RoutedCopiesPerToken(job);
      const double etp = std::max(1, p.etp);
      const double per_copy = a * static_cast<double>(e.ffn_hidden_size) * gate / etp + a * h;
      mlp_shard =
          copies * per_copy * t + a * static_cast<double>(e.shared_expert_ffn_hidden_size) * gate;
    }
    const double mlp_repl = 0.0;
    return LayerActivation{
        static_cast<int64_t>(std::llround((attn_repl / sp_div + attn_shard / t) * tokens)),
        static_cast<int64_t>(std::llround((mlp_repl / sp_div + mlp_shard / t) * tokens))};
  }
  // A compiled layer recomputes a norm's output from its saved input in backward, so the
  // projection after a norm stores nothing of its own (AOTAutograd min-cut partitioner).
  const bool compiled = job.training.compiled_graph;
  const double attn_input = compiled && norms_before_attn > 0 ? 0.0 : lin * h;
  const double mlp_input = compiled && norms_before_mlp > 0 ? 0.0 : lin * h;
  // The SwiGLU / GeLU product feeding the down projection is recomputed from the saved
  // up-projection outputs.
  const double act_output = compiled ? 0.0 : 1.0;
  // ---- attention block, bytes per token ----
  double attn_repl = norms_before_attn * norm_input + attn_input + mask * h;  // norm, QKV in, mask
  double attn_shard = 0;
  const double heads = static_cast<double>(m.num_attention_heads);
  if (m.attention == AttentionType::kMultiLatent) {
    const MlaSpec& mla = m.mla;
    const double qk = static_cast<double>(mla.qk_head_dim + mla.qk_pos_emb_head_dim);
    const double v = static_cast<double>(mla.v_head_dim);
    // Low-rank latents are replicated over TP: q latent (pre- and post-norm), kv latent +
    // rotary key (pre-norm), kv latent (post-norm, input of the up-projection).
    const bool up_recompute = RecomputesModule(job, "mla_up_proj");
    if (mla.q_lora_rank > 0) attn_repl += a * mla.q_lora_rank + lin * mla.q_lora_rank;
    attn_repl += a * (mla.kv_lora_rank + mla.qk_pos_emb_head_dim) + lin * mla.kv_lora_rank;
    if (!up_recompute) attn_shard += a * heads * qk * 2 + a * heads * v;  // Q, K, V
    attn_shard += lin * heads * v;                                        // core output
    if (!job.training.flash_attention && !RecomputesModule(job, "core_attn")) {
      attn_shard += SavedScoreBytes(a, attn_dropout) * heads *
                    (static_cast<double>(job.training.seq_length) / std::max(1, p.cp));
    } else if (job.training.flash_attention) {
      attn_shard += 4.0 * heads;  // fp32 log-sum-exp per query and head
    }
  } else {
    const ModelSpec::LayerAttention la = m.AttentionOf(layer);
    const double d = static_cast<double>(la.head_dim);
    const double q = heads * d;
    const double kv = static_cast<double>(la.kv_heads) * d;
    // Q, K and V (one tensor when K and V share a projection), core-attention output.
    attn_shard += a * q + a * la.kv_tensors * kv + lin * q;
    if (!job.training.flash_attention) {
      if (!RecomputesModule(job, "core_attn")) {
        const double keys = static_cast<double>(job.training.seq_length) / std::max(1, p.cp);
        attn_shard += SavedScoreBytes(a, attn_dropout) * heads * keys;
      }
    } else {
      attn_shard += 4.0 * heads;  // fp32 log-sum-exp per query and head
    }
  }

  // ---- MLP block, bytes per token ----
  double mlp_repl = norms_before_mlp * norm_input + mask * h;
  double mlp_shard = 0;
  const double gate = m.swiglu ? 2.0 : 1.0;
  auto dense_mlp = [&](double f) {
    // input (counted by caller), up-projection output (f x gate elements), activation output.
    return a * f * gate + act_output * lin * f;
  };
  if (m.IsMoeLayer(layer)) {
    const MoeSpec& e = m.moe;
    mlp_repl += lin * h;                                   // router / dispatcher input
    mlp_repl += 4.0 * static_cast<double>(e.num_experts);  // fp32 router logits
    const double copies = RoutedCopiesPerToken(job);
    const double etp = std::max(1, p.etp);
    const double fe = static_cast<double>(e.ffn_hidden_size);
    // Tokens reach the experts sequence-sharded when SP is on (one TP rank's share each).
    const double token_share = p.sequence_parallel ? 1.0 / t : 1.0;
    double per_copy = lin * h + a * h;  // permuted expert input + expert output (unpermute)
    if (RecomputesModule(job, "moe")) {
      per_copy = 0;
    } else if (job.training.recompute.matmul_outputs_only) {
      // MaxText's minimal policies save named projections only (layers/decoders.py
      // minimal_policy): of the routed experts mlpwi_0 and mlpwi_1 (gate and up) and mlpwo,
      // which the combine's backward reads (its mask carries the router weights); the
      // dispatched expert input and the activation output are recomputed.
      per_copy = a * fe * gate / etp + a * h;
    } else {
      double act = a * fe * gate / etp;
      if (!RecomputesModule(job, "moe_act")) act += act_output * lin * fe / etp;
      per_copy += act;
    }
    double routed = copies * per_copy * token_share;
    double shared = 0;
    if (e.shared_expert_ffn_hidden_size > 0 && !RecomputesModule(job, "shared_experts")) {
      shared = dense_mlp(static_cast<double>(e.shared_expert_ffn_hidden_size)) / t;
    }
    const double mlp_bytes = (mlp_repl / sp_div + routed + shared) * tokens;
    const double attn_bytes = (attn_repl / sp_div + attn_shard / t) * tokens;
    return LayerActivation{static_cast<int64_t>(std::llround(attn_bytes)),
                           static_cast<int64_t>(std::llround(mlp_bytes))};
  }
  mlp_repl += mlp_input;  // MLP input
  if (RecomputesModule(job, "mlp")) {
    mlp_shard = 0;
  } else {
    mlp_shard = dense_mlp(static_cast<double>(m.ffn_hidden_size));
  }
  const double attn_bytes = (attn_repl / sp_div + attn_shard / t) * tokens;
  const double mlp_bytes = (mlp_repl / sp_div + mlp_shard / t) * tokens;
  return LayerActivation{static_cast<int64_t>(std::llround(attn_bytes)),
                         static_cast<int64_t>(std::llround(mlp_bytes))};
}

int64_t RecomputedLayerInputBytes(const Job& job) {
  // The checkpointed input hidden state, sequence-sharded under SP (Korthikanti §5: 2sbh).
  const double sp_div = job.parallel.sequence_parallel ? std::max(1, job.parallel.tp) : 1;
  return static_cast<int64_t>(
      std::llround(ElementBytes(job) * job.model.hidden_size * TokensPerRank(job) / sp_div));
}

int64_t EmbeddingActivationBytes(const Job& job) {
  // int64 token ids are kept for the embedding backward on every TP rank; the dropout mask
  // after the (sequence-parallel) embedding is sharded with SP.
  const double tokens = static_cast<double>(TokensPerRank(job));
  const double sp_div = job.parallel.sequence_parallel ? std::max(1, job.parallel.tp) : 1;
  double bytes = 8.0 * tokens;
  if (job.training.hidden_dropout > 0) bytes += tokens * job.model.hidden_size / sp_div;
  return static_cast<int64_t>(std::llround(bytes));
}

int64_t OutputActivationBytes(const Job& job) {
  const double tokens = static_cast<double>(TokensPerRank(job));
  const double t = std::max(1, job.parallel.tp);
  const double sp_div = job.parallel.sequence_parallel ? t : 1;
  const double h = static_cast<double>(job.model.hidden_size);
  const double v = static_cast<double>(job.model.PaddedVocabSize(job.parallel.tp));
  // Final norm input and LM-head input.
  const double a = ElementBytes(job);
  double bytes = (a * h + a * h) * tokens / sp_div;
  // Vocab-parallel cross-entropy keeps fp32 softmax of its logits shard (Megatron's
  // 4·s·b·V/t term); the fused kernel writes the bf16 gradient in the forward pass instead.
  // A compiled loss keeps the bf16 logits and recomputes the softmax from them.
  const bool compact = job.training.cross_entropy_loss_fusion || job.training.compiled_loss;
  bytes += (compact ? a : std::max(4.0, a)) * tokens * v / t;
  if (InPlaceCrossEntropy(job.training)) {
    // Transformer Engine's kernel keeps the bf16 logits themselves (their gradient later
    // overwrites them) and an fp32 max / sum / target logit per token.
    bytes += 12.0 * tokens / sp_div;
  }
  return static_cast<int64_t>(std::llround(bytes));
}

bool InPlaceCrossEntropy(const TrainingSettings& training) {
  return training.cross_entropy_loss_fusion &&
         training.cross_entropy_impl == CrossEntropyImpl::kTransformerEngine;
}

LayerActivation LayerActivationBytes(const Job& job, int64_t layer) {
  LayerActivation a = FullTrainingActivationBytes(job, layer);
  a.lora = LoraActivationBytes(job, layer);
  return a;
}

}  // namespace sextant
