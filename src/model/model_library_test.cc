#include "model/model_library.h"

#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "model/parameter_count.h"

namespace sextant {
namespace {

std::string Key(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

class PublishedCountTest : public ::testing::TestWithParam<std::string> {};

// Every transformer entry's exact count agrees with the published total within 1%, beyond
// the rounding of the published figure itself ("2.7B" claims 2.65B..2.75B).
TEST_P(PublishedCountTest, TotalWithinOnePercentOfPublished) {
  const ModelEntry* e = FindModel(GetParam());
  ASSERT_NE(e, nullptr);
  ASSERT_GT(e->published_params, 0);
  const double total = static_cast<double>(CountParameters(e->spec).Total());
  const double allowed = 0.01 * e->published_params + e->PublishedRounding();
  EXPECT_LE(std::fabs(total - e->published_params), allowed)
      << e->spec.name << ": counted " << total << ", published " << e->published_params;
}

std::vector<std::string> TransformerNames() {
  std::vector<std::string> names;
  for (const ModelEntry& e : ModelLibrary()) {
    if (e.spec.architecture == Architecture::kTransformer) names.push_back(e.spec.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllModels, PublishedCountTest, ::testing::ValuesIn(TransformerNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id;
                           for (char c : info.param)
                             id.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           return id;
                         });

TEST(ModelLibraryTest, HasAtLeastFortyTransformerArchitectures) {
  EXPECT_GE(TransformerNames().size(), 40u);
}

// Rounding of a published figure: "2.7B" (2 digits) is ±0.05B, "7.61B" (3 digits) ±0.005B.
TEST(ModelLibraryTest, PublishedRoundingFollowsStatedDigits) {
  ModelEntry e;
  e.published_params = 2.7e9;
  e.published_digits = 2;
  EXPECT_DOUBLE_EQ(e.PublishedRounding(), 0.05e9);
  e.published_params = 7.61e9;
  e.published_digits = 3;
  EXPECT_DOUBLE_EQ(e.PublishedRounding(), 0.005e9);
  e.published_digits = 0;
  EXPECT_DOUBLE_EQ(e.PublishedRounding(), 0.0);
}

TEST(ModelLibraryTest, NamesAndAliasesAreUniqueAfterNormalisation) {
  std::set<std::string> seen;
  for (const ModelEntry& e : ModelLibrary()) {
    EXPECT_TRUE(seen.insert(Key(e.spec.name)).second) << e.spec.name;
    for (const std::string& a : e.aliases) {
      const std::string k = Key(a);
      if (k == Key(e.spec.name)) continue;
      EXPECT_TRUE(seen.insert(k).second) << "alias " << a << " of " << e.spec.name;
    }
  }
}

TEST(ModelLibraryTest, EveryEntryHasASourceAndFamily) {
  for (const ModelEntry& e : ModelLibrary()) {
    EXPECT_FALSE(e.source.empty()) << e.spec.name;
    EXPECT_FALSE(e.spec.family.empty()) << e.spec.name;
  }
}

TEST(ModelLibraryTest, DimensionsAreConsistent) {
  for (const ModelEntry& e : ModelLibrary()) {
    const ModelSpec& m = e.spec;
    if (m.architecture != Architecture::kTransformer) continue;
    EXPECT_GT(m.num_layers, 0) << m.name;
    EXPECT_GT(m.vocab_size, 0) << m.name;
    EXPECT_EQ(m.num_attention_heads % m.num_query_groups, 0) << m.name;
    if (m.IsMoe()) {
      EXPECT_GT(m.moe.router_topk, 0) << m.name;
      EXPECT_LE(m.moe.router_topk, m.moe.num_experts) << m.name;
      if (!m.moe.moe_layers.empty()) {
        EXPECT_EQ(static_cast<int64_t>(m.moe.moe_layers.size()), m.num_layers) << m.name;
      }
    }
    if (m.learned_position_embeddings) {
      EXPECT_GE(m.max_position_embeddings, m.seq_length) << m.name;
    }
  }
}

TEST(ModelLibraryTest, FindsNamesAndAliasesIgnoringCaseAndPunctuation) {
  const ModelEntry* e = FindModel("llama3.1_8B");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->spec.name, "llama3.1_8B");
  EXPECT_EQ(FindModel("Llama-3.1-8B"), e);
  EXPECT_EQ(FindModel("LLAMA3.1-8b"), e);
  EXPECT_EQ(FindModel("Meta-Llama-3.1-8B"), e);
  ASSERT_NE(FindModel("mixtral_8x7B_v0.1"), nullptr);
  EXPECT_EQ(FindModel("mixtral_8x7B_v0.1")->spec.name, "mixtral_8x7B");
  EXPECT_EQ(FindModel("qwen3_30B_A3B")->spec.name, "qwen3_30B_A3B");
  EXPECT_EQ(FindModel("deepseek_v3")->spec.name, "deepseek_v3");
  EXPECT_EQ(FindModel("deepseek2-16b")->spec.name, "deepseek_v2_lite");  // MaxText model_name
  EXPECT_EQ(FindModel("llama3.3_70B")->spec.name, "llama3.1_70B");
  EXPECT_EQ(FindModel("qwen3_0.6b")->spec.name, "qwen3_0.6B");
  EXPECT_EQ(FindModel("no-such-model"), nullptr);
  EXPECT_EQ(FindModel(""), nullptr);
  EXPECT_EQ(FindModel("---"), nullptr);
}

// Released checkpoints' names as Hugging Face lists them: the fine-tune, packaging, version
// and date suffixes change the weights, not the architecture.
TEST(ModelLibraryTest, FindsCheckpointNamesByTheirArchitecture) {
  EXPECT_EQ(FindModel("Llama-3.1-8B-Instruct")->spec.name, "llama3.1_8B");
  EXPECT_EQ(FindModel("meta-llama/Meta-Llama-3.1-70B-Instruct")->spec.name, "llama3.1_70B");
  EXPECT_EQ(FindModel("Mixtral-8x22B-Instruct-v0.1")->spec.name, "mixtral_8x22B");
  EXPECT_EQ(FindModel("Qwen3-30B-A3B-Instruct-2507")->spec.name, "qwen3_30B_A3B");
  EXPECT_EQ(FindModel("google/gemma-3-27b-it")->spec.name, "gemma3_27B");
  EXPECT_EQ(FindModel("gemma-3-27b-pt")->spec.name, "gemma3_27B");
  EXPECT_EQ(FindModel("Llama-2-7b-chat-hf")->spec.name, "llama2_7B");
  EXPECT_EQ(FindModel("DeepSeek-V3-0324")->spec.name, "deepseek_v3");
  EXPECT_EQ(FindModel("DeepSeek-R1")->spec.name, "deepseek_v3");
  // A version is not dropped: Mistral 7B v0.3 has another vocabulary (32768) than the v0.1
  // entry (32000), so it is not taken for it.
  EXPECT_EQ(FindModel("Mistral-7B-v0.3"), nullptr);
  EXPECT_EQ(FindModel("Mistral-7B-Instruct-v0.3"), nullptr);
  EXPECT_EQ(FindModel("Mistral-7B-Instruct-v0.1")->spec.name, "mistral_7B");
  // Only those suffixes: another size or family is not stripped into a match.
  EXPECT_EQ(FindModel("Llama-3.1-9B-Instruct"), nullptr);
  EXPECT_EQ(FindModel("Instruct"), nullptr);
  EXPECT_EQ(FindModel("-Instruct"), nullptr);
}

TEST(ModelLibraryTest, UnsupportedArchitecturesAreListed) {
  const ModelEntry* mamba = FindModel("mamba_370M");
  ASSERT_NE(mamba, nullptr);
  EXPECT_EQ(mamba->spec.architecture, Architecture::kStateSpace);
  const ModelEntry* flux = FindModel("flux.1_dev_t2i");
  ASSERT_NE(flux, nullptr);
  EXPECT_EQ(flux->spec.architecture, Architecture::kDiffusion);
}

TEST(ModelLibraryTest, SimilarNamesRankTheClosestFirst) {
  const std::vector<std::string> near = SimilarModelNames("lama3.1_8B");
  ASSERT_GE(near.size(), 1u);
  EXPECT_EQ(near[0], "llama3.1_8B");  // one insertion away
  EXPECT_TRUE(SimilarModelNames("completely_unrelated_name").empty());
  const std::vector<std::string> qwen = SimilarModelNames("qwen3-30b", 2);
  ASSERT_EQ(qwen.size(), 2u);
  EXPECT_EQ(qwen[0].rfind("qwen3", 0), 0u) << qwen[0];
}

// Every model named by a Primus model file that exists in the library resolves by its file
// stem, so `model: <stem>.yaml` finds its entry.
TEST(ModelLibraryTest, PrimusModelFileStemsResolve) {
  for (const char* stem : {"llama2_7B",
                           "llama2_13B",
                           "llama2_70B",
                           "llama3_8B",
                           "llama3_70B",
                           "llama3.1_8B",
                           "llama3.1_70B",
                           "llama3.3_70B",
                           "llama3.1_405B",
                           "llama3.2_1B",
                           "llama3.2_3B",
                           "llama4_17B16E",
                           "llama4_17B128E",
                           "llama4_17Bx16E",
                           "llama4_17Bx128E",
                           "mixtral_8x7B_v0.1",
                           "mixtral_8x22B_v0.1",
                           "mixtral_8x7B",
                           "mixtral_8x22B",
                           "qwen2.5_3B",
                           "qwen2.5_7B",
                           "qwen2.5_14B",
                           "qwen2.5_32B",
                           "qwen2.5_72B",
                           "qwen3_0.6b",
                           "qwen3_1.7b",
                           "qwen3_4B",
                           "qwen3_8B",
                           "qwen3_14B",
                           "qwen3_32B",
                           "qwen3_30B_A3B",
                           "qwen3_235B_A22B",
                           "deepseek_v2",
                           "deepseek_v2_lite",
                           "deepseek_v3",
                           "deepseek_v2_16B",
                           "deepseek_v3_16b",
                           "deepseek_v3_236b",
                           "deepseek_v3_671b",
                           "gpt_oss_20B",
                           "gpt_oss_120B",
                           "gpt_oss_20b",
                           "grok1",
                           "deepseek_r1_distill_qwen_1.5B",
                           "mamba_370M",
                           "flux.1_dev_t2i",
                           "flux.1_schnell_t2i",
                           "wan2.1_t2v_1.3b",
                           "wan2.2_ti2v_5b",
                           "llama2-7b",
                           "llama3-8b",
                           "llama3.1-405b",
                           "qwen3-30b-a3b",
                           "mixtral-8x22b"}) {
    EXPECT_NE(FindModel(stem), nullptr) << stem;
  }
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// Spellings of published tables (corpus/validation/published_runs.csv) against the library.
TEST(MatchModelTest, NamesAsOtherPeopleWriteThem) {
  ModelMatch m = MatchModel("Qwen3-30B-A3B", {48, 2048, 32, 128, 6144, 768});
  ASSERT_NE(m.entry, nullptr);
  EXPECT_EQ(m.entry->spec.name, "qwen3_30B_A3B");
  EXPECT_EQ(m.how, "by name");
  m = MatchModel("DeepSeek-V3-671B", {61, 7168, 128, 256, 18432, 2048});
  ASSERT_NE(m.entry, nullptr);
  EXPECT_EQ(m.entry->spec.name, "deepseek_v3");
  EXPECT_EQ(m.how.rfind("by name", 0), 0u) << m.how;
  m = MatchModel("Mixtral 8x22B v0.1", {56, 6144, 48, 8, 0, 16384});
  ASSERT_NE(m.entry, nullptr);
  EXPECT_EQ(m.entry->spec.name, "mixtral_8x22B");
}

TEST(MatchModelTest, FallsBackToDimensionsWhenTheNameSaysNothing) {
  const ModelMatch m = MatchModel("Maverick (17B-128E)", {48, 5120, 40, 128});
  ASSERT_NE(m.entry, nullptr);
  EXPECT_EQ(m.entry->spec.name, "llama4_17B128E");
  EXPECT_EQ(m.how, "by dimensions");
}

TEST(MatchModelTest, RefusesMatchesThatContradictTheStatedShape) {
  // "GPT3" is a family name in the library; a 4096-wide GPT3-5B is none of its entries.
  EXPECT_EQ(MatchModel("GPT3-5B", {24, 4096, 32, 0, 16384}).entry, nullptr);
  // Same depth, widths and heads as GPT-3 6.7B, but another family (ALiBi, no biases).
  EXPECT_EQ(MatchModel("MPT-7B", {32, 4096, 32, 0, 16384}).entry, nullptr);
  // Same depth, width and heads as Llama-2-7B, but a 4h MLP.
  EXPECT_EQ(MatchModel("llama-2-7b-like", {32, 4096, 32, 0, 16384}).entry, nullptr);
  // A dense description never takes an MoE entry of the same name.
  EXPECT_EQ(MatchModel("Qwen3-30B-A3B", {48, 2048, 32, 0}).entry, nullptr);
  // Without depth and width there is nothing to match dimensions on.
  EXPECT_EQ(MatchModel("unknown-model", {}).entry, nullptr);
}

}  // namespace
}  // namespace sextant
