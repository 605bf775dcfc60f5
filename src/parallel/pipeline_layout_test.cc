#include "parallel/pipeline_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "util/error.h"

namespace sextant {
namespace {

// The DeepSeek-V3 example of the Megatron-Core guide: 61 decoder layers + 1 MTP, PP16 VPP2.
TEST(PipelineLayoutTest, ParsesMegatronDeepSeekExample) {
  auto stages = ParsePipelineLayout("Et*3|(tt|)*29,m|L");
  ASSERT_EQ(stages.size(), 32u);
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_EQ(stages[0].decoder_layers, 3);
  for (int i = 1; i <= 29; ++i) EXPECT_EQ(stages[i].decoder_layers, 2) << i;
  EXPECT_EQ(stages[30].mtp_layers, 1);
  EXPECT_EQ(stages[30].decoder_layers, 0);
  EXPECT_TRUE(stages[31].loss);
  int64_t total = 0;
  for (const auto& s : stages) total += s.decoder_layers;
  EXPECT_EQ(total, 61);
}

// A Primus DeepSeek-V3 config in the corpus uses "Et*7|t*8|...|t*7,L" for PP8.
TEST(PipelineLayoutTest, ParsesPrimusStyleLayoutWithCommaBeforeLoss) {
  auto stages = ParsePipelineLayout("Et*7|t*8|t*8|t*8|t*8|t*8|t*8|t*7,L");
  ASSERT_EQ(stages.size(), 8u);
  EXPECT_EQ(stages[0].decoder_layers, 7);
  EXPECT_EQ(stages[7].decoder_layers, 7);
  EXPECT_TRUE(stages[7].loss);
}

TEST(PipelineLayoutTest, AllowsEmptyStages) {
  auto stages = ParsePipelineLayout("E||t|L");
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[1].decoder_layers, 0);
  EXPECT_EQ(stages[2].decoder_layers, 1);
}

TEST(PipelineLayoutTest, RejectsMalformedStrings) {
  EXPECT_THROW(ParsePipelineLayout("Et*|L"), UserError);
  EXPECT_THROW(ParsePipelineLayout("(tt|*2"), UserError);
  EXPECT_THROW(ParsePipelineLayout("Ex|L"), UserError);
  EXPECT_THROW(ParsePipelineLayout("(t*9999999)*9999999"), UserError);
  try {
    ParsePipelineLayout("Et*3|q");
  } catch (const UserError& e) {
    EXPECT_TRUE(std::string(e.what()).find("pipeline_model_parallel_layout") != std::string::npos);
  }
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

std::string Repeat(const std::string& piece, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

// The layouts Primus ships for uneven models (examples/megatron/configs/MI355X/*.yaml).
// Megatron-Core's per-flag split: (layers + slots) / stages each, one fewer on the stage that
// holds the embedding (first) or the loss (last). Llama 3.1 8B's 32 layers on PP 3: 33 slots
// with the embedding, 11 each; 34 with both do not divide by 3. DeepSeek-V3's 61 layers with
// both flags on PP 16 x VPP 2... 63 do not divide by 32; on PP 7 x VPP 3 (21 stages), 3 each.
TEST(AccountedPipelineLayoutTest, CountsTheEmbeddingAndTheLossAsLayers) {
  EXPECT_EQ(AccountedPipelineLayout(32, 3, true, false), "Et*10|t*11|t*11");
  EXPECT_EQ(AccountedPipelineLayout(32, 3, false, true), "t*11|t*11|t*10,L");
  EXPECT_EQ(AccountedPipelineLayout(32, 3, true, true), "");
  EXPECT_EQ(AccountedPipelineLayout(32, 2, true, true), "Et*16|t*16,L");
  EXPECT_EQ(AccountedPipelineLayout(61, 32, true, true), "");
  EXPECT_EQ(AccountedPipelineLayout(61, 21, true, true), "Et*2" + Repeat("|t*3", 19) + "|t*2,L");
  EXPECT_EQ(AccountedPipelineLayout(32, 4, false, false), "");
  // A stage left with the embedding alone: 1 layer + embedding over 2 stages.
  EXPECT_EQ(AccountedPipelineLayout(1, 2, true, false), "E|t*1");
  const std::vector<LayoutStage> stages = ParsePipelineLayout("Et*10|t*11|t*11");
  ASSERT_EQ(stages.size(), 3u);
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_EQ(stages[0].decoder_layers, 10);
}

TEST(BalancedPipelineLayoutTest, ReproducesPrimusShippedLayouts) {
  // qwen3_235B_A22B-*-pretrain.yaml: 94 layers, PP8 x VPP2.
  EXPECT_EQ(BalancedPipelineLayout(94, 16), "Et*5" + Repeat("|t*6", 14) + "|t*5,L");
  // deepseek_v3-*-pretrain.yaml: 61 layers, PP16 x VPP2.
  EXPECT_EQ(BalancedPipelineLayout(61, 32), "Et*1|t*1" + Repeat("|t*2", 29) + "|t*1,L");
  // minimax_m2.5-*-pretrain.yaml: 62 layers, PP8.
  EXPECT_EQ(BalancedPipelineLayout(62, 8), "Et*7" + Repeat("|t*8", 6) + "|t*7,L");
}

TEST(BalancedPipelineLayoutTest, PlacesEveryLayerExactlyOnce) {
  for (int64_t layers : {5, 27, 61, 94, 126}) {
    for (int64_t stages : {2, 3, 4, 16, 24, 32}) {
      const std::string layout = BalancedPipelineLayout(layers, stages);
      if (layers + 2 < stages) {
        EXPECT_EQ(layout, "");
        continue;
      }
      const std::vector<LayoutStage> parsed = ParsePipelineLayout(layout);
      ASSERT_EQ(static_cast<int64_t>(parsed.size()), stages) << layout;
      int64_t total = 0, most = 0, least = layers;
      for (const LayoutStage& s : parsed) {
        total += s.decoder_layers;
        const int64_t work = s.decoder_layers + s.embedding + s.loss;
        most = std::max(most, work);
        least = std::min(least, work);
      }
      EXPECT_EQ(total, layers) << layout;
      EXPECT_LE(most - least, 1) << layout;  // as even as whole layers allow
      EXPECT_TRUE(parsed.front().embedding && parsed.back().loss) << layout;
    }
  }
  EXPECT_EQ(BalancedPipelineLayout(10, 1), "");
}

}  // namespace
}  // namespace sextant
