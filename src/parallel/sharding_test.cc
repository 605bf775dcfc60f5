#include "parallel/sharding.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

// Llama-2-7B: 32 layers, h 4096, 32 heads (MHA), SwiGLU f 11008, vocab 32000, untied, RMSNorm.
ModelSpec Llama2_7B() {
  ModelSpec m;
  m.name = "llama2_7B";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.ffn_hidden_size = 11008;
  m.num_attention_heads = 32;
  m.num_query_groups = 32;
  m.kv_channels = 128;
  m.vocab_size = 32000;
  m.swiglu = true;
  m.untie_embeddings_and_output_weights = true;
  m.normalization = NormType::kRMSNorm;
  return m;
}

TEST(ShardingTest, WholeModelOnOneRankIsThePublishedCount) {
  ParallelPlan plan;
  // 6,738,415,616 parameters (Llama 2 model card's 7B; HF safetensors total).
  EXPECT_EQ(ParamsOnRank(Llama2_7B(), plan, 0).Total(), 6738415616);
}

TEST(ShardingTest, TensorParallelShardsMatricesNotNorms) {
  ParallelPlan plan;
  plan.tp = 4;
  // Per layer: attention 4·4096² /4 + MLP 3·4096·11008 /4 + 2 RMSNorm 2·4096 replicated.
  const int64_t layer = (4 * 4096LL * 4096) / 4 + (3 * 4096LL * 11008) / 4 + 2 * 4096;
  // Embedding and LM head are vocab-parallel over a vocabulary padded to a multiple of
  // 128·4 = 512: 32000 -> 32256. Final norm 4096.
  const int64_t expected = 32 * layer + 2 * (32256LL * 4096 / 4) + 4096;
  EXPECT_EQ(ParamsOnRank(Llama2_7B(), plan, 0).Total(), expected);
}

TEST(ShardingTest, PipelineStagesSplitLayersAndEnds) {
  ParallelPlan plan;
  plan.pp = 4;
  const auto stages = PlaceLayers(Llama2_7B(), plan);
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_TRUE(stages[0].has_embedding);
  EXPECT_TRUE(stages[3].has_output);
  EXPECT_EQ(stages[2].first_layer, 16);
  const int64_t layer = 4 * 4096LL * 4096 + 3 * 4096LL * 11008 + 2 * 4096;
  EXPECT_EQ(ParamsOnRank(Llama2_7B(), plan, 1).Total(), 8 * layer);
  EXPECT_EQ(ParamsOnRank(Llama2_7B(), plan, 0).Total(), 8 * layer + 32000LL * 4096);
  EXPECT_EQ(ParamsOnRank(Llama2_7B(), plan, 3).Total(), 8 * layer + 32000LL * 4096 + 4096);
}

TEST(ShardingTest, InterleavedAndVShapePlacement) {
  ParallelPlan plan;
  plan.pp = 4;
  plan.vpp = 2;
  auto inter = PlaceLayers(Llama2_7B(), plan);
  EXPECT_EQ(inter[5].pp_rank, 1);
  EXPECT_EQ(inter[5].chunk, 1);
  EXPECT_EQ(inter[7].pp_rank, 3);  // interleaved: last stage on the last rank
  auto v = PlaceLayers(Llama2_7B(), plan, StageShape::kVShape);
  EXPECT_EQ(v[5].pp_rank, 2);  // 2·4 - 1 - 5
  EXPECT_EQ(v[7].pp_rank, 0);  // V-shape: LM head and loss come back to rank 0
  EXPECT_TRUE(v[7].has_output);
}

TEST(ShardingTest, FirstAndLastStageOverrides) {
  ParallelPlan plan;
  plan.pp = 4;
  plan.first_stage_layers = 5;
  plan.last_stage_layers = 7;
  auto st = PlaceLayers(Llama2_7B(), plan);
  EXPECT_EQ(st[0].num_layers, 5);
  EXPECT_EQ(st[1].num_layers, 10);
  EXPECT_EQ(st[3].num_layers, 7);
  plan.last_stage_layers = 6;  // 32 - 5 - 6 = 21 does not split over 2 stages
  EXPECT_THROW(PlaceLayers(Llama2_7B(), plan), UserError);
}

// 61 layers (DeepSeek-V3, Kimi-K2) divide over no PP > 1. PP 8: middle ranks ceil(61/8) = 8,
// 6 x 8 = 48, the rest 13 = 7 first + 6 last. PP 16: 14 x 4 = 56, 5 = 3 + 2. PP 32: 30 x 2 =
// 60 leaves 1, no layer for one end. PP 2: 31 + 30.
TEST(ShardingTest, BalancedFirstLastStageLayersByHand) {
  auto split = BalancedFirstLastStageLayers(61, 8);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->first, 7);
  EXPECT_EQ(split->last, 6);
  split = BalancedFirstLastStageLayers(61, 16);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->first, 3);
  EXPECT_EQ(split->last, 2);
  EXPECT_FALSE(BalancedFirstLastStageLayers(61, 32).has_value());
  EXPECT_FALSE(BalancedFirstLastStageLayers(61, 64).has_value());  // more ranks than layers
  split = BalancedFirstLastStageLayers(61, 2);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->first, 31);
  EXPECT_EQ(split->last, 30);
  // The split places every layer: 7 + 6 x 8 + 6 on DeepSeek-V3's 61.
  ModelSpec model = Llama2_7B();
  model.num_layers = 61;
  ParallelPlan plan;
  plan.pp = 8;
  plan.first_stage_layers = 7;
  plan.last_stage_layers = 6;
  const auto stages = PlaceLayers(model, plan);
  EXPECT_EQ(stages[0].num_layers, 7);
  EXPECT_EQ(stages[3].num_layers, 8);
  EXPECT_EQ(stages[7].num_layers, 6);
}

TEST(ShardingTest, IndivisibleLayersAreAnError) {
  ParallelPlan plan;
  plan.pp = 3;
  try {
    PlaceLayers(Llama2_7B(), plan);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("num_layers=32"), std::string::npos);
  }
}

TEST(ShardingTest, PaddedUnevenLayersFillStagesInOrder) {
  ModelSpec m = Llama2_7B();
  m.num_layers = 61;  // Kimi K2 over PP 8: padded to 64, the last stage holds 5 real layers
  ParallelPlan plan;
  plan.pp = 8;
  EXPECT_THROW(PlaceLayers(m, plan), UserError);
  plan.pad_uneven_layers = true;
  auto st = PlaceLayers(m, plan);
  EXPECT_EQ(st[0].num_layers, 8);
  EXPECT_EQ(st[6].num_layers, 8);
  EXPECT_EQ(st[7].num_layers, 5);
  EXPECT_EQ(st[7].first_layer, 56);
}

TEST(ShardingTest, LayoutStringPlacesEmbeddingLossAndMtp) {
  ModelSpec m = Llama2_7B();
  m.mtp_num_layers = 1;
  ParallelPlan plan;
  plan.pp = 2;
  plan.layout = "Et*15|t*17,mL";
  auto st = PlaceLayers(m, plan);
  EXPECT_EQ(st[0].num_layers, 15);
  EXPECT_EQ(st[1].num_layers, 17);
  EXPECT_EQ(st[1].mtp_layers, 1);
  plan.layout = "Et*15|t*16,mL";  // 31 layers placed
  EXPECT_THROW(PlaceLayers(m, plan), UserError);
  plan.layout = "Et*15|t*17,L";  // no 'm': the MTP module goes with the loss
  EXPECT_EQ(PlaceLayers(m, plan)[1].mtp_layers, 1);
  m.mtp_num_layers = 2;
  plan.layout = "Et*15|t*17,mL";  // one 'm' for two modules
  EXPECT_THROW(PlaceLayers(m, plan), UserError);
}

TEST(ShardingTest, ExpertsShardOverEpAndEtp) {
  ModelSpec m = Llama2_7B();
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.ffn_hidden_size = 11008;
  ParallelPlan plan;
  plan.ep = 8;
  plan.dp = 8;
  const int64_t expert = 3 * 4096LL * 11008;
  EXPECT_EQ(ParamsOnRank(m, plan, 0).expert, 32 * expert);  // one of 8 experts per layer
  plan.etp = 2;
  plan.ep = 4;
  EXPECT_EQ(ParamsOnRank(m, plan, 0).expert, 32 * 8 * expert / 8);
}

}  // namespace
}  // namespace sextant
