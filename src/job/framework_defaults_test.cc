#include "job/framework_defaults.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(FrameworkDefaultsTest, UnknownOrEmptyFrameworkGetsTodaysMegatronCore) {
  bool known = true;
  const FrameworkDefaults& d = DefaultsForFramework("some-new-stack", "", &known);
  EXPECT_FALSE(known);
  EXPECT_EQ(d.name, "megatron-core");
  EXPECT_TRUE(d.flash_attention);
  EXPECT_TRUE(d.distributed_optimizer);
  EXPECT_TRUE(d.overlap_grad_reduce);
  EXPECT_EQ(d.dropout, 0.0);
  EXPECT_EQ(DefaultsForFramework("", "", &known).name, "megatron-core");
  EXPECT_FALSE(known);
}

TEST(FrameworkDefaultsTest, AdapterShortNamesAndCaseResolveToOneEntry) {
  EXPECT_EQ(DefaultsForFramework("megatron").name, "primus-megatron");
  EXPECT_EQ(DefaultsForFramework("LLMFoundry").name, "llm-foundry");
  EXPECT_EQ(DefaultsForFramework("TorchTitan").name, "torchtitan");
}

TEST(FrameworkDefaultsTest, VersionSelectsTheMostSpecificEntry) {
  // SC'21 Megatron-LM: full recompute and the paper's recompute-inclusive FLOP count.
  const FrameworkDefaults& sc21 = DefaultsForFramework("megatron-lm", "2021 (SC'21 PTD-P)");
  EXPECT_TRUE(sc21.full_recompute);
  EXPECT_EQ(sc21.flops, FlopConvention::kNarayanan2021);
  const FrameworkDefaults& y2022 =
      DefaultsForFramework("megatron-lm", "2022 (sequence parallelism)");
  EXPECT_FALSE(y2022.full_recompute);
  EXPECT_FALSE(y2022.flash_attention);  // both predate FlashAttention in Megatron
  EXPECT_DOUBLE_EQ(y2022.dropout, 0.1);
  EXPECT_TRUE(y2022.fp16_main_grads);
}

TEST(FrameworkDefaultsTest, PyTorchNativeStacksShardEverythingAndUseSdpaAttention) {
  const FrameworkDefaults& titan = DefaultsForFramework("torchtitan");
  EXPECT_TRUE(titan.fsdp);
  EXPECT_FALSE(titan.cudnn_attention);
  EXPECT_FALSE(titan.compiled);  // eager unless compile.enable
  EXPECT_TRUE(titan.local_batch);
  EXPECT_TRUE(titan.memory_log_reserved);  // its log line is max_reserved
  EXPECT_TRUE(titan.fp8_current_scaling);  // torchao float8 "tensorwise"
  const FrameworkDefaults& foundry = DefaultsForFramework("llm-foundry");
  EXPECT_TRUE(foundry.fsdp);
  EXPECT_FALSE(foundry.local_batch);
  EXPECT_FALSE(foundry.memory_log_reserved);
  EXPECT_FALSE(foundry.fp8_current_scaling);  // TE DelayedScaling
  EXPECT_EQ(DefaultsForFramework("nemo").flops, FlopConvention::kNemo);
}

TEST(FrameworkDefaultsTest, MegatronStacksSplitExpertsOverTensorParallelism) {
  // arguments.py validate_args: expert_tensor_parallel_size defaults to the TP size.
  for (const char* name : {"megatron-core", "nemo", "megatron-bridge", "primus-megatron"}) {
    EXPECT_TRUE(DefaultsForFramework(name).expert_tp_follows_tp) << name;
  }
  EXPECT_FALSE(DefaultsForFramework("torchtitan").expert_tp_follows_tp);  // degree 1
  EXPECT_FALSE(DefaultsForFramework("megatron-deepspeed").expert_tp_follows_tp);
}

TEST(FrameworkDefaultsTest, MoePermutationIsFusedWhereTheStackOrItsModelFileSaysSo) {
  // Megatron-Core's --moe-permute-fusion is off unless given; Megatron-Bridge's and NeMo's MoE
  // model configs turn it on; torchtitan combines with scatter_add_.
  EXPECT_FALSE(MoePermuteFusionFor(DefaultsForFramework("megatron-core"), "qwen3_30B_A3B"));
  EXPECT_TRUE(MoePermuteFusionFor(DefaultsForFramework("megatron-bridge"), "qwen3_30B_A3B"));
  EXPECT_TRUE(MoePermuteFusionFor(DefaultsForFramework("nemo"), "mixtral_8x7B"));
  EXPECT_FALSE(MoePermuteFusionFor(DefaultsForFramework("torchtitan"), "deepseek_v3"));
  // Primus: language_model.yaml leaves it off, the DeepSeek / Kimi / Llama 4 model files
  // turn it on.
  const FrameworkDefaults& primus = DefaultsForFramework("megatron");
  EXPECT_FALSE(MoePermuteFusionFor(primus, "qwen3_30B_A3B"));
  EXPECT_FALSE(MoePermuteFusionFor(primus, "mixtral_8x22B"));
  EXPECT_TRUE(MoePermuteFusionFor(primus, "deepseek_v2_lite"));
  EXPECT_TRUE(MoePermuteFusionFor(primus, "deepseek_v3"));
  EXPECT_TRUE(MoePermuteFusionFor(primus, "kimi_k2"));
  EXPECT_TRUE(MoePermuteFusionFor(primus, "llama4_17B128E"));
  EXPECT_FALSE(MoePermuteFusionFor(primus, ""));
}

TEST(FrameworkDefaultsTest, SyncFreeStagesTurnOnFusedPermutationThenDeepEp) {
  EXPECT_FALSE(SyncFreeMoeStage(0).moe_permute_fusion);
  EXPECT_TRUE(SyncFreeMoeStage(1).moe_permute_fusion);
  EXPECT_FALSE(SyncFreeMoeStage(1).turbo_deepep);
  EXPECT_TRUE(SyncFreeMoeStage(2).turbo_deepep);
  EXPECT_TRUE(SyncFreeMoeStage(3).moe_permute_fusion);
}

TEST(FrameworkDefaultsTest, EveryEntryCitesItsSourceAndNamesAreUniquePerVersion) {
  const auto& all = AllFrameworkDefaults();
  ASSERT_GE(all.size(), 8u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(all[i].source.empty()) << all[i].name;
    for (size_t j = i + 1; j < all.size(); ++j) {
      EXPECT_FALSE(all[i].name == all[j].name && all[i].version == all[j].version)
          << all[i].name << " " << all[i].version;
    }
  }
}

}  // namespace
}  // namespace sextant
