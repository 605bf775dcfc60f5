#include "model/model_library.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "util/close_matches.h"

namespace sextant {
namespace {

// The dimensions every decoder-only transformer entry states; the rest defaults to the
// Llama-style architecture (RMSNorm, SwiGLU, RoPE, untied head, no biases).
struct Dims {
  int64_t layers;
  int64_t hidden;
  int64_t ffn;
  int64_t heads;
  int64_t kv_heads;  // query groups
  int64_t head_dim;  // 0 = hidden / heads
  int64_t vocab;
};

ModelSpec Transformer(std::string name, std::string family, const Dims& d) {
  ModelSpec m;
  m.name = std::move(name);
  m.family = std::move(family);
  m.num_layers = d.layers;
  m.hidden_size = d.hidden;
  m.ffn_hidden_size = d.ffn;
  m.num_attention_heads = d.heads;
  m.num_query_groups = d.kv_heads;
  m.kv_channels = d.head_dim > 0 ? d.head_dim : d.hidden / d.heads;
  m.vocab_size = d.vocab;
  return m;
}

void MakeMoe(ModelSpec& m, int64_t experts, int64_t topk, int64_t expert_ffn,
             int64_t shared_ffn = 0) {
  m.moe.num_experts = experts;
  m.moe.router_topk = topk;
  m.moe.ffn_hidden_size = expert_ffn;
  m.moe.shared_expert_ffn_hidden_size = shared_ffn;
}

// The first `dense` layers keep a dense MLP (DeepSeek "first_k_dense_replace").
std::vector<bool> FirstKDense(int64_t layers, int64_t dense) {
  std::vector<bool> pattern(static_cast<size_t>(layers), true);
  for (int64_t i = 0; i < dense && i < layers; ++i) pattern[static_cast<size_t>(i)] = false;
  return pattern;
}

// Megatron moe_layer_freq = N: layer i is MoE when i % N == 0.
std::vector<bool> EveryNth(int64_t layers, int64_t n) {
  std::vector<bool> pattern(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) pattern[static_cast<size_t>(i)] = (i % n == 0);
  return pattern;
}

void MakeMla(ModelSpec& m, int64_t q_lora, int64_t kv_lora) {
  m.attention = AttentionType::kMultiLatent;
  m.mla.q_lora_rank = q_lora;
  m.mla.kv_lora_rank = kv_lora;
  m.mla.qk_head_dim = 128;
  m.mla.qk_pos_emb_head_dim = 64;
  m.mla.v_head_dim = 128;
  m.qk_layernorm = true;  // MLA latent RMSNorms (q_a_layernorm, kv_a_layernorm)
}

// GPT-3 (Brown et al. 2020, arXiv 2005.14165, Table 2.1 and §2.1): GPT-2 architecture with
// learned positions, pre-LayerNorm, biases on every linear, a 4h GELU MLP, tied embeddings,
// vocabulary 50257, context 2048.
ModelSpec Gpt3(std::string name, int64_t layers, int64_t hidden, int64_t heads, int64_t head_dim) {
  ModelSpec m = Transformer(std::move(name), "gpt3",
                            {layers, hidden, 4 * hidden, heads, heads, head_dim, 50257});
  m.swiglu = false;
  m.untie_embeddings_and_output_weights = false;
  m.learned_position_embeddings = true;
  m.normalization = NormType::kLayerNorm;
  m.add_bias_linear = true;
  m.max_position_embeddings = 2048;
  m.seq_length = 2048;
  return m;
}

ModelEntry Entry(ModelSpec spec, double published, int digits, std::string source,
                 std::vector<std::string> aliases = {}, double published_active = 0) {
  ModelEntry e;
  e.spec = std::move(spec);
  e.published_params = published;
  e.published_digits = digits;
  e.published_active_params = published_active;
  e.source = std::move(source);
  e.aliases = std::move(aliases);
  return e;
}

ModelEntry Unsupported(std::string name, std::string family, Architecture arch, double published,
                       int digits, std::string source, std::vector<std::string> aliases) {
  ModelSpec m;
  m.name = std::move(name);
  m.family = std::move(family);
  m.architecture = arch;
  return Entry(std::move(m), published, digits, std::move(source), std::move(aliases));
}

std::vector<ModelEntry> BuildLibrary() {
  std::vector<ModelEntry> lib;

  // ---- Llama 2: Touvron et al. 2023 (arXiv 2307.09288) Table 1; GQA for 70B only.
  {
    const std::string src =
        "Llama 2 paper (arXiv 2307.09288) Table 1; HF meta-llama/Llama-2-*-hf config.json";
    ModelSpec m = Transformer("llama2_7B", "llama", {32, 4096, 11008, 32, 32, 0, 32000});
    m.max_position_embeddings = 4096;
    lib.push_back(
        Entry(m, 6738415616, 0, src + "; exact count from the HF model card", {"Llama-2-7b-hf"}));
    m = Transformer("llama2_13B", "llama", {40, 5120, 13824, 40, 40, 0, 32000});
    m.max_position_embeddings = 4096;
    lib.push_back(Entry(m, 13.0e9, 3, src, {"Llama-2-13B"}));
    m = Transformer("llama2_70B", "llama", {80, 8192, 28672, 64, 8, 0, 32000});
    m.max_position_embeddings = 4096;
    lib.push_back(
        Entry(m, 69e9, 2, src + "; 69B per the HF model page", {"Llama-2-70B", "llama2-70b"}));
  }
  // ---- Llama 3 / 3.1 / 3.3: Llama 3 herd paper (arXiv 2407.21783) Table 3; vocab 128256.
  {
    const std::string src =
        "Llama 3 herd paper (arXiv 2407.21783) Table 3; HF meta-llama config.json";
    auto llama3 = [](std::string name, Dims d, int64_t max_pos) {
      ModelSpec m = Transformer(std::move(name), "llama", d);
      m.max_position_embeddings = max_pos;
      m.seq_length = 8192;
      return m;
    };
    lib.push_back(Entry(llama3("llama3_8B", {32, 4096, 14336, 32, 8, 0, 128256}, 8192), 8.03e9, 3,
                        src + "; 8.03B HF model page", {"Meta-Llama-3-8B", "llama3_8B-fp8"}));
    lib.push_back(Entry(llama3("llama3_70B", {80, 8192, 28672, 64, 8, 0, 128256}, 8192), 70.6e9, 3,
                        src + "; 70.6B HF model page", {"Meta-Llama-3-70B", "llama3_70B-fp8"}));
    lib.push_back(Entry(llama3("llama3.1_8B", {32, 4096, 14336, 32, 8, 0, 128256}, 131072), 8.03e9,
                        3, src + "; 8.03B HF model page",
                        {"Meta-Llama-3.1-8B", "llama3.1_8B-fp8"}));
    lib.push_back(
        Entry(llama3("llama3.1_70B", {80, 8192, 28672, 64, 8, 0, 128256}, 131072), 70.6e9, 3,
              src + "; 70.6B HF model page; Llama 3.3 70B has the same architecture",
              {"llama3.3_70B", "Llama-3.3-70B-Instruct", "llama3.1_70B-fp8", "llama3.3_70B-fp8"}));
    lib.push_back(Entry(llama3("llama3.1_405B", {126, 16384, 53248, 128, 8, 0, 128256}, 131072),
                        405e9, 3, src + "; 405B",
                        // torchtitan's llama3 flavor "405B" (models/llama3/__init__.py): the
                        // 405B was released as Llama 3.1 only.
                        {"llama3.1_405B-fp8", "llama3_405B", "Meta-Llama-3.1-405B"}));
    // torchtitan's test flavor (models/llama3/__init__.py "debugmodel"): dim 256, 6 layers,
    // 16 heads (n_kv_heads defaults to n_heads), FFN compute_ffn_hidden_dim(256, multiple_of
    // 256) = 256 x ceil(int(2 x 1024 / 3) / 256) = 768, vocab 2048, untied output. Parameters:
    // 2 x 2048 x 256 + 6 x (4 x 256^2 + 3 x 256 x 768 + 2 x 256) + 256 = 6,163,712.
    lib.push_back(Entry(llama3("llama3_debugmodel", {6, 256, 768, 16, 16, 0, 2048}, 131072),
                        6163712, 0, "torchtitan models/llama3/__init__.py (debugmodel flavor)",
                        {"llama3_debugmodel_flex_attn", "llama3_debugmodel_varlen_attn"}));
  }
  // ---- Llama 3.2 (tied embeddings): Meta model card (1.23B / 3.21B) and HF config.json.
  {
    const std::string src =
        "Llama 3.2 model card (github.com/meta-llama/llama-models MODEL_CARD.md); HF config.json";
    ModelSpec m = Transformer("llama3.2_1B", "llama", {16, 2048, 8192, 32, 8, 64, 128256});
    m.untie_embeddings_and_output_weights = false;
    m.max_position_embeddings = 131072;
    m.seq_length = 8192;
    lib.push_back(Entry(m, 1.23e9, 3, src, {"Llama-3.2-1B"}));
    m = Transformer("llama3.2_3B", "llama", {28, 3072, 8192, 24, 8, 128, 128256});
    m.untie_embeddings_and_output_weights = false;
    m.max_position_embeddings = 131072;
    m.seq_length = 8192;
    lib.push_back(Entry(m, 3.21e9, 3, src, {"Llama-3.2-3B"}));
  }
  // ---- Llama 4: HF meta-llama/Llama-4-{Scout-17B-16E,Maverick-17B-128E} config.json; Meta blog
  // "The Llama 4 herd" (109B / 400B total, 17B active). Top-1 routed expert + one shared expert.
  {
    const std::string src =
        "Meta 'The Llama 4 herd' (ai.meta.com/blog/llama-4-multimodal-intelligence); HF "
        "config.json";
    ModelSpec m = Transformer("llama4_17B16E", "llama4", {48, 5120, 16384, 40, 8, 128, 202048});
    MakeMoe(m, 16, 1, 8192, 8192);
    m.qk_layernorm = true;
    m.max_position_embeddings = 262144;
    m.seq_length = 8192;
    lib.push_back(Entry(
        m, 109e9, 3, src + " (Scout; the published total includes the vision encoder)",
        {"Llama-4-Scout-17B-16E", "llama4_scout", "llama4_17Bx16E", "llama4_17Bx16E-fp8"}, 17e9));
    m = Transformer("llama4_17B128E", "llama4", {48, 5120, 16384, 40, 8, 128, 202048});
    MakeMoe(m, 128, 1, 8192, 8192);
    m.moe.moe_layers = EveryNth(48, 2);  // interleaved dense / MoE layers
    m.max_position_embeddings = 262144;
    m.seq_length = 8192;
    lib.push_back(Entry(
        m, 400e9, 3, src + " (Maverick)",
        {"Llama-4-Maverick-17B-128E", "llama4_maverick", "llama4_17Bx128E", "llama4_17Bx128E-fp8"},
        17e9));
  }
  // ---- Mistral / Mixtral: Jiang et al. 2023 (arXiv 2310.06825), 2024 (arXiv 2401.04088);
  // Mistral AI "Cheaper, Better, Faster, Stronger" (8x22B: 141B total, 39B active).
  {
    ModelSpec m = Transformer("mistral_7B", "mistral", {32, 4096, 14336, 32, 8, 128, 32000});
    m.max_position_embeddings = 32768;
    lib.push_back(
        Entry(m, 7.24e9, 3,
              "Mistral 7B paper (arXiv 2310.06825) Table 1; 7.24B HF model page. Its 4096-token "
              "sliding window is not modelled (no effect at the default 4096 sequence)",
              {"Mistral-7B-v0.1", "mistral-7b"}));
    m = Transformer("mixtral_8x7B", "mixtral", {32, 4096, 14336, 32, 8, 128, 32000});
    MakeMoe(m, 8, 2, 14336);
    m.max_position_embeddings = 32768;
    lib.push_back(Entry(m, 46.7e9, 3,
                        "Mixtral paper (arXiv 2401.04088) Table 1 (46.7B total, 12.9B active)",
                        {"mixtral_8x7B_v0.1"}, 12.9e9));
    m = Transformer("mixtral_8x22B", "mixtral", {56, 6144, 16384, 48, 8, 128, 32000});
    MakeMoe(m, 8, 2, 16384);
    m.max_position_embeddings = 65536;
    lib.push_back(
        Entry(m, 141e9, 3,
              "Mistral AI Mixtral 8x22B announcement (141B total, 39B active); HF config.json",
              {"mixtral_8x22B_v0.1"}, 39e9));
  }
  // ---- Qwen2.5: Qwen2.5 technical report (arXiv 2412.15115) Table 1; model cards give the
  // counts. Bias on Q/K/V only; 3B ties its embeddings.
  {
    const std::string src =
        "Qwen2.5 report (arXiv 2412.15115) Table 1; HF Qwen/Qwen2.5-* model card and config.json";
    auto qwen25 = [](std::string name, Dims d, bool tied) {
      ModelSpec m = Transformer(std::move(name), "qwen2.5", d);
      m.add_qkv_bias = true;
      m.untie_embeddings_and_output_weights = !tied;
      m.max_position_embeddings = 32768;
      return m;
    };
    lib.push_back(Entry(qwen25("qwen2.5_0.5B", {24, 896, 4864, 14, 2, 64, 151936}, true), 0.49e9, 2,
                        src, {"Qwen2.5-0.5B"}));
    lib.push_back(Entry(qwen25("qwen2.5_1.5B", {28, 1536, 8960, 12, 2, 128, 151936}, true), 1.54e9,
                        3, src, {"Qwen2.5-1.5B"}));
    lib.push_back(Entry(qwen25("qwen2.5_3B", {36, 2048, 11008, 16, 2, 128, 151936}, true), 3.09e9,
                        3, src, {"Qwen2.5-3B"}));
    lib.push_back(Entry(qwen25("qwen2.5_7B", {28, 3584, 18944, 28, 4, 128, 152064}, false), 7.61e9,
                        3, src, {"Qwen2.5-7B"}));
    lib.push_back(Entry(qwen25("qwen2.5_14B", {48, 5120, 13824, 40, 8, 128, 152064}, false), 14.7e9,
                        3, src, {"Qwen2.5-14B"}));
    lib.push_back(Entry(qwen25("qwen2.5_32B", {64, 5120, 27648, 40, 8, 128, 152064}, false), 32.5e9,
                        3, src, {"Qwen2.5-32B"}));
    lib.push_back(Entry(qwen25("qwen2.5_72B", {80, 8192, 29568, 64, 8, 128, 152064}, false), 72.7e9,
                        3, src, {"Qwen2.5-72B"}));
    ModelSpec r1 =
        qwen25("deepseek_r1_distill_qwen_1.5B", {28, 1536, 8960, 12, 2, 128, 151936}, false);
    r1.family = "qwen2.5";
    r1.max_position_embeddings = 131072;
    lib.push_back(Entry(
        r1, 1.78e9, 3,
        "DeepSeek-R1 paper (arXiv 2501.12948) §2.4; HF deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B "
        "config.json (untied head) and model page (1.78B)",
        {"DeepSeek-R1-Distill-Qwen-1.5B"}));
  }
  // ---- Qwen3: Qwen3 technical report (arXiv 2505.09388) Tables 1-2; model cards give the
  // counts. q/k RMSNorm, head_dim 128 everywhere, no QKV bias; <= 4B tie embeddings.
  {
    const std::string src =
        "Qwen3 report (arXiv 2505.09388) Tables 1-2; HF Qwen/Qwen3-* model card and config.json";
    auto qwen3 = [](std::string name, Dims d, bool tied) {
      ModelSpec m = Transformer(std::move(name), "qwen3", d);
      m.qk_layernorm = true;
      m.untie_embeddings_and_output_weights = !tied;
      m.max_position_embeddings = 40960;
      return m;
    };
    lib.push_back(Entry(qwen3("qwen3_0.6B", {28, 1024, 3072, 16, 8, 128, 151936}, true), 0.6e9, 1,
                        src, {"Qwen3-0.6B"}));
    lib.push_back(Entry(qwen3("qwen3_1.7B", {28, 2048, 6144, 16, 8, 128, 151936}, true), 1.7e9, 2,
                        src, {"Qwen3-1.7B"}));
    lib.push_back(Entry(qwen3("qwen3_4B", {36, 2560, 9728, 32, 8, 128, 151936}, true), 4.0e9, 2,
                        src, {"Qwen3-4B"}));
    lib.push_back(Entry(qwen3("qwen3_8B", {36, 4096, 12288, 32, 8, 128, 151936}, false), 8.2e9, 2,
                        src, {"Qwen3-8B"}));
    lib.push_back(Entry(qwen3("qwen3_14B", {40, 5120, 17408, 40, 8, 128, 151936}, false), 14.8e9, 3,
                        src, {"Qwen3-14B"}));
    lib.push_back(Entry(qwen3("qwen3_32B", {64, 5120, 25600, 64, 8, 128, 151936}, false), 32.8e9, 3,
                        src, {"Qwen3-32B"}));
    ModelSpec m = qwen3("qwen3_30B_A3B", {48, 2048, 6144, 32, 4, 128, 151936}, false);
    MakeMoe(m, 128, 8, 768);
    lib.push_back(
        Entry(m, 30.5e9, 3, src + " (30.5B total, 3.3B active)", {"Qwen3-30B-A3B"}, 3.3e9));
    m = qwen3("qwen3_235B_A22B", {94, 4096, 12288, 64, 4, 128, 151936}, false);
    MakeMoe(m, 128, 8, 1536);
    lib.push_back(Entry(m, 235e9, 3, src + " (235B total, 22B active)", {"Qwen3-235B-A22B"}, 22e9));
  }
  // ---- DeepSeek: V2 paper (arXiv 2405.04434) §3.1.2 and Appendix B (V2-Lite); V3 paper
  // (arXiv 2412.19437) §4.2; HF config.json. MLA, shared experts, first-k-dense layers.
  {
    ModelSpec m =
        Transformer("deepseek_v2_lite", "deepseek", {27, 2048, 10944, 16, 16, 128, 102400});
    MakeMla(m, 0, 512);
    MakeMoe(m, 64, 6, 1408, 2816);
    m.moe.moe_layers = FirstKDense(27, 1);
    m.max_position_embeddings = 163840;
    lib.push_back(Entry(m, 15.7e9, 3,
                        "DeepSeek-V2 paper (arXiv 2405.04434) Appendix B (15.7B total, 2.4B "
                        "active); HF config.json",
                        {"DeepSeek-V2-Lite", "deepseek_v2_16B", "deepseek2-16b", "deepseek_v3_16b",
                         "deepseek_v3_16b-fp8"},
                        2.4e9));
    m = Transformer("deepseek_v2", "deepseek", {60, 5120, 12288, 128, 128, 128, 102400});
    MakeMla(m, 1536, 512);
    MakeMoe(m, 160, 6, 1536, 3072);
    m.moe.moe_layers = FirstKDense(60, 1);
    m.moe.router_groups = 8;  // HF config.json n_group 8, topk_group 3
    m.moe.router_group_topk = 3;
    m.max_position_embeddings = 163840;
    lib.push_back(Entry(
        m, 236e9, 3,
        "DeepSeek-V2 paper (arXiv 2405.04434) §3.1.2 (236B total, 21B active); HF config.json; "
        "DeepSeek-V2.5 has the same architecture",
        {"DeepSeek-V2.5", "deepseek_v3_236b", "deepseek_v3_236b-fp8", "deepseek2-236b"}, 21e9));
    m = Transformer("deepseek_v3", "deepseek", {61, 7168, 18432, 128, 128, 128, 129280});
    MakeMla(m, 1536, 512);
    MakeMoe(m, 256, 8, 2048, 2048);
    m.moe.moe_layers = FirstKDense(61, 3);
    m.moe.router_bias = true;  // auxiliary-loss-free balancing bias per expert
    m.moe.router_groups = 8;   // HF config.json n_group 8, topk_group 4
    m.moe.router_group_topk = 4;
    m.mtp_num_layers = 1;
    m.max_position_embeddings = 163840;
    lib.push_back(
        Entry(m, 685e9, 3,
              "DeepSeek-V3 paper (arXiv 2412.19437) §4.2; HF model card: 685B = 671B main model + "
              "14B MTP module (37B active); config.json; DeepSeek-V3.1 has the same architecture, "
              "and so has DeepSeek-R1 (HF deepseek-ai/DeepSeek-R1 config.json: 61 layers of 7168, "
              "256 experts, top-8)",
              {"DeepSeek-V3.1-Base", "DeepSeek-R1", "deepseek_v3_671b", "deepseek_v3_671b-fp8",
               "deepseek3-671b"},
              37e9));
  }
  // ---- Kimi K2: DeepSeek-V3 architecture with 384 experts, 64 heads, one dense layer and no
  // MTP. Kimi K2 technical report (arXiv 2507.20534): "32 billion activated parameters and
  // 1 trillion total parameters"; HF moonshotai/Kimi-K2-Instruct config.json.
  {
    ModelSpec m = Transformer("kimi_k2", "kimi", {61, 7168, 18432, 64, 64, 128, 163840});
    MakeMla(m, 1536, 512);
    MakeMoe(m, 384, 8, 2048, 2048);
    m.moe.moe_layers = FirstKDense(61, 1);
    m.moe.router_bias = true;
    m.max_position_embeddings = 131072;
    lib.push_back(Entry(m, 1e12, 1,
                        "Kimi K2 technical report (arXiv 2507.20534) (1T total, 32B active); HF "
                        "moonshotai/Kimi-K2-Instruct config.json",
                        {"Kimi-K2-Instruct", "Kimi-K2-Base", "kimi-k2-1t"}, 32e9));
  }
  // ---- GPT-3 sizes: Brown et al. 2020 (arXiv 2005.14165) Table 2.1. The published sizes are
  // names rounded to two or three digits ("350M" is a 356M-parameter model).
  {
    const std::string src = "GPT-3 paper (arXiv 2005.14165) Table 2.1";
    lib.push_back(Entry(Gpt3("gpt3_125M", 12, 768, 12, 64), 125e6, 3, src, {"GPT-3 Small"}));
    lib.push_back(Entry(Gpt3("gpt3_350M", 24, 1024, 16, 64), 350e6, 2, src, {"GPT-3 Medium"}));
    lib.push_back(Entry(Gpt3("gpt3_760M", 24, 1536, 16, 96), 760e6, 2, src, {"GPT-3 Large"}));
    // Table 2.1 lists 24 heads of 128 for XL, which would make the attention 3072 wide and the
    // model 1.52B; a 2048-wide attention (16 heads of 128) gives the published 1.3B.
    lib.push_back(Entry(Gpt3("gpt3_xl_1.3B", 24, 2048, 16, 128), 1.3e9, 2, src, {"GPT-3 XL"}));
    lib.push_back(Entry(Gpt3("gpt3_2.7B", 32, 2560, 32, 80), 2.7e9, 2, src, {"GPT-3 2.7B"}));
    lib.push_back(Entry(Gpt3("gpt3_6.7B", 32, 4096, 32, 128), 6.7e9, 2, src, {"GPT-3 6.7B"}));
    // d_model 5140 with 40 heads of 128: the query width (5120) differs from the hidden size.
    lib.push_back(Entry(Gpt3("gpt3_13B", 40, 5140, 40, 128), 13.0e9, 3, src, {"GPT-3 13B"}));
    lib.push_back(
        Entry(Gpt3("gpt3_175B", 96, 12288, 96, 128), 175.0e9, 4, src, {"GPT-3", "GPT-3 175B"}));
  }
  // ---- Grok-1: xai-org/grok-1 release (model.py / run.py): 64 layers, 8 experts top-2,
  // 48 query / 8 KV heads, widening factor 8, vocab 131072, norms before and after attention
  // and MoE, output tied to the embedding. 314B parameters.
  {
    ModelSpec m = Transformer("grok1", "grok", {64, 6144, 32768, 48, 8, 128, 131072});
    MakeMoe(m, 8, 2, 32768);
    m.norms_per_layer = 4;
    m.untie_embeddings_and_output_weights = false;
    m.max_position_embeddings = 8192;
    m.seq_length = 8192;
    lib.push_back(Entry(m, 314e9, 3,
                        "xAI Grok-1 open release (github.com/xai-org/grok-1 README, model.py)",
                        {"Grok-1", "grok-1"}));
  }
  // ---- gpt-oss: OpenAI gpt-oss model card (arXiv 2508.10925) Table 1; HF config.json. Biases
  // on QKV/O and experts, router bias, per-head attention sinks, alternating 128-token
  // sliding-window layers, SwiGLU experts of width 2880, no shared expert.
  {
    const std::string src =
        "gpt-oss model card (arXiv 2508.10925) Table 1; HF openai/gpt-oss-* config.json";
    auto oss = [](std::string name, int64_t layers, int64_t experts) {
      ModelSpec m =
          Transformer(std::move(name), "gpt-oss", {layers, 2880, 2880, 64, 8, 64, 201088});
      MakeMoe(m, experts, 4, 2880);
      m.moe.router_bias = true;
      m.add_bias_linear = true;
      m.attention_sinks = true;
      m.sliding_window = 128;
      m.sliding_window_period = 2;
      m.max_position_embeddings = 131072;
      return m;
    };
    lib.push_back(Entry(oss("gpt_oss_20B", 24, 32), 20.91e9, 4,
                        src + " (20.91B total, 3.61B active)", {"gpt_oss_20b-fp8"}, 3.61e9));
    lib.push_back(Entry(oss("gpt_oss_120B", 36, 128), 116.83e9, 5,
                        src + " (116.83B total, 5.13B active)", {"gpt_oss_120b-fp8"}, 5.13e9));
  }
  // ---- Gemma 2: Gemma 2 report (arXiv 2408.00118) Table 1; HF config.json. GeGLU (gated),
  // pre- and post-norms around attention and MLP, tied embeddings, vocab 256000,
  // alternating 4096-token local / global attention.
  {
    const std::string src =
        "Gemma 2 report (arXiv 2408.00118) Tables 1-2; HF google/gemma-2-* config.json";
    auto gemma2 = [](std::string name, Dims d) {
      ModelSpec m = Transformer(std::move(name), "gemma2", d);
      m.norms_per_layer = 4;
      m.untie_embeddings_and_output_weights = false;
      m.sliding_window = 4096;
      m.sliding_window_period = 2;
      m.max_position_embeddings = 8192;
      m.seq_length = 8192;
      return m;
    };
    lib.push_back(Entry(gemma2("gemma2_2B", {26, 2304, 9216, 8, 4, 256, 256000}), 2.61e9, 3, src,
                        {"gemma-2-2b"}));
    lib.push_back(Entry(gemma2("gemma2_9B", {42, 3584, 14336, 16, 8, 256, 256000}), 9.24e9, 3, src,
                        {"gemma-2-9b"}));
    lib.push_back(Entry(gemma2("gemma2_27B", {46, 4608, 36864, 32, 16, 128, 256000}), 27.2e9, 3,
                        src, {"gemma-2-27b"}));
  }
  // ---- Gemma 3 (text decoder only): Gemma 3 report (arXiv 2503.19786) Table 1 gives the
  // embedding and non-embedding counts; q/k norms, 5 local (1024-token) : 1 global layers.
  {
    const std::string src =
        "Gemma 3 report (arXiv 2503.19786) Table 1 (embedding + non-embedding, vision encoder "
        "excluded); HF config.json";
    auto gemma3 = [](std::string name, Dims d, int64_t window) {
      ModelSpec m = Transformer(std::move(name), "gemma3", d);
      m.norms_per_layer = 4;
      m.qk_layernorm = true;
      m.untie_embeddings_and_output_weights = false;
      m.sliding_window = window;
      m.sliding_window_period = 6;
      m.max_position_embeddings = 131072;
      m.seq_length = 8192;
      return m;
    };
    lib.push_back(Entry(gemma3("gemma3_1B", {26, 1152, 6912, 4, 1, 256, 262144}, 512),
                        (302 + 698) * 1e6, 3, src, {"gemma-3-1b"}));
    lib.push_back(Entry(gemma3("gemma3_4B", {34, 2560, 10240, 8, 4, 256, 262208}, 1024),
                        (675 + 3209) * 1e6, 4, src, {"gemma-3-4b"}));
    lib.push_back(Entry(gemma3("gemma3_12B", {48, 3840, 15360, 16, 8, 256, 262208}, 1024),
                        (1012 + 10759) * 1e6, 5, src, {"gemma-3-12b"}));
    lib.push_back(Entry(gemma3("gemma3_27B", {62, 5376, 21504, 32, 16, 128, 262208}, 1024),
                        (1416 + 25600) * 1e6, 5, src, {"gemma-3-27b"}));
  }
  // ---- Gemma 4 (text decoder only): MaxText configs/models/gemma4-{26b,31b}.yml. Five local
  // layers (1024-token window, head dim 256) per global layer (head dim 512, fewer KV heads, K
  // and V from one projection: share_kv_projections); q/k norms, pre- and post-norms, tied
  // embeddings, gated GELU. The 26B MoE routes 8 of 128 experts of width 704 beside one shared
  // expert of base_mlp_dim.
  {
    const std::string src =
        "MaxText configs/models/gemma4-26b.yml / gemma4-31b.yml; Google Gemma 4 model card "
        "(26B A4B: 25.2B total, 3.8B active; 31B dense)";
    auto gemma4 = [](std::string name, Dims d, int64_t global_kv_heads) {
      ModelSpec m = Transformer(std::move(name), "gemma4", d);
      m.norms_per_layer = 4;
      m.qk_layernorm = true;
      m.untie_embeddings_and_output_weights = false;
      m.sliding_window = 1024;
      m.sliding_window_period = 6;
      m.global_attention.kv_channels = 512;
      m.global_attention.num_query_groups = global_kv_heads;
      m.global_attention.shared_kv = true;
      m.max_position_embeddings = 262144;
      m.seq_length = 8192;
      return m;
    };
    ModelSpec m = gemma4("gemma4_26B", {30, 2816, 2112, 16, 8, 256, 262144}, 2);
    MakeMoe(m, 128, 8, 704, 2112);
    lib.push_back(Entry(m, 25.2e9, 3, src, {"gemma4-26b", "gemma-4-26b-a4b"}, 3.8e9));
    lib.push_back(Entry(gemma4("gemma4_31B", {60, 5376, 21504, 32, 16, 256, 262144}, 4), 31e9, 2,
                        src, {"gemma4-31b", "gemma-4-31b"}));
  }
  // ---- Architectures the projection model does not cover; listed so that callers can say so.
  lib.push_back(Unsupported(
      "mamba_370M", "mamba", Architecture::kStateSpace, 370e6, 2,
      "Mamba paper (arXiv 2312.00752), 370M configuration; Primus megatron/mamba_370M.yaml",
      {"mamba-370m"}));
  lib.push_back(
      Unsupported("flux.1_dev", "flux", Architecture::kDiffusion, 12e9, 2,
                  "Black Forest Labs FLUX.1 [dev] model card (12B rectified-flow transformer)",
                  {"flux.1_dev_t2i", "flux_dev", "FLUX.1-dev"}));
  lib.push_back(Unsupported("flux.1_schnell", "flux", Architecture::kDiffusion, 12e9, 2,
                            "Black Forest Labs FLUX.1 [schnell] model card (12B)",
                            {"flux.1_schnell_t2i", "FLUX.1-schnell"}));
  lib.push_back(Unsupported("wan2.1_t2v_1.3B", "wan", Architecture::kDiffusion, 1.3e9, 2,
                            "Wan 2.1 report (arXiv 2503.20314) Table 1",
                            {"wan2.1_1.3b", "Wan2.1-T2V-1.3B"}));
  lib.push_back(Unsupported("wan2.1_t2v_14B", "wan", Architecture::kDiffusion, 14e9, 2,
                            "Wan 2.1 report (arXiv 2503.20314) Table 1",
                            {"wan2.1_14b", "Wan2.1-T2V-14B"}));
  lib.push_back(Unsupported("wan2.2_ti2v_5B", "wan", Architecture::kDiffusion, 5e9, 1,
                            "Wan 2.2 model card (Wan-AI/Wan2.2-TI2V-5B)", {"Wan2.2-TI2V-5B"}));

  for (ModelEntry& e : lib) {
    ModelSpec& m = e.spec;
    if (m.max_position_embeddings == 0) m.max_position_embeddings = m.seq_length;
  }
  return lib;
}

}  // namespace

double ModelEntry::PublishedRounding() const {
  if (published_digits <= 0 || published_params <= 0) return 0;
  const double magnitude = std::floor(std::log10(published_params));
  return 0.5 * std::pow(10.0, magnitude - published_digits + 1);
}

const std::vector<ModelEntry>& ModelLibrary() {
  static const std::vector<ModelEntry> library = BuildLibrary();
  return library;
}

const ModelEntry* FindModel(std::string_view name) {
  const std::string key = FoldName(name);
  if (key.empty()) return nullptr;
  for (const ModelEntry& e : ModelLibrary()) {
    if (FoldName(e.spec.name) == key) return &e;
    for (const std::string& alias : e.aliases) {
      if (FoldName(alias) == key) return &e;
    }
  }
  // A Hugging Face id ("meta-llama/Llama-3.1-8B", as Primus model files and tokenizer keys
  // write it): the model's name follows the organisation.
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos && slash + 1 < name.size()) {
    return FindModel(name.substr(slash + 1));
  }
  // Meta named its checkpoints "Meta-Llama-3-8B" and "Meta-Llama-3.1-70B" before dropping the
  // prefix.
  if (name.size() > 5 && FoldName(name.substr(0, 5)) == "meta") {
    if (const ModelEntry* e = FindModel(name.substr(5))) return e;
  }
  // A released checkpoint's name adds what was done to the weights, not to the architecture:
  // "-Instruct", "-Chat", "-it" / "-pt" (Gemma), "-hf" (Llama 2's converted weights) or a
  // release date ("-2507", "-0324"). One trailing segment at a time. Not "-Base": Primus's
  // model files name their shared templates *_base.yaml. A version stays: Mistral-7B-v0.3 has
  // another vocabulary than v0.1, so only a suffix before it goes ("Mixtral-8x22B-Instruct-
  // v0.1" is "Mixtral-8x22B-v0.1").
  const auto weights_suffix = [](std::string_view segment) {
    std::string t(segment);
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool date = t.size() == 4 && std::all_of(t.begin(), t.end(), [](char c) {
                        return std::isdigit(static_cast<unsigned char>(c));
                      });
    return date || t == "instruct" || t == "chat" || t == "it" || t == "pt" || t == "hf";
  };
  const size_t sep = name.find_last_of("-_ ");
  if (sep == std::string_view::npos || sep == 0) return nullptr;
  const std::string_view tail = name.substr(sep + 1);
  if (weights_suffix(tail)) return FindModel(name.substr(0, sep));
  const bool version = tail.size() >= 2 && (tail[0] == 'v' || tail[0] == 'V') &&
                       std::all_of(tail.begin() + 1, tail.end(), [](char c) {
                         return c == '.' || std::isdigit(static_cast<unsigned char>(c));
                       });
  const size_t before = sep > 0 ? name.find_last_of("-_ ", sep - 1) : std::string_view::npos;
  if (!version || before == std::string_view::npos || before == 0 ||
      !weights_suffix(name.substr(before + 1, sep - before - 1))) {
    return nullptr;
  }
  return FindModel(std::string(name.substr(0, before)) + std::string(name.substr(sep)));
}

std::vector<std::string> SimilarModelNames(std::string_view name, size_t max_results) {
  std::vector<std::string> spellings;
  std::vector<const std::string*> names;  // the entry name behind each spelling
  for (const ModelEntry& e : ModelLibrary()) {
    spellings.push_back(e.spec.name);
    names.push_back(&e.spec.name);
    for (const std::string& alias : e.aliases) {
      spellings.push_back(alias);
      names.push_back(&e.spec.name);
    }
  }
  std::vector<std::string> out;
  for (const std::string& close : ClosestNames(name, spellings, spellings.size())) {
    const size_t i = std::find(spellings.begin(), spellings.end(), close) - spellings.begin();
    if (std::find(out.begin(), out.end(), *names[i]) == out.end()) out.push_back(*names[i]);
    if (out.size() == max_results) break;
  }
  return out;
}

namespace {

// Candidate spellings of a model name with the remarks people add around it removed:
// "(17B-128E)", a trailing parameter count ("-671B", " 314B") or version (" v0.1").
std::vector<std::string> NameVariants(std::string_view name) {
  std::string base;
  int depth = 0;
  for (char c : name) {
    if (c == '(') ++depth;
    if (depth == 0) base += c;
    if (c == ')' && depth > 0) --depth;
  }
  while (!base.empty() && (base.back() == ' ' || base.back() == '-' || base.back() == '_')) {
    base.pop_back();
  }
  std::vector<std::string> out = {base};
  // Drop trailing segments one at a time while they look like a size or a version.
  std::string cut = base;
  for (int i = 0; i < 2; ++i) {
    const size_t sep = cut.find_last_of(" -_");
    if (sep == std::string::npos) break;
    const std::string tail = cut.substr(sep + 1);
    const bool size = tail.size() >= 2 && std::isdigit(static_cast<unsigned char>(tail[0])) &&
                      (std::tolower(static_cast<unsigned char>(tail.back())) == 'b' ||
                       std::tolower(static_cast<unsigned char>(tail.back())) == 'm');
    const bool version = tail.size() >= 2 && (tail[0] == 'v' || tail[0] == 'V') &&
                         std::isdigit(static_cast<unsigned char>(tail[1]));
    if (!size && !version) break;
    cut = cut.substr(0, sep);
    out.push_back(cut);
  }
  return out;
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

ModelMatch MatchModel(std::string_view name, const ModelDims& dims) {
  const bool moe = dims.experts > 0;
  // A name match must not contradict the stated width or expert count ("GPT3-5B" is not the
  // entry "gpt3" names); depth may differ, for shortened proxies of a model.
  auto same_kind = [&](const ModelEntry* e) {
    return e && e->spec.IsMoe() == moe &&
           (dims.hidden <= 0 || e->spec.hidden_size == dims.hidden) &&
           (!moe || e->spec.moe.num_experts == dims.experts);
  };
  const std::vector<std::string> variants = NameVariants(name);
  for (size_t i = 0; i < variants.size(); ++i) {
    const ModelEntry* e = FindModel(variants[i]);
    if (!same_kind(e)) continue;
    if (i == 0 && variants[0] == name) return {e, "by name"};
    return {e, "by name '" + variants[i] + "'"};
  }
  if (dims.layers <= 0 || dims.hidden <= 0) return {};
  const std::string folded = FoldName(name);
  const ModelEntry* best = nullptr;
  size_t best_prefix = 0;
  for (const ModelEntry& e : ModelLibrary()) {
    const ModelSpec& m = e.spec;
    if (m.num_layers != dims.layers || m.hidden_size != dims.hidden || !same_kind(&e)) continue;
    if (dims.heads > 0 && m.num_attention_heads != dims.heads) continue;
    if (moe && m.moe.num_experts != dims.experts) continue;
    // Same depth and width, different MLP: MPT-7B is not Llama-2-7B. Dense layers of an MoE
    // model may be stated with the expert width; either width agreeing is enough there.
    if (!moe && dims.ffn_hidden > 0 && m.ffn_hidden_size != dims.ffn_hidden) continue;
    if (moe && dims.moe_ffn_hidden > 0 && m.moe.ffn_hidden_size != dims.moe_ffn_hidden) continue;
    const size_t prefix = CommonPrefix(folded, FoldName(m.name));
    // Dense models of one size share depth and widths across families (MPT-7B and GPT-3 6.7B);
    // without experts to tell them apart, the family name must agree as well.
    if (!moe && prefix < 3) continue;
    if (!best || prefix > best_prefix) {
      best = &e;
      best_prefix = prefix;
    }
  }
  if (!best) return {};
  return {best, "by dimensions"};
}

}  // namespace sextant
