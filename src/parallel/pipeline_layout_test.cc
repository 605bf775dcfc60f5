#include "parallel/pipeline_layout.h"

#include <gtest/gtest.h>

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
