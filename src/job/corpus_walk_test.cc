// Builds a Job for every Primus experiment file in the shared corpus
// (corpus/primus/examples/{megatron,torchtitan,maxtext}/configs), with the corpus copy
// of Primus as the checkout: language models must build; architectures Sextant does not
// model must be refused with "unsupported architecture".
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "job/job_builder.h"
#include "memory/memory_model.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const std::string kPrimus = CorpusPath("primus");

std::vector<std::string> ExperimentFiles() {
  std::vector<std::string> files;
  for (const char* framework : {"megatron", "torchtitan", "maxtext"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(kPrimus + "/examples/" + framework + "/configs")) {
      if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
        files.push_back(fs::relative(entry.path(), kPrimus).string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool Matches(const std::string& file, std::initializer_list<const char*> fragments) {
  return std::any_of(fragments.begin(), fragments.end(), [&](const char* fragment) {
    return file.find(fragment) != std::string::npos;
  });
}

// Models whose architecture the projection does not cover (see docs/configuration.md).
bool IsUnsupportedArchitecture(const std::string& file) {
  return Matches(file, {"/diffusion/", "mamba_370M", "zebra_llama", "qwen3_5_35B_A3B",
                        "lfm2_8B_A1B", "kimi_k3", "deepseek_v4"});
}

// Files in the configs folders that are not experiments.
bool IsNotAnExperiment(const std::string& file) {
  return Matches(file, {"-te-precision.yaml", ".template.yaml"});
}

Job Build(const std::string& relative) {
  JobRequest request;
  request.config_path = kPrimus + "/" + relative;
  request.primus_path = kPrimus;
  request.use_environment = false;
  return BuildJob(request);
}

// Primus's gpt-oss model files set ffn_hidden_size beside an all-MoE layer pattern: a width
// no layer uses is no change of shape.
TEST(CorpusWalk, AnFfnWidthNoLayerUsesLeavesTheModelItsName) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = Build("examples/megatron/configs/MI300X/gpt_oss_20B-BF16-pretrain.yaml");
  EXPECT_EQ(job.model.name, "gpt_oss_20B");
  EXPECT_THAT(job.notes, ::testing::Not(::testing::Contains(HasSubstr("ffn_hidden_size"))));
}

TEST(CorpusWalk, EveryExperimentBuildsOrIsRefusedForItsArchitecture) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::vector<std::string> files = ExperimentFiles();
  ASSERT_GE(files.size(), 400u);
  size_t built = 0;
  size_t refused = 0;
  size_t not_experiments = 0;
  for (const std::string& file : files) {
    std::string error;
    try {
      const Job job = Build(file);
      ++built;
      EXPECT_GT(job.model.num_layers, 0) << file;
      EXPECT_GT(job.model.vocab_size, 0) << file;
      EXPECT_EQ(job.parallel.WorldSize(), job.cluster.WorldSize()) << file;
      EXPECT_EQ(job.training.global_batch_size % (job.training.micro_batch_size * job.parallel.dp),
                0)
          << file;
    } catch (const UserError& e) {
      error = e.what();
    }
    if (IsUnsupportedArchitecture(file) && !IsNotAnExperiment(file)) {
      EXPECT_THAT(error, HasSubstr("unsupported architecture")) << file;
      ++refused;
    } else if (IsNotAnExperiment(file)) {
      EXPECT_FALSE(error.empty()) << file;
      ++not_experiments;
    } else {
      EXPECT_EQ(error, "") << file;
    }
  }
  // 56 refused (Flux, Mamba / Zebra-Llama, Qwen3.5, LFM2, Kimi-K3, DeepSeek-V4) and 2 files
  // that are not experiments; every other experiment builds.
  EXPECT_EQ(refused, 56u);
  EXPECT_EQ(not_experiments, 2u);
  EXPECT_EQ(built, files.size() - refused - not_experiments);
}

// Gemma 4 through MaxText: the experiment names only model_name; local layers keep head dim
// 256 and a 1024-token window, every sixth layer is global with head dim 512 and one K/V
// projection (MaxText configs/models/gemma4-31b.yml).
TEST(CorpusWalk, MaxTextGemma4) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = Build("examples/maxtext/configs/MI300X/gemma4_31B-bf16-pretrain.yaml");
  EXPECT_EQ(job.model.name, "gemma4_31B");
  EXPECT_EQ(job.model.num_layers, 60);
  EXPECT_EQ(job.model.AttentionOf(0).head_dim, 256);
  EXPECT_EQ(job.model.AttentionOf(0).window, 1024);
  EXPECT_EQ(job.model.AttentionOf(5).head_dim, 512);
  EXPECT_EQ(job.model.AttentionOf(5).kv_heads, 4);
  EXPECT_EQ(job.model.AttentionOf(5).kv_tensors, 1);
  EXPECT_EQ(job.model.AttentionOf(5).window, 0);
  const Job moe = Build("examples/maxtext/configs/MI355X/gemma4_26B-bf16-pretrain.yaml");
  EXPECT_EQ(moe.model.moe.num_experts, 128);
  EXPECT_EQ(moe.model.moe.router_topk, 8);
}

// MaxText shards parameters over the expert axis as well as fsdp (base.yml: 'embed' ->
// [fsdp, fsdp_transpose, sequence, tensor_transpose, context, expert]): a mesh of 8 experts
// and fsdp 1 is still fully sharded, not data parallel with replicated weights.
TEST(CorpusWalk, MaxTextShardsParametersOverTheExpertAxis) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.config_path =
      kPrimus + "/examples/maxtext/configs/MI355X/mixtral_8x7B-bf16-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  request.overrides = {{"ici_expert_parallelism", "8"}, {"ici_fsdp_parallelism", "1"}};
  const Job job = BuildJob(request);
  EXPECT_EQ(job.parallel.ep, 8);
  EXPECT_EQ(job.parallel.dp, 8);
  EXPECT_TRUE(job.parallel.fsdp2);
  request.overrides = {{"ici_data_parallelism", "8"}, {"ici_fsdp_parallelism", "1"}};
  EXPECT_FALSE(BuildJob(request).parallel.fsdp2);  // the data axis replicates
}

// dcn_data_parallelism -1 fills the nodes with data-parallel replicas of the fsdp-sharded
// state (base.yml shards no parameter over 'data'): on 4 nodes the shard group stays the node's
// 8 GPUs and the 4 replicas all-reduce (HSDP), instead of sharding over all 32 GPUs.
TEST(CorpusWalk, MaxTextDataAxisAcrossNodesReplicatesTheShardedState) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.config_path = kPrimus + "/examples/maxtext/configs/MI355X/llama3_8B-bf16-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  request.target_nodes = 4;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.parallel.dp, 32);
  EXPECT_TRUE(job.parallel.fsdp2);
  EXPECT_EQ(job.parallel.fsdp_replicas, 4);
  EXPECT_EQ(job.parallel.FsdpShardGroup(), 8);
  request.target_nodes = 1;
  EXPECT_EQ(BuildJob(request).parallel.fsdp_replicas, 1);
}

// The experiment's env: block is what Primus's runtime exports before JAX starts; the MI355X
// Mixtral 8x7B example raises JAX's preallocation to 96% of HBM there.
TEST(CorpusWalk, MaxTextReadsTheJaxMemoryFractionFromTheExperimentsEnv) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  EXPECT_DOUBLE_EQ(Build("examples/maxtext/configs/MI355X/mixtral_8x7B-bf16-pretrain.yaml")
                       .training.xla_memory_fraction,
                   0.96);
  EXPECT_DOUBLE_EQ(Build("examples/maxtext/configs/MI355X/llama3_8B-bf16-pretrain.yaml")
                       .training.xla_memory_fraction,
                   0.0);
}

TEST(CorpusWalk, AMaxTextMeshThatDoesNotFitNamesEachAxisAndWhereItWasSet) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.config_path = kPrimus + "/examples/maxtext/configs/MI300X/llama3_8B-bf16-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  request.overrides = {{"ici_tensor_parallelism", "2"}};
  try {
    BuildJob(request);
    FAIL() << "a 16-way mesh on 8 GPUs was accepted";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ici mesh axes multiply to 16 (ici_fsdp_parallelism=8 ("),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("llama3_8B-bf16-pretrain.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find("x ici_tensor_parallelism=2 (--ici_tensor_parallelism)) but there are 8"),
              std::string::npos)
        << what;
  }
}

TEST(CorpusWalk, MegatronLlamaExample) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = Build("examples/megatron/configs/MI300X/llama3.1_8B-BF16-pretrain.yaml");
  EXPECT_EQ(job.cluster.gpu.name, "MI300X");
  EXPECT_EQ(job.model.num_layers, 32);
  EXPECT_EQ(job.model.vocab_size, 128256);
  EXPECT_EQ(job.parallel.tp, 1);
  EXPECT_EQ(job.parallel.dp, 8);
  EXPECT_EQ(job.training.micro_batch_size, 2);
  EXPECT_EQ(job.training.global_batch_size, 128);
  EXPECT_EQ(job.training.sequences_per_data_rank, 0);  // fixed globally when scaled
  EXPECT_EQ(job.training.seq_length, 8192);
  EXPECT_TRUE(job.training.cross_entropy_loss_fusion);
  EXPECT_EQ(job.training.cross_entropy_impl, CrossEntropyImpl::kTransformerEngine);  // "te"
  EXPECT_TRUE(job.training.overlap_grad_reduce);
}

// DeepSeek-V3 on MI355X: MLA, first three layers dense, MTP, and a layout of 32 stages
// over PP 16, which Megatron reads as 2 virtual stages per rank.
TEST(CorpusWalk, MegatronDeepSeekV3Layout) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = Build("examples/megatron/configs/MI355X/deepseek_v3-BF16-pretrain.yaml");
  EXPECT_EQ(job.model.num_layers, 61);
  EXPECT_EQ(job.model.attention, AttentionType::kMultiLatent);
  EXPECT_EQ(job.model.mla.q_lora_rank, 1536);
  EXPECT_EQ(job.model.mla.kv_lora_rank, 512);
  EXPECT_EQ(job.model.moe.num_experts, 256);
  EXPECT_EQ(job.model.moe.router_topk, 8);
  ASSERT_EQ(job.model.moe.moe_layers.size(), 61u);
  EXPECT_FALSE(job.model.moe.moe_layers[2]);
  EXPECT_TRUE(job.model.moe.moe_layers[3]);
  EXPECT_EQ(job.model.NumMoeLayers(), 58);
  EXPECT_EQ(job.model.mtp_num_layers, 1);
  EXPECT_EQ(job.model.vocab_size, 129280);
  EXPECT_EQ(job.parallel.pp, 16);
  EXPECT_EQ(job.parallel.vpp, 2);
  // The model file's MTP layer has no m in the example's layout, which Megatron-Core refuses:
  // the projection says so and how to leave it out.
  EXPECT_TRUE(std::any_of(job.notes.begin(), job.notes.end(), [](const std::string& n) {
    return n.find("places no MTP layer (no m), which Megatron-Core refuses") != std::string::npos &&
           n.find("--mtp_num_layers 0") != std::string::npos;
  }));
}

TEST(CorpusWalk, MaxTextMesh) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = Build("examples/maxtext/configs/MI300X/llama2_7B-bf16-pretrain.yaml");
  EXPECT_EQ(job.framework, "maxtext");
  EXPECT_EQ(job.model.num_layers, 32);
  EXPECT_EQ(job.model.vocab_size, 32000);
  EXPECT_EQ(job.parallel.dp, 8);  // ici_fsdp_parallelism 8
  EXPECT_TRUE(job.parallel.fsdp2);
  EXPECT_EQ(job.training.global_batch_size, 96);        // per_device_batch_size 12 x 8 GPUs
  EXPECT_EQ(job.training.sequences_per_data_rank, 12);  // fixed per rank when scaled
  EXPECT_EQ(job.training.micro_batch_size, 12);
  EXPECT_EQ(job.training.seq_length, 4096);
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kSelective);  // minimal_flash
  EXPECT_EQ(job.training.precision.params, DType::kBF16);
  // optax updates the bf16 parameters in place (no master copy); AdamW's moments follow the
  // weight dtype (mu_dtype unset). Gradients take the parameters' bf16: train.py casts only
  // float32 gradients to grad_dtype ("x.astype(config.grad_dtype) if x.dtype == jnp.float32").
  EXPECT_EQ(job.training.precision.main_params, DType::kBF16);
  EXPECT_EQ(job.training.precision.exp_avg, DType::kBF16);
  EXPECT_EQ(job.training.precision.exp_avg_sq, DType::kBF16);
  EXPECT_EQ(job.training.precision.main_grads, DType::kBF16);
}

// torchtitan's linear converters swap nn.Linear only: MoE experts stay in the parameter dtype
// unless Primus Turbo's grouped GEMM runs them in FP8 (use_turbo_grouped_mm with use_moe_fp8)
// or a quantize.grouped_mm converter is listed.
TEST(CorpusWalk, TorchTitanExpertGemmsFollowTheirOwnConverter) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job gpt_oss = Build("examples/torchtitan/configs/MI300X/gpt_oss_120B-FP8-pretrain.yaml");
  EXPECT_EQ(gpt_oss.training.precision.gemm, DType::kFP8);
  EXPECT_EQ(gpt_oss.training.precision.ExpertGemm(), DType::kBF16);  // use_turbo_grouped_mm off
  const Job dsv3 = Build("examples/torchtitan/configs/MI300X/deepseek_v3_16b-FP8-pretrain.yaml");
  EXPECT_EQ(dsv3.training.precision.ExpertGemm(), DType::kFP8);  // turbo grouped mm + moe fp8
  JobRequest request;
  request.config_path =
      kPrimus + "/examples/torchtitan/configs/MI300X/gpt_oss_120B-FP8-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  request.overrides = {{"model.converters", "[quantize.linear.float8, quantize.grouped_mm.mx]"}};
  EXPECT_EQ(BuildJob(request).training.precision.ExpertGemm(), DType::kMXFP8);
  request.overrides = {{"model.converters", "[quantize.grouped_mm.float8]"}};
  const Job experts_only = BuildJob(request);
  EXPECT_EQ(experts_only.training.precision.gemm, DType::kBF16);
  EXPECT_EQ(experts_only.training.precision.ExpertGemm(), DType::kFP8);
}

// One accumulation step's batch is per_device_batch_size per device; the step adds
// gradient_accumulation_steps of them (MaxText configs/types.py calculate_global_batch_sizes).
TEST(CorpusWalk, MaxTextGradientAccumulationMultipliesTheGlobalBatch) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.config_path = kPrimus + "/examples/maxtext/configs/MI300X/llama2_7B-bf16-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  request.overrides = {{"gradient_accumulation_steps", "4"}};
  const Job job = BuildJob(request);
  EXPECT_EQ(job.training.global_batch_size, 384);  // 12 per device x 8 GPUs x 4 steps
  EXPECT_EQ(job.training.micro_batch_size, 12);    // per_device_batch_size stays the micro-batch
}

// MaxText's named remat policies: each saves a subset of the next one's tensors here, so the
// stored activations never grow from policy to policy; a name MaxText lacks is refused.
TEST(CorpusWalk, MaxTextRematPoliciesSaveWhatTheyName) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.config_path = kPrimus + "/examples/maxtext/configs/MI300X/llama2_7B-bf16-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  auto activations = [&](const std::string& policy) {
    request.overrides = {{"remat_policy", policy}};
    return ProjectMemory(BuildJob(request)).stages.front().activations_bytes;
  };
  const int64_t full = activations("full");
  const int64_t qkv = activations("save_qkv_proj");
  const int64_t dots_except_mlp = activations("save_dot_except_mlp");
  const int64_t minimal = activations("minimal");
  const int64_t none = activations("none");
  EXPECT_LT(full, qkv);
  EXPECT_LT(qkv, dots_except_mlp);
  EXPECT_LT(dots_except_mlp, minimal);
  EXPECT_LT(minimal, none);
  // save_dot_except_mlp keeps Q, K, V and the output projection; save_qkv_proj drops the latter:
  // 2 bytes x hidden 4096 per token x 12 x 4096 tokens x 32 layers = 12 GiB (Llama 2 7B).
  EXPECT_EQ(dots_except_mlp - qkv, int64_t{2} * 4096 * 12 * 4096 * 32);
  // custom: each tensor where its key says ('remat' by default; 'offload' counted as kept).
  const int64_t custom = activations("custom");
  EXPECT_LT(custom, qkv);
  request.overrides = {{"remat_policy", "custom"}, {"out_proj", "device"}};
  EXPECT_EQ(ProjectMemory(BuildJob(request)).stages.front().activations_bytes - custom,
            int64_t{2} * 4096 * 12 * 4096 * 32);
  request.overrides = {{"remat_policy", "custom"},
                       {"query_proj", "device"},
                       {"key_proj", "offload"},
                       {"value_proj", "device"}};
  EXPECT_EQ(ProjectMemory(BuildJob(request)).stages.front().activations_bytes, qkv);
  request.overrides = {{"remat_policy", "save_everything"}};
  EXPECT_THAT([&] { BuildJob(request); },
              ThrowsMessage<UserError>(HasSubstr("unknown policy \"save_everything\"")));
}

// Primus's MaxText MoE examples run dense_matmul (sparse_matmul: false) with capacity_factor 1:
// one-hot dispatch/combine einsums and experts on capacity slots.
TEST(CorpusWalk, MaxTextDenseMatmulMoe) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job qwen = Build("examples/maxtext/configs/MI300X/qwen3_30B_A3B-bf16-pretrain.yaml");
  EXPECT_EQ(qwen.training.moe_expert_compute, MoeExpertCompute::kCapacitySlots);
  EXPECT_DOUBLE_EQ(qwen.model.moe.capacity_factor, 1.0);
  EXPECT_TRUE(qwen.training.recompute.matmul_outputs_only);  // remat_policy "minimal"
  EXPECT_TRUE(qwen.training.recompute.save_mlp_outputs);
  const Job mixtral = Build("examples/maxtext/configs/MI300X/mixtral_8x7B-bf16-pretrain.yaml");
  // save_dot_with_context_except_mlp: attention projections and context saved, MLP re-run.
  EXPECT_TRUE(mixtral.training.recompute.matmul_outputs_only);
  EXPECT_TRUE(mixtral.training.recompute.save_attention_context);
  EXPECT_FALSE(mixtral.training.recompute.save_mlp_outputs);
  // A capacity factor no one could run is refused by name, not cast to an integer.
  JobRequest request;
  request.config_path =
      kPrimus + "/examples/maxtext/configs/MI300X/qwen3_30B_A3B-bf16-pretrain.yaml";
  request.primus_path = kPrimus;
  request.use_environment = false;
  for (const char* bad : {"inf", "1e300", "nan"}) {
    request.overrides = {{"capacity_factor", bad}};
    try {
      BuildJob(request);
      ADD_FAILURE() << "capacity_factor " << bad << " was accepted";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr("capacity_factor")) << bad;
    }
  }
  // The dense llama example keeps the sorted (default) layout.
  const Job llama = Build("examples/maxtext/configs/MI300X/llama2_7B-bf16-pretrain.yaml");
  EXPECT_EQ(llama.training.moe_expert_compute, MoeExpertCompute::kGroupedTokens);
}

TEST(CorpusWalk, TorchTitanPrimusYaml) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const Job job = Build("examples/torchtitan/configs/MI300X/deepseek_v3_16b-BF16-pretrain.yaml");
  EXPECT_EQ(job.framework, "torchtitan");
  EXPECT_EQ(job.model.num_layers, 27);
  EXPECT_EQ(job.parallel.ep, 8);
  EXPECT_EQ(job.parallel.dp, 8);
  EXPECT_EQ(job.training.micro_batch_size, 6);
  EXPECT_EQ(job.training.global_batch_size, 48);  // local_batch_size 6 x DP 8
  EXPECT_EQ(job.training.sequences_per_data_rank, 6);
  EXPECT_EQ(job.training.seq_length, 4096);
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kNone);
}

}  // namespace
}  // namespace sextant
