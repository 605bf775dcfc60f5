#include "model/parameter_count.h"

#include <gtest/gtest.h>

#include "model/model_library.h"

namespace sextant {
namespace {

const ModelSpec& Spec(const char* name) {
  const ModelEntry* e = FindModel(name);
  EXPECT_NE(e, nullptr) << name;
  return e->spec;
}

int64_t SumLayers(const ModelParams& p, int64_t LayerParams::*field) {
  int64_t sum = 0;
  for (const LayerParams& l : p.layers) sum += l.*field;
  return sum;
}

// Llama-2-7B (HF meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters). By hand:
// attention 4·4096² = 67,108,864; SwiGLU MLP 3·4096·11008 = 135,266,304; two RMSNorms 8,192;
// 32 layers = 6,476,267,520; embedding and untied head 32000·4096 = 131,072,000 each; final
// norm 4096.
TEST(ParameterCountTest, Llama2_7BMatchesPublishedExactCount) {
  const ModelSpec& m = Spec("llama2_7B");
  EXPECT_EQ(AttentionParams(m), 67108864);
  EXPECT_EQ(MlpParams(m, m.ffn_hidden_size), 135266304);
  const ModelParams p = CountParameters(m);
  ASSERT_EQ(p.layers.size(), 32u);
  EXPECT_EQ(p.layers[0].norms, 8192);
  EXPECT_EQ(p.layers[0].Total(), 202383360);
  EXPECT_EQ(p.embedding, 131072000);
  EXPECT_EQ(p.output_layer, 131072000);
  EXPECT_EQ(p.final_norm, 4096);
  EXPECT_EQ(p.Total(), 6738415616);
  EXPECT_EQ(p.Active(m), p.Total());  // dense: every parameter is active
}

// GQA: Llama-3-8B K and V are 4096 × (8 groups · 128) each: 4096·4096·2 + 4096·1024·2 =
// 41,943,040. Total 8,030,261,248 (HF model page: 8.03B).
TEST(ParameterCountTest, Llama3_8BGroupedQueryAttention) {
  const ModelSpec& m = Spec("llama3_8B");
  EXPECT_EQ(AttentionParams(m), 41943040);
  EXPECT_EQ(CountParameters(m).Total(), 8030261248);
}

// MQA (one KV head) and head_dim·heads ≠ hidden: Gemma 3 1B, h 1152, 4 heads of 256, 1 KV
// head: Q 1152·1024 + K,V 2·1152·256 + O 1024·1152 = 2,949,120. Norms: four 1152-wide RMSNorms
// plus q/k norms of 256 each = 5,120. Tied embedding 262144·1152 = 301,989,888 (Gemma 3
// report Table 1: 302M embedding, 698M non-embedding).
TEST(ParameterCountTest, Gemma3_1BMultiQueryWithPostNormsAndQkNorm) {
  const ModelSpec& m = Spec("gemma3_1B");
  EXPECT_EQ(AttentionParams(m), 2949120);
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[0].norms, 5120);
  EXPECT_EQ(p.embedding, 301989888);
  EXPECT_EQ(p.output_layer, 0);
  EXPECT_EQ(p.Total() - p.embedding, 697896064);  // 26 · 26,842,112 + final norm 1152
}

// Gemma 4 31B (MaxText gemma4-31b.yml): local layers 32 query heads and 16 KV heads of 256:
// Q and O 5376·8192 = 44,040,192 each, K + V 2·5376·4096 = 44,040,192 -> 132,120,576. Global
// layers (every sixth) 512-wide heads, 4 KV heads, one shared K/V projection: Q and O
// 5376·16384 = 88,080,384 each, K 5376·2048 = 11,010,048 -> 187,170,816. q/k norms follow the
// layer's head width (2·256 or 2·512) beside four 5376-wide norms.
TEST(ParameterCountTest, Gemma4_31BGlobalLayersHaveTheirOwnAttention) {
  const ModelSpec& m = Spec("gemma4_31B");
  EXPECT_EQ(AttentionParams(m, 0), 132120576);
  EXPECT_EQ(AttentionParams(m, 5), 187170816);
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[4].norms, 4 * 5376 + 2 * 256);
  EXPECT_EQ(p.layers[5].norms, 4 * 5376 + 2 * 512);
  // 50 local + 10 global attention blocks.
  EXPECT_EQ(SumLayers(p, &LayerParams::attention), 50 * 132120576LL + 10 * 187170816LL);
}

// Qwen2.5-7B: bias on Q, K and V only (3584 + 2·512); 7,615,616,512 total (model card 7.61B).
TEST(ParameterCountTest, Qwen25_7BQkvBias) {
  const ModelSpec& m = Spec("qwen2.5_7B");
  EXPECT_EQ(AttentionParams(m), 12845056 + 3670016 + 12845056 + 4608);
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[0].attention_bias, 0);
  EXPECT_EQ(p.Total(), 7615616512);
}

// GPT-3 125M: LayerNorm (weight + bias), biases on every linear, 2-matrix 4h MLP, learned
// positions, tied head. Per layer 12h² + 13h = 7,087,872 with h = 768; embedding
// 50257·768 + 2048·768 = 40,170,240; final LayerNorm 1,536. Total 125,226,240.
TEST(ParameterCountTest, Gpt3SmallLayerNormBiasesLearnedPositions) {
  const ModelSpec& m = Spec("gpt3_125M");
  EXPECT_EQ(MlpParams(m, m.ffn_hidden_size), 2 * 768 * 3072 + 3072 + 768);
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[0].attention, 4 * 768 * 768 + 3 * 768);
  EXPECT_EQ(p.layers[0].attention_bias, 768);
  EXPECT_EQ(p.layers[0].norms, 2 * 2 * 768);
  EXPECT_EQ(p.layers[0].Total(), 7087872);
  EXPECT_EQ(p.embedding, 40170240);
  EXPECT_EQ(p.final_norm, 1536);
  EXPECT_EQ(p.Total(), 125226240);
}

// gpt-oss-20b: biases everywhere, router bias, sinks. Per layer: attention 26,542,080 +
// QKV bias 5,120; output bias 2,880 + 64 sinks; 32 experts of 3·2880² + 3·2880 bias =
// 24,891,840 each; router 2880·32 + 32; norms 5,760. Total 20,914,757,184 (model card 20.91B).
TEST(ParameterCountTest, GptOss20BBiasesSinksRouterBias) {
  const ModelSpec& m = Spec("gpt_oss_20B");
  const ModelParams p = CountParameters(m);
  const LayerParams& l = p.layers[0];
  EXPECT_TRUE(l.is_moe);
  EXPECT_EQ(l.attention, 26542080 + 5120);
  EXPECT_EQ(l.attention_bias, 2880 + 64);
  EXPECT_EQ(l.routed_experts, 32 * 24891840);
  EXPECT_EQ(l.router, 92192);
  EXPECT_EQ(l.shared_experts, 0);
  EXPECT_EQ(l.dense_mlp, 0);
  EXPECT_EQ(p.Total(), 20914757184);
  // Active: 4 of 32 experts.
  EXPECT_EQ(l.Active(m), l.Total() - 28 * 24891840);
}

// Mixtral 8x7B: 46,702,792,704 total; active (top-2 of 8) 12,879,925,248 (paper: 12.9B).
TEST(ParameterCountTest, Mixtral8x7BTotalAndActive) {
  const ModelSpec& m = Spec("mixtral_8x7B");
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[0].router, 4096 * 8);
  EXPECT_EQ(p.Total(), 46702792704);
  EXPECT_EQ(p.Active(m), 12879925248);
}

// DeepSeek-V2-Lite MLA without query compression: Q 2048·16·192 = 6,291,456; KV down
// 2048·(512+64) = 1,179,648; KV up 512·16·256 = 2,097,152; O 16·128·2048 = 4,194,304. The
// kv latent RMSNorm adds 512. Layer 0 is dense (10944), the other 26 have 64 experts of 1408
// plus two shared (2816). Total 15,706,484,224 (paper: 15.7B).
TEST(ParameterCountTest, DeepSeekV2LiteMlaWithoutQueryLora) {
  const ModelSpec& m = Spec("deepseek_v2_lite");
  EXPECT_EQ(AttentionParams(m), 13762560);
  const ModelParams p = CountParameters(m);
  EXPECT_FALSE(p.layers[0].is_moe);
  EXPECT_TRUE(p.layers[1].is_moe);
  EXPECT_EQ(p.layers[0].norms, 2 * 2048 + 512);
  EXPECT_EQ(p.layers[0].Total(), 81007104);
  EXPECT_EQ(p.layers[1].routed_experts, 553648128);
  EXPECT_EQ(p.layers[1].shared_experts, 17301504);
  EXPECT_EQ(p.layers[1].router, 131072);
  EXPECT_EQ(p.Total(), 15706484224);
}

// DeepSeek-V3: MLA with q LoRA 1536 (attention 187,105,280 + latent norms 1536 + 512), first
// three layers dense, 58 MoE layers with 256 experts, one shared expert and the expert bias.
// Main model 671,026,419,200 ("671B"); the MTP module adds eh_proj 2·7168², enorm, hnorm and
// its final norm (3·7168) and one MoE layer (11,507,286,272): 11,610,068,224.
TEST(ParameterCountTest, DeepSeekV3MlaFirstKDenseSharedExpertsMtp) {
  const ModelSpec& m = Spec("deepseek_v3");
  EXPECT_EQ(AttentionParams(m), 187105280);
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[0].Total(), 583483392);
  EXPECT_EQ(p.layers[3].Total(), 11507286272);
  EXPECT_EQ(p.layers[3].router, 256 * 7168 + 256);
  ASSERT_EQ(p.mtp_layers.size(), 1u);
  EXPECT_EQ(p.mtp_extra, 2 * 7168 * 7168 + 3 * 7168);
  int64_t mtp = p.mtp_extra;
  for (const LayerParams& l : p.mtp_layers) mtp += l.Total();
  EXPECT_EQ(mtp, 11610068224);
  EXPECT_EQ(p.Total() - mtp, 671026419200);
}

// Kimi K2: MLA with 64 heads (q down 7168·1536, q up 1536·64·192, kv down 7168·576, kv up
// 512·64·256, O 64·128·7168 = 101,122,048), one dense layer (497,500,160), 60 MoE layers of 384
// experts + 1 shared + router with bias (17,059,365,248 each), vocab 163840 untied:
// 1,026,408,232,448 total ("1 trillion"); active 32,861,500,928 ("32 billion activated").
TEST(ParameterCountTest, KimiK2) {
  const ModelSpec& m = Spec("kimi_k2");
  EXPECT_EQ(AttentionParams(m), 101122048);
  const ModelParams p = CountParameters(m);
  EXPECT_EQ(p.layers[0].Total(), 497500160);
  EXPECT_EQ(p.layers[1].Total(), 17059365248);
  EXPECT_EQ(p.Total(), 1026408232448);
  EXPECT_EQ(p.Active(m), 32861500928);
}

// Llama 4 Maverick: Megatron moe_layer_freq 2 makes layers 0, 2, 4, ... MoE (24 of 48).
// Dense layer 314,583,040; MoE layer (128 experts of 8192 + shared 8192 + router)
// 16,295,536,640; untied embedding and head 2·202048·5120, final norm 5120: total
// 400,711,848,960 (Meta: 400B).
TEST(ParameterCountTest, Llama4MaverickInterleavedMoe) {
  const ModelSpec& m = Spec("llama4_17B128E");
  EXPECT_EQ(m.NumMoeLayers(), 24);
  const ModelParams p = CountParameters(m);
  EXPECT_TRUE(p.layers[0].is_moe);
  EXPECT_FALSE(p.layers[1].is_moe);
  EXPECT_EQ(p.layers[1].Total(), 314583040);
  EXPECT_EQ(p.layers[0].Total(), 16295536640);
  EXPECT_EQ(p.Total(), 400711848960);
}

// Tied vs untied and vocabulary padding: Megatron pads 32000 to a multiple of 128·TP; at TP 3
// that is 32256, so the embedding grows by 256·4096 rows and so does the untied head.
TEST(ParameterCountTest, PaddedVocabularyAndTiedHead) {
  ModelSpec m = Spec("llama2_7B");
  EXPECT_EQ(m.PaddedVocabSize(3), 32256);
  const ModelParams padded = CountParameters(m, m.PaddedVocabSize(3));
  EXPECT_EQ(padded.Total() - CountParameters(m).Total(), 2 * 256 * 4096);
  m.untie_embeddings_and_output_weights = false;
  EXPECT_EQ(CountParameters(m).Total(), 6738415616 - 131072000);
}

// LayerNorm doubles every norm (weight + bias) relative to RMSNorm.
TEST(ParameterCountTest, LayerNormVersusRmsNorm) {
  ModelSpec m = Spec("llama2_7B");
  const int64_t rms = CountParameters(m).Total();
  m.normalization = NormType::kLayerNorm;
  EXPECT_EQ(CountParameters(m).Total() - rms, (32 * 2 + 1) * 4096);
}

TEST(ParameterCountTest, ComponentSumsEqualTotal) {
  for (const char* name : {"deepseek_v3", "gpt_oss_120B", "qwen3_30B_A3B", "gemma2_27B"}) {
    const ModelSpec& m = Spec(name);
    const ModelParams p = CountParameters(m);
    int64_t sum = p.embedding + p.output_layer + p.final_norm + p.mtp_extra;
    for (auto f : {&LayerParams::attention, &LayerParams::attention_bias, &LayerParams::norms,
                   &LayerParams::dense_mlp, &LayerParams::router, &LayerParams::routed_experts,
                   &LayerParams::shared_experts}) {
      sum += SumLayers(p, f);
      for (const LayerParams& l : p.mtp_layers) sum += l.*f;
    }
    EXPECT_EQ(sum, p.Total()) << name;
  }
}

}  // namespace
}  // namespace sextant
