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
  EXPECT_FALSE(y2022.bf16_main_grads);
}

TEST(FrameworkDefaultsTest, OnlyMaxTextLeavesMultiTokenPredictionOff) {
  // MaxText/configs/base.yml: mtp_num_layers: 0; the Megatron stacks follow the model's
  // configuration (Megatron-Bridge's and Primus's DeepSeek-V3 files set it).
  EXPECT_TRUE(DefaultsForFramework("maxtext").mtp_off);
  for (const char* other : {"megatron-core", "megatron-bridge", "primus-megatron", "torchtitan"}) {
    EXPECT_FALSE(DefaultsForFramework(other).mtp_off) << other;
  }
}

TEST(FrameworkDefaultsTest, OnlyMegatronBridgeRecipesReduceGradientsInBf16) {
  // scripts/performance/configs/*/*_llm_pretrain.py: grad_reduce_in_fp32 = False.
  EXPECT_TRUE(DefaultsForFramework("megatron-bridge").bf16_main_grads);
  for (const char* other : {"megatron-core", "nemo", "primus-megatron", "torchtitan", "maxtext"}) {
    EXPECT_FALSE(DefaultsForFramework(other).bf16_main_grads) << other;
  }
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

TEST(FrameworkDefaultsTest, MoePermutationFollowsTheStackAndItsModelFiles) {
  constexpr auto kFused = MoePermutation::kFused;
  constexpr auto kIndexSelect = MoePermutation::kIndexSelect;
  auto of = [](const char* stack, const char* model, bool deepep = false) {
    return MoePermutationFor(DefaultsForFramework(stack), model, deepep);
  };
  // Megatron-Core's --moe-permute-fusion is off unless given; Megatron-Bridge's and NeMo's MoE
  // model configs turn it on.
  EXPECT_EQ(of("megatron-core", "qwen3_30B_A3B"), kIndexSelect);
  EXPECT_EQ(of("megatron-bridge", "qwen3_30B_A3B"), kFused);
  EXPECT_EQ(of("nemo", "mixtral_8x7B"), kFused);
  // torchtitan gathers and scatter-adds, and after a DeepEP dispatch permutes as Megatron does.
  EXPECT_EQ(of("torchtitan", "qwen3_30B_A3B"), MoePermutation::kGatherScatter);
  EXPECT_EQ(of("torchtitan", "qwen3_30B_A3B", true), kIndexSelect);
  // Primus: language_model.yaml leaves it off; the DeepSeek, Kimi, Llama 4 and Qwen
  // (qwen2.5_base, which the Qwen3 files extend) model files turn it on.
  EXPECT_EQ(of("megatron", "qwen3_30B_A3B"), kFused);
  EXPECT_EQ(of("megatron", "mixtral_8x22B"), kIndexSelect);
  EXPECT_EQ(of("megatron", "gpt_oss_20B"), kIndexSelect);
  EXPECT_EQ(of("megatron", "deepseek_v2_lite"), kFused);
  EXPECT_EQ(of("megatron", "deepseek_v3"), kFused);
  EXPECT_EQ(of("megatron", "kimi_k2"), kFused);
  EXPECT_EQ(of("megatron", "llama4_17B128E"), kFused);
  EXPECT_EQ(of("megatron", ""), kIndexSelect);
  // MaxText's sorted dispatch has no atomic adds.
  EXPECT_EQ(of("maxtext", "deepseek_v3"), kFused);
}

// Primus's projection: 0.65 with DeepEP alone, then 0.75 / 0.80 / 0.85 by stage.
TEST(FrameworkDefaultsTest, EachSyncFreeStageHidesMoreOfTheAllToAll) {
  EXPECT_DOUBLE_EQ(DeepEpOverlapEfficiency(0), 0.65);
  EXPECT_DOUBLE_EQ(DeepEpOverlapEfficiency(1), 0.75);
  EXPECT_DOUBLE_EQ(DeepEpOverlapEfficiency(2), 0.80);
  EXPECT_DOUBLE_EQ(DeepEpOverlapEfficiency(3), 0.85);
}

TEST(FrameworkDefaultsTest, SyncFreeStagesTurnOnFusedPermutationThenDeepEp) {
  EXPECT_FALSE(SyncFreeMoeStage(0).fused_permutation);
  EXPECT_TRUE(SyncFreeMoeStage(1).fused_permutation);
  EXPECT_FALSE(SyncFreeMoeStage(1).turbo_deepep);
  EXPECT_TRUE(SyncFreeMoeStage(2).turbo_deepep);
  EXPECT_TRUE(SyncFreeMoeStage(3).fused_permutation);
  // rocm_arg_validation.py: stages 2 and 3 require PrimusTurboGroupedLinear.
  EXPECT_FALSE(SyncFreeMoeStage(1).turbo_grouped_gemm);
  EXPECT_TRUE(SyncFreeMoeStage(2).turbo_grouped_gemm);
}

TEST(FrameworkDefaultsTest, ExpertGemmsLoopInTransformerEngineAndGroupInPyTorchAndJax) {
  for (const char* megatron : {"megatron-core", "nemo", "megatron-bridge", "primus-megatron", ""}) {
    EXPECT_EQ(DefaultsForFramework(megatron).expert_gemm_launch, ExpertGemmLaunch::kStreamLoop)
        << megatron;
  }
  for (const char* grouped : {"torchtitan", "maxtext", "llm-foundry"}) {
    EXPECT_EQ(DefaultsForFramework(grouped).expert_gemm_launch, ExpertGemmLaunch::kGroupedKernel)
        << grouped;
  }
  EXPECT_EQ(DefaultsForFramework("megatron-deepspeed").expert_gemm_launch,
            ExpertGemmLaunch::kSequentialLoop);
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
TEST(FrameworkDefaultsTest, RecipesMatchModelGpuPrecisionAndBatch) {
  // Megatron-Bridge 26.04: GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2 (global batch 1280) sets
  // moe_a2a_overlap and recomputes the norms and the expert activation; its V1 (512) only
  // recomputes; a model-library name matches by prefix, the framework by its adapter spelling.
  const PerformanceRecipe* v2 = FindPerformanceRecipe("megatron_bridge", "26.04.01", "gpt_oss_120B",
                                                      "GB200", DType::kBF16, 1280);
  ASSERT_NE(v2, nullptr);
  EXPECT_TRUE(v2->moe_a2a_overlap);
  EXPECT_EQ(v2->recompute_modules, (std::vector<std::string_view>{"layernorm", "moe_act"}));
  const PerformanceRecipe* v1 = FindPerformanceRecipe("megatron-bridge", "26.04.01", "gpt_oss_120B",
                                                      "GB200", DType::kBF16, 512);
  ASSERT_NE(v1, nullptr);
  EXPECT_FALSE(v1->moe_a2a_overlap);
  // Another stack, or a GPU without a preset: nothing.
  EXPECT_EQ(FindPerformanceRecipe("nemo", "26.04.01", "gpt_oss_120B", "GB200", DType::kBF16, 1280),
            nullptr);
  EXPECT_EQ(
      FindPerformanceRecipe("megatron-bridge", "26.04", "gpt_oss_120B", "MI355X", DType::kBF16, 0),
      nullptr);
  // DeepSeek-V3 on B200 in MXFP8: V2 (4096) runs DeepEP with the all-to-all overlap and
  // recomputes the MLA up-projections and the dense MLPs; V1 (2048) only the up-projections.
  const PerformanceRecipe* dsv3 = FindPerformanceRecipe("megatron-bridge", "26.04.01",
                                                        "deepseek_v3", "B200", DType::kMXFP8, 4096);
  ASSERT_NE(dsv3, nullptr);
  EXPECT_TRUE(dsv3->moe_a2a_overlap);
  EXPECT_EQ(dsv3->recompute_modules, (std::vector<std::string_view>{"mla_up_proj", "mlp"}));
  const PerformanceRecipe* dsv3_v1 = FindPerformanceRecipe(
      "megatron-bridge", "26.04.01", "deepseek_v3", "B200", DType::kMXFP8, 2048);
  ASSERT_NE(dsv3_v1, nullptr);
  EXPECT_FALSE(dsv3_v1->moe_a2a_overlap);
  // Qwen3-235B's H100 presets overlap at every global batch and recompute nothing.
  const PerformanceRecipe* qwen = FindPerformanceRecipe(
      "megatron-bridge", "26.04", "qwen3_235B_A22B", "H100", DType::kFP8, 8192);
  ASSERT_NE(qwen, nullptr);
  EXPECT_TRUE(qwen->moe_a2a_overlap);
  EXPECT_TRUE(qwen->recompute_modules.empty());
  for (const PerformanceRecipe& r : PerformanceRecipes()) {
    EXPECT_FALSE(r.source.empty()) << r.model;
    EXPECT_TRUE(r.moe_a2a_overlap || !r.recompute_modules.empty()) << r.source;
  }
}

}  // namespace sextant
