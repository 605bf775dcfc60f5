// Architecture of a transformer language model: the facts from its paper / model card,
// in Megatron's vocabulary. Nothing here depends on how the model is parallelised.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sextant {

enum class Architecture {
  kTransformer,  // decoder-only transformer (dense or MoE)
  kStateSpace,   // Mamba-style: not supported by the projection model
  kHybrid,       // interleaved attention / state-space layers: not supported
  kDiffusion,    // diffusion transformers: not supported
  kDlrm,         // recommendation model (embedding tables + MLPs)
};

enum class NormType { kLayerNorm, kRMSNorm };
enum class AttentionType { kStandard /* MHA, GQA, MQA */, kMultiLatent /* DeepSeek MLA */ };

// Multi-latent attention (DeepSeek-V2/V3). q_lora_rank == 0 means no query compression.
struct MlaSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_head_dim = 0;          // "nope" part of the query/key head
  int64_t qk_pos_emb_head_dim = 0;  // rotary part, shared key across heads
  int64_t v_head_dim = 0;
};

// The largest expert capacity factor a configuration may state (MaxText's examples use 1-4;
// beyond the expert count the padding exceeds every token routed to every expert).
inline constexpr double kMaxCapacityFactor = 1024.0;

struct MoeSpec {
  int64_t num_experts = 0;  // 0 = dense model
  int64_t router_topk = 0;
  int64_t ffn_hidden_size = 0;                // per routed expert
  int64_t shared_expert_ffn_hidden_size = 0;  // total over shared experts; 0 = none
  bool router_bias = false;                   // expert-bias / aux-free balancing adds E params
  double capacity_factor = 0.0;               // 0 = dropless
  // Group-limited (node-limited) routing: the experts form `router_groups` groups in order and
  // a token picks its top-k among the experts of its best `router_group_topk` groups
  // (DeepSeek-V2 arXiv 2405.04434 §2.1.2, DeepSeek-V3 arXiv 2412.19437 §2.1.2; Megatron
  // moe_router_num_groups / moe_router_group_topk). 0 = not limited.
  int64_t router_groups = 0;
  int64_t router_group_topk = 0;
  // Which layers are MoE (size num_layers). Empty = every layer when num_experts > 0.
  std::vector<bool> moe_layers;
};

struct ModelSpec {
  std::string name;    // library key, e.g. "llama3.1_8B"
  std::string family;  // "llama", "qwen", "deepseek", ...
  Architecture architecture = Architecture::kTransformer;

  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t ffn_hidden_size = 0;  // dense MLP intermediate size
  int64_t num_attention_heads = 0;
  int64_t num_query_groups = 0;  // = heads for MHA, < heads for GQA, 1 for MQA
  int64_t kv_channels = 0;       // head dimension
  int64_t vocab_size = 0;        // tokenizer size before padding
  int64_t make_vocab_size_divisible_by = 128;
  int64_t max_position_embeddings = 0;
  int64_t seq_length = 4096;  // default training sequence length

  bool swiglu = true;  // gated MLP (3 matrices) vs 2-matrix MLP
  bool untie_embeddings_and_output_weights = true;
  bool learned_position_embeddings = false;  // GPT-style absolute positions (else RoPE)
  NormType normalization = NormType::kRMSNorm;
  int norms_per_layer = 2;  // pre-attention + pre-MLP; Gemma 2/3 also have post-norms (4)
  bool qk_layernorm = false;
  bool add_qkv_bias = false;     // Qwen2 style bias on Q/K/V only
  bool add_bias_linear = false;  // bias on every linear layer (GPT-2/3, gpt-oss)
  bool attention_sinks = false;  // gpt-oss learned per-head sink logits

  AttentionType attention = AttentionType::kStandard;
  MlaSpec mla;
  MoeSpec moe;

  // Sliding-window attention: window size in tokens, applied to layers where
  // (layer % sliding_window_period) != sliding_window_period - 1; 0 = full attention.
  int64_t sliding_window = 0;
  int sliding_window_period = 0;
  // The global (full-attention) layers of such a model may have their own geometry (Gemma 4:
  // head dimension 512 and fewer KV heads, K and V from one projection). 0 / false = as the
  // other layers.
  struct GlobalAttention {
    int64_t kv_channels = 0;
    int64_t num_query_groups = 0;
    bool shared_kv = false;  // V is the K projection's output: no V weights, one K/V tensor
  } global_attention;

  int64_t mtp_num_layers = 0;  // DeepSeek-V3 multi-token-prediction modules

  // Attention geometry of one transformer layer (standard attention; MLA has its own).
  struct LayerAttention {
    int64_t head_dim = 0;
    int64_t kv_heads = 0;
    int kv_tensors = 2;  // K and V; 1 when they share one projection
    int64_t window = 0;  // sliding window in tokens, 0 = full attention
  };
  // Whether `layer` attends within the sliding window (the others attend globally).
  bool IsSlidingWindowLayer(int64_t layer) const;
  LayerAttention AttentionOf(int64_t layer) const;

  bool IsMoe() const { return moe.num_experts > 0; }
  bool IsMoeLayer(int64_t layer) const;
  int64_t NumMoeLayers() const;
  // Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by * TP; 0: the
  // stack does not pad (torchtitan, MaxText).
  int64_t PaddedVocabSize(int64_t tensor_parallel) const;
  // Query projection width (heads * head_dim), which may differ from hidden_size.
  int64_t QueryWidth() const { return num_attention_heads * kv_channels; }
};

}  // namespace sextant
