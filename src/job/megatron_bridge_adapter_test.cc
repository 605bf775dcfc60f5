// Primus's Megatron-Bridge experiments (framework: megatron_bridge): two of Primus's own MI355X
// examples, with the corpus's Primus checkout for their model files and module defaults.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "job/job_builder.h"
#include "memory/lora_adapters.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

const std::string kExamples =
    std::string(SEXTANT_SOURCE_DIR) + "/tests/data/config/experiments/megatron_bridge/MI355X/";

JobRequest Example(const std::string& name) {
  JobRequest r;
  r.config_path = kExamples + name;
  r.primus_path = CorpusPath("primus");
  r.use_environment = false;
  return r;
}

TEST(MegatronBridgeAdapter, Llama31_70bLoraExample) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = BuildJob(Example("llama31_70b_lora_posttrain.yaml"));
  // hf_path meta-llama/Meta-Llama-3.1-70B (primus/configs/models/megatron_bridge/llama31_70b.yaml)
  EXPECT_EQ(job.model.name, "llama3.1_70B");
  EXPECT_EQ(job.model.num_layers, 80);
  EXPECT_EQ(job.framework, "megatron_bridge");
  EXPECT_EQ(job.cluster.gpu.name, "MI355X");
  EXPECT_EQ(job.parallel.tp, 8);
  EXPECT_EQ(job.training.seq_length, 2048);
  EXPECT_EQ(job.training.global_batch_size, 128);
  // peft: lora with peft_dim 16 and peft_alpha 32 over Megatron-Bridge's four default targets.
  const LoraSpec& l = job.training.lora;
  ASSERT_TRUE(l.enabled);
  EXPECT_EQ(l.rank, 16);
  EXPECT_DOUBLE_EQ(l.alpha, 32);
  EXPECT_TRUE(l.Targets("linear_qkv") && l.Targets("linear_proj") && l.Targets("linear_fc1") &&
              l.Targets("linear_fc2"));
  // One layer's adapters on one of 8 TP ranks, by hand (hidden 8192, 64 + 2 x 8 heads of 128,
  // FFN 28672, rank 16; lora_adapter.h): qkv 16·8192/8 + 16·10240/8 = 36864, proj
  // 16·8192/8 + 16·8192/8 = 32768, fc1 16·8192/8 + 16·57344/8 = 131072, fc2 16·28672/8 +
  // 16·8192/8 = 73728: 274432.
  EXPECT_EQ(LoraAdapterParams(job, 0), 274432);
  // The example turns these off; the recipe defaults fill only what it leaves unset.
  EXPECT_FALSE(job.parallel.distributed_optimizer);
  EXPECT_FALSE(job.training.cross_entropy_loss_fusion);
  EXPECT_TRUE(job.training.overlap_grad_reduce);
  EXPECT_EQ(job.training.precision.gemm, DType::kBF16);
  // The recipe's LoRA rank and alpha (16 / 32), its optimizer and loss settings are all stated
  // by the example itself.
  EXPECT_THAT(job.notes, Contains(HasSubstr("recipe llama31_70b_finetune_config (Megatron-Bridge "
                                            "@101f516): its settings beyond the shared ones are "
                                            "the experiment's")));
}

TEST(MegatronBridgeAdapter, MoeExampleTakesTheRecipeDefaults) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = BuildJob(Example("qwen3_30b_a3b_lora_posttrain_packed.yaml"));
  EXPECT_EQ(job.model.name, "qwen3_30B_A3B");
  EXPECT_EQ(job.parallel.ep, 8);
  // qwen3_30b_a3b_finetune_config's LoRA (Megatron-Bridge @101f516, recipes/qwen/qwen3_moe.py):
  // dim 8, alpha 16 on linear_qkv and linear_proj only.
  const LoraSpec& l = job.training.lora;
  ASSERT_TRUE(l.enabled);
  EXPECT_EQ(l.rank, 8);
  EXPECT_DOUBLE_EQ(l.alpha, 16);
  EXPECT_TRUE(l.Targets("linear_qkv") && l.Targets("linear_proj"));
  EXPECT_FALSE(l.Targets("linear_fc1"));
  // Every recipe's ConfigContainer: distributed optimizer, grad / param overlap; the model
  // provider's fused cross-entropy.
  EXPECT_TRUE(job.parallel.distributed_optimizer);
  EXPECT_TRUE(job.training.overlap_param_gather);
  EXPECT_TRUE(job.training.cross_entropy_loss_fusion);
  // Megatron-Bridge's MoE providers set moe_permute_fusion.
  EXPECT_EQ(job.training.moe_permutation, MoePermutation::kFused);
  EXPECT_THAT(job.notes, Contains(HasSubstr("packed_sequence true")));
}

// A recipe's own settings apply where the experiment is silent, and never over what it says.
TEST(MegatronBridgeAdapter, RecipeFactsFillOnlyWhatTheExperimentLeavesUnset) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest r = Example("llama31_70b_lora_posttrain.yaml");
  // qwen3_32b_pretrain_config: enable_recompute (full, uniform, 1 layer).
  r.overrides = {{"flavor", "qwen3_32b_pretrain_config"}};
  Job job = BuildJob(r);
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(job.training.recompute.num_layers, 1);
  r.overrides = {{"flavor", "qwen3_32b_pretrain_config"}, {"recompute_granularity", "null"}};
  EXPECT_EQ(BuildJob(r).training.recompute.granularity, RecomputeGranularity::kNone);
  // llama3_8b_finetune_config's LoRA branch: rank 8, alpha 16, no distributed optimizer;
  // the example's peft_dim 16 still wins.
  r.overrides = {{"flavor", "llama3_8b_finetune_config"}};
  job = BuildJob(r);
  EXPECT_EQ(job.training.lora.rank, 16);
  EXPECT_DOUBLE_EQ(job.training.lora.alpha, 32);
  EXPECT_FALSE(job.parallel.distributed_optimizer);
}

TEST(MegatronBridgeAdapter, PrecisionRecipesAndClearErrors) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest r = Example("llama31_70b_lora_posttrain.yaml");
  r.overrides = {{"precision_config", "bf16_with_fp8_current_scaling_mixed"}};
  Job job = BuildJob(r);
  EXPECT_EQ(job.training.precision.gemm, DType::kFP8);
  EXPECT_TRUE(job.training.precision.fp8_current_scaling);
  // mixed_precision.py (v0.4.2): the delayed, current-scaling and MXFP8 recipes set
  // fp8_param_gather = True, the blockwise (subchannel) one does not.
  EXPECT_TRUE(job.training.precision.fp8_param_gather);
  r.overrides = {{"precision_config", "bf16-with-mxfp8-mixed"}};  // registered with hyphens too
  EXPECT_EQ(BuildJob(r).training.precision.gemm, DType::kMXFP8);
  EXPECT_TRUE(BuildJob(r).training.precision.fp8_param_gather);
  r.overrides = {{"precision_config", "bf16_with_fp8_subchannel_scaling_mixed"}};
  EXPECT_FALSE(BuildJob(r).training.precision.fp8_param_gather);
  r.overrides = {{"precision_config", "bf16_mixed"}};
  EXPECT_FALSE(BuildJob(r).training.precision.fp8_param_gather);
  r.overrides = {{"peft", "none"}};
  EXPECT_FALSE(BuildJob(r).training.lora.enabled);
  r.overrides = {{"precision_config", "bf16_mixd"}};
  try {
    BuildJob(r);
    ADD_FAILURE() << "an unknown precision recipe was accepted";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("precision_config"));
    EXPECT_THAT(e.what(), HasSubstr("unknown mixed-precision recipe \"bf16_mixd\""));
  }
  r.overrides = {{"peft_dim", "100000"}};  // above Llama 3.1 70B's hidden size of 8192
  EXPECT_THAT(BuildJob(r).warnings, Contains(HasSubstr("LoRA rank 100000 is not below")));
  r.overrides = {{"peft", "ia3"}};
  EXPECT_THROW(BuildJob(r), UserError);
}

// Without a Primus checkout the model file is not read: the model comes from the library by
// the file's name, and the note says which.
TEST(MegatronBridgeAdapter, WithoutACheckoutTheModelComesFromItsName) {
  const std::string dir = ::testing::TempDir() + "/bridge_no_checkout/MI300X";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/qwen3_8b_sft.yaml";
  std::ofstream(path) << "modules:\n  post_trainer:\n    framework: megatron_bridge\n"
                         "    config: sft_trainer.yaml\n    model: qwen3_8b.yaml\n"
                         "    overrides:\n      micro_batch_size: 1\n      seq_length: 2048\n"
                         "      precision_config: bf16_mixed\n";
  JobRequest r;
  r.config_path = path;
  r.use_environment = false;
  const Job job = BuildJob(r);
  EXPECT_EQ(job.model.name, "qwen3_8B");
  EXPECT_EQ(job.training.seq_length, 2048);
  EXPECT_TRUE(job.parallel.distributed_optimizer);
}

}  // namespace
}  // namespace sextant
