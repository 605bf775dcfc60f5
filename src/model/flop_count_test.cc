#include "model/flop_count.h"

#include <gtest/gtest.h>

#include "model/model_library.h"

namespace sextant {
namespace {

const ModelSpec& Spec(const char* name) {
  const ModelEntry* e = FindModel(name);
  EXPECT_NE(e, nullptr) << name;
  return e->spec;
}

// Expected values below are hand-derived from Megatron-LM training.py
// num_floating_point_operations (research: primus-observability.md §4.2, which also lists them
// as golden values of the upstream function at B = 1).

// Llama-2-7B, s 4096, V 32000, B 1. Per token: MLP 6·4096·3·11008·32 = 25,971,130,368;
// attention 6·32·(4096·3·4096 + 4096·4096 [causal QKᵀ+AV] + 4096·4096) = 16,106,127,360;
// logits 6·4096·32000 = 786,432,000. × 4096 tokens = 175,569,673,125,888.
TEST(FlopCountTest, MegatronLlama2_7B) {
  EXPECT_DOUBLE_EQ(MegatronModelFlops(Spec("llama2_7B"), {4096, 1, 32000}), 175569673125888.0);
}

// Llama-3-8B (GQA: K, V = 8·128), s 8192, V 128256: per token 33,822,867,456 (MLP) +
// 14,495,514,624 (attention) + 3,152,019,456 (logits) = 51,470,401,536; × 8192.
TEST(FlopCountTest, MegatronLlama3_8BGqa) {
  EXPECT_DOUBLE_EQ(MegatronModelFlops(Spec("llama3_8B"), {8192, 1, 128256}), 421645529382912.0);
}

// Mixtral-8x7B, s 4096, V 32000: routed MLP 6·4096·(3·14336·2)·32 = 67,645,734,912 per token;
// attention 11,274,289,152; logits 786,432,000; × 4096.
TEST(FlopCountTest, MegatronMixtralTopK) {
  EXPECT_DOUBLE_EQ(MegatronModelFlops(Spec("mixtral_8x7B"), {4096, 1, 32000}), 326477644038144.0);
}

// DeepSeek-V3 (MLA, 3 dense + 58 MoE layers, shared expert, 1 MTP block counted as a 59th MoE
// layer and a 62nd attention block, MTP eh_proj and norms, two logit layers), s 4096,
// V 129280: 1,064,931,126,411,264.
TEST(FlopCountTest, MegatronDeepSeekV3MlaMoeMtp) {
  EXPECT_DOUBLE_EQ(MegatronModelFlops(Spec("deepseek_v3"), {4096, 1, 129280}), 1064931126411264.0);
}

TEST(FlopCountTest, ScalesLinearlyWithGlobalBatch) {
  const ModelSpec& m = Spec("llama2_7B");
  EXPECT_DOUBLE_EQ(MegatronModelFlops(m, {4096, 16, 32000}), 16 * 175569673125888.0);
}

// Vocabulary 0 means the model's own (unpadded) vocabulary.
TEST(FlopCountTest, DefaultVocabularyIsTheModels) {
  const ModelSpec& m = Spec("llama2_7B");
  EXPECT_DOUBLE_EQ(MegatronModelFlops(m, {4096, 1, 0}), MegatronModelFlops(m, {4096, 1, 32000}));
}

// Full recompute repeats the forward of every block: 8 instead of 6 FLOPs per multiply-add
// there, logits unchanged. Llama-2-7B per token: blocks 4,301,258,752 MACs → ·8, logits
// 131,072,000 MACs → ·6; × 4096 = 233,019,155,677,184.
TEST(FlopCountTest, FullRecomputeAddsOneForwardOfTheBlocks) {
  EXPECT_DOUBLE_EQ(MegatronFullRecomputeFlops(Spec("llama2_7B"), {4096, 1, 32000}),
                   233019155677184.0);
}

// Korthikanti et al. 2022 / Narayanan et al. 2021 for GPT-3 175B, B 1, s 2048, V 50257:
// 72·B·s·L·h² + 12·B·s²·L·h + 6·B·s·h·V = 2,204,412,785,197,056; with full recompute
// 96·B·s·L·h² + 16·B·s²·L·h + 6·B·s·h·V = 2,936,687,529,295,872.
TEST(FlopCountTest, NarayananGpt3_175B) {
  const ModelSpec& m = Spec("gpt3_175B");
  EXPECT_DOUBLE_EQ(NarayananModelFlops(m, {2048, 1, 50257}), 2204412785197056.0);
  EXPECT_DOUBLE_EQ(NarayananFullRecomputeFlops(m, {2048, 1, 50257}), 2936687529295872.0);
}

// For an MHA model with a 4h non-gated MLP, Megatron's count differs from Narayanan's only in
// the causal halving of attention: Narayanan's score and AV GEMMs cost 3·2·2·s·h per token and
// layer, Megatron's half that (6·s·h). GPT-3 175B at s 2048 → 6·2048·12288·96 per token.
TEST(FlopCountTest, MegatronAndNarayananDifferByCausalHalving) {
  const ModelSpec& m = Spec("gpt3_175B");
  const double diff =
      NarayananModelFlops(m, {2048, 1, 50257}) - MegatronModelFlops(m, {2048, 1, 50257});
  EXPECT_DOUBLE_EQ(diff, 6.0 * 2048 * 12288 * 96 * 2048);
}

// Per token at the default sequence (4096) with the padded vocabulary (32000).
// NeMo's llama2 formula, Llama-2-7B, s 4096, V 32000, B 1: 4096·32·4096²·(12 + 12 + 18·11008/4096
// + 12 + 6·32000/(32·4096)) = 4096·536,870,912·85.83984375 = 188,763,812,659,200. At NeMo 24.07's
// measured 16634 tokens/s/GPU that is 766.6 TFLOP/s, the 767 its performance table prints.
TEST(FlopCountTest, NemoLlama2_7BCountsNonCausalAttention) {
  const double flops = NemoModelFlops(Spec("llama2_7B"), {4096, 1, 32000});
  EXPECT_DOUBLE_EQ(flops, 188763812659200.0);
  EXPECT_NEAR(flops / 4096 * 16634 / 1e12, 767, 0.5);
}

TEST(FlopCountTest, FlopsPerTokenAtDefaultSequence) {
  EXPECT_DOUBLE_EQ(MegatronFlopsPerToken(Spec("llama2_7B")), 42863689728.0);
}

}  // namespace
}  // namespace sextant
