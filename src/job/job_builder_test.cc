#include "job/job_builder.h"
#include "config/yaml_writer.h"
#include "job/torchtitan_schedules.h"
#include "util/corpus_path.h"
#include "util/error.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sextant {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;

using Vars = std::map<std::string, std::string>;
const std::string kData = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/config/";
const std::string kCheckout = kData + "primus_checkout";
const std::string kTiny = kData + "experiments/MI355X/tiny-pretrain.yaml";
const std::string kCorpusPrimus = CorpusPath("primus");

// Sets environment variables for one test and restores them afterwards; every variable
// the builder reads is cleared so the shell running the tests cannot change results.
class ScopedEnvironment {
 public:
  ScopedEnvironment() : ScopedEnvironment(std::map<std::string, std::string>{}) {}
  explicit ScopedEnvironment(std::map<std::string, std::string> values) {
    for (const char* name : {"PRIMUS_TP", "PRIMUS_PP", "PRIMUS_EP", "PRIMUS_CP", "NNODES",
                             "GPUS_PER_NODE", "PRIMUS_GPU_ARCH", "PRIMUS_GPU_CLOCK_MHZ",
                             "PRIMUS_PATH", "SEXTANT_DATA_DIR", "SEXTANT_TEST_TP"}) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      unsetenv(name);
    }
    for (const auto& [name, value] : values) {
      if (!saved_.count(name)) {
        const char* old = std::getenv(name.c_str());
        saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      }
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

JobRequest TinyRequest(std::vector<std::pair<std::string, std::string>> overrides = {}) {
  JobRequest request;
  request.config_path = kTiny;
  request.primus_path = kCheckout;
  request.use_environment = false;
  request.overrides = std::move(overrides);
  return request;
}

std::string ErrorOf(const JobRequest& request) {
  try {
    BuildJob(request);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BuildJob, LayersMergeInPrecedenceOrder) {
  const Job job = BuildJob(TinyRequest());
  EXPECT_EQ(job.framework, "megatron");
  EXPECT_EQ(job.model.name, "tiny_llama");
  // overrides (4096) > model file (2048) > module defaults (1024)
  EXPECT_EQ(job.training.seq_length, 4096);
  // pre_trainer.yaml (128) > the trainer_base.yaml it extends (64)
  EXPECT_EQ(job.training.global_batch_size, 128);
  EXPECT_EQ(job.training.micro_batch_size, 1);
  EXPECT_DOUBLE_EQ(job.training.hidden_dropout, 0.1);  // only in the module defaults
  EXPECT_TRUE(job.parallel.distributed_optimizer);
  // ${SEXTANT_TEST_TP:2} with the variable unset gives the default.
  EXPECT_EQ(job.parallel.tp, 2);
  EXPECT_TRUE(job.parallel.sequence_parallel);
  // Model file through its extends chain; Megatron defaults for what it leaves out.
  EXPECT_EQ(job.model.num_layers, 8);
  EXPECT_EQ(job.model.hidden_size, 1024);
  EXPECT_EQ(job.model.ffn_hidden_size, 2816);
  EXPECT_EQ(job.model.num_query_groups, 4);
  EXPECT_EQ(job.model.kv_channels, 64);  // hidden / heads = 1024 / 16
  EXPECT_EQ(job.model.vocab_size, 32000);
  // Megatron pads to a multiple of 128 x TP = 256: 32000 = 125 x 256 already.
  EXPECT_EQ(job.model.PaddedVocabSize(job.parallel.tp), 32000);
  EXPECT_EQ(job.model.normalization, NormType::kRMSNorm);
  // GPU from the directory the experiment lives in (configs/MI355X/ in Primus).
  EXPECT_EQ(job.cluster.gpu.name, "MI355X");
  EXPECT_EQ(job.cluster.num_nodes, 1);
  EXPECT_EQ(job.cluster.WorldSize(), 8);
  EXPECT_EQ(job.parallel.dp, 4);                                 // 8 / (TP 2 x PP 1 x CP 1)
  EXPECT_EQ(job.training.NumMicroBatches(job.parallel.dp), 32);  // 128 / (1 x 4)
}

TEST(BuildJob, GradientDtypeAndHalfPrecisionFollowMegatronsArguments) {
  // bf16 keeps fp32 main gradients unless grad_reduce_in_bf16 (arguments.py turns
  // accumulate_allreduce_grads_in_fp32 off; the DDP buffer takes the parameter dtype).
  EXPECT_EQ(BuildJob(TinyRequest()).training.precision.main_grads, DType::kFP32);
  EXPECT_EQ(BuildJob(TinyRequest({{"grad_reduce_in_bf16", "true"}})).training.precision.main_grads,
            DType::kBF16);
  // "if args.bf16: assert not args.fp16".
  EXPECT_THAT(ErrorOf(TinyRequest({{"fp16", "true"}, {"bf16", "true"}})),
              HasSubstr("fp16 and bf16 are both true"));
  EXPECT_EQ(BuildJob(TinyRequest({{"fp16", "true"}, {"bf16", "false"}})).training.precision.params,
            DType::kFP16);
}

TEST(BuildJob, FullRecomputeCountsLayersAsMegatronDoes) {
  // Block: the first recompute_num_layers layers of each stage, so 0 recomputes none (the
  // mixtral_8x22B examples set it); without a count Megatron's TransformerConfig refuses it.
  const Job none = BuildJob(TinyRequest({{"recompute_granularity", "full"},
                                         {"recompute_method", "block"},
                                         {"recompute_num_layers", "0"}}));
  EXPECT_EQ(none.training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(none.training.recompute.num_layers, 0);
  EXPECT_THAT(none.notes, Contains(HasSubstr("no layer is recomputed")));
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"recompute_granularity", "full"}, {"recompute_method", "block"}})),
      HasSubstr("'recompute_num_layers': recompute_method block needs it"));
  // Full recompute without a method, or uniform without a count: TransformerConfig refuses
  // both ("recompute_method must be "block" or "uniform""; "recompute_num_layers must be
  // between 1 and ..."), and so does the projection, saying what runs.
  EXPECT_THAT(ErrorOf(TinyRequest({{"recompute_granularity", "full"}})),
              AllOf(HasSubstr("'recompute_method': full recompute needs it"),
                    HasSubstr("--recompute_method uniform --recompute_num_layers 1")));
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"recompute_granularity", "full"}, {"recompute_method", "uniform"}})),
      HasSubstr("'recompute_num_layers': recompute_method uniform needs it"));
  const Job uniform = BuildJob(TinyRequest({{"recompute_granularity", "full"},
                                            {"recompute_method", "uniform"},
                                            {"recompute_num_layers", "1"}}));
  EXPECT_EQ(uniform.training.recompute.method, RecomputeMethod::kUniform);
  EXPECT_EQ(uniform.training.recompute.num_layers, 1);
  // Primus's recompute_layer_ids need neither.
  const Job ids =
      BuildJob(TinyRequest({{"recompute_granularity", "full"}, {"recompute_layer_ids", "0,1"}}));
  EXPECT_EQ(ids.training.recompute.layer_ids, (std::vector<int64_t>{0, 1}));
}

TEST(BuildJob, EnvironmentBeatsOverridesAndFlagsBeatEnvironment) {
  {
    // The tiny experiment writes pipeline_model_parallel_size: 1 and never ${PRIMUS_PP}: as in
    // Primus, PRIMUS_PP does not apply there (and a note says so).
    ScopedEnvironment env(Vars{{"PRIMUS_PP", "2"}, {"SEXTANT_TEST_TP", "1"}});
    JobRequest request = TinyRequest();
    request.use_environment = true;
    const Job job = BuildJob(request);
    EXPECT_EQ(job.parallel.pp, 1);
    EXPECT_EQ(job.parallel.tp, 1);  // ${SEXTANT_TEST_TP:2} interpolated from the environment
    EXPECT_FALSE(job.parallel.sequence_parallel);  // Megatron turns SP off at TP 1
    EXPECT_THAT(job.notes, Contains(HasSubstr("PRIMUS_PP=2 is set but the configuration never "
                                              "writes ${PRIMUS_PP}: not applied")));
  }
  {
    // An experiment that writes ${PRIMUS_PP:1} / ${PRIMUS_TP:2} takes them.
    ScopedEnvironment env(Vars{{"PRIMUS_PP", "2"}, {"PRIMUS_TP", "1"}});
    JobRequest request;
    request.config_path = kData + "experiments/MI355X/tiny-primus-vars.yaml";
    request.primus_path = kCheckout;
    request.use_environment = true;
    const Job job = BuildJob(request);
    EXPECT_EQ(job.parallel.pp, 2);
    EXPECT_EQ(job.parallel.tp, 1);
    EXPECT_THAT(job.notes, Contains(HasSubstr("PRIMUS_PP=2 from the environment, where the "
                                              "configuration writes ${PRIMUS_PP}")));
    // The command line still wins.
    request.overrides = {{"pipeline_model_parallel_size", "4"}};
    const Job flagged = BuildJob(request);
    EXPECT_EQ(flagged.parallel.pp, 4);
    EXPECT_EQ(flagged.parallel.dp, 2);  // 8 / (1 x 4)
  }
  {
    // use_environment = false ignores the process environment entirely.
    ScopedEnvironment env(Vars{{"PRIMUS_PP", "2"}, {"NNODES", "4"}});
    const Job job = BuildJob(TinyRequest());
    EXPECT_EQ(job.parallel.pp, 1);
    EXPECT_EQ(job.cluster.num_nodes, 1);
  }
}

TEST(BuildJob, NodesFromEnvironmentAndFlag) {
  {
    ScopedEnvironment env(Vars{{"NNODES", "4"}, {"GPUS_PER_NODE", "4"}});
    JobRequest request = TinyRequest();
    request.use_environment = true;
    const Job job = BuildJob(request);
    EXPECT_EQ(job.cluster.num_nodes, 4);
    EXPECT_EQ(job.cluster.gpus_per_node, 4);
    EXPECT_EQ(job.parallel.dp, 8);  // 16 / 2
  }
  JobRequest request = TinyRequest();
  request.target_nodes = 2;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.cluster.WorldSize(), 16);
  EXPECT_EQ(job.parallel.dp, 8);
}

TEST(BuildJob, HardwareConfigAndBadNodeCounts) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request = TinyRequest();
  request.hardware_config = kCorpusPrimus + "/examples/hardware_configs/mi355x.yaml";
  EXPECT_EQ(BuildJob(request).cluster.gpu.name, "MI355X");
  request.hardware_config = kData + "base.yaml";  // not a hardware config
  EXPECT_THROW(BuildJob(request), UserError);
  request = TinyRequest();
  request.target_nodes = -1;
  EXPECT_THAT(ErrorOf(request), HasSubstr("--target-nodes: must be a node count from 1 to 100000"));
  // A hundred million nodes is a typo, not a cluster: refused before any count derives from it.
  request.target_nodes = 100'000'000;
  EXPECT_THAT(ErrorOf(request), HasSubstr("--target-nodes: must be a node count from 1 to 100000"));
  ScopedEnvironment env(Vars{{"NNODES", "0"}});
  request = TinyRequest();
  request.use_environment = true;
  EXPECT_THAT(ErrorOf(request), HasSubstr("$NNODES: must be a node count from 1 to 100000"));
}

TEST(BuildJob, NonNumericEnvironmentValueIsAnError) {
  ScopedEnvironment env(Vars{{"PRIMUS_TP", "two"}});
  JobRequest request = TinyRequest();
  request.use_environment = true;
  EXPECT_THAT(ErrorOf(request), AllOf(HasSubstr("$PRIMUS_TP"), HasSubstr("expected an integer")));
}

// "--micro_batch_size --tensor_model_parallel_size 2": the first flag has no value and reads
// as true; the error says so instead of leaving "found true" to be puzzled over.
TEST(BuildJob, OverrideWithoutAValueSaysItReadAsTrue) {
  EXPECT_EQ(ErrorOf(TinyRequest({{"micro_batch_size", "true"}})),
            "--micro_batch_size: 'micro_batch_size': expected an integer, found true (a "
            "--micro_batch_size with no value after it reads as true)");
}

TEST(BuildJob, UnknownOverrideKeyListsCloseMatches) {
  const std::string error = ErrorOf(TinyRequest({{"tensor_model_paralel_size", "2"}}));
  EXPECT_THAT(error, HasSubstr("unknown configuration key \"tensor_model_paralel_size\""));
  EXPECT_THAT(error, HasSubstr("did you mean tensor_model_parallel_size"));
  // A key of the module defaults or the known Megatron arguments is accepted.
  EXPECT_NO_THROW(BuildJob(TinyRequest({{"hidden_dropout", "0.0"}, {"train_iters", "10"}})));
  // A launcher's node flag points at the command's.
  EXPECT_THAT(ErrorOf(TinyRequest({{"nnodes", "2"}})),
              HasSubstr("the node count is --target-nodes"));
}

// Megatron's validate_args derives the head size as hidden / heads when kv_channels is unset,
// and every key/value group serves the same number of query heads.
TEST(BuildJob, HeadsMustSplitTheHiddenSizeAndTheGroups) {
  EXPECT_THAT(ErrorOf(TinyRequest({{"hidden_size", "4001"}})),
              HasSubstr("is not divisible by num_attention_heads"));
  EXPECT_THAT(ErrorOf(TinyRequest({{"num_attention_heads", "32"}, {"num_query_groups", "12"}})),
              HasSubstr("12 does not divide num_attention_heads 32"));
  // With kv_channels given, the hidden size need not divide.
  EXPECT_NO_THROW(BuildJob(TinyRequest({{"hidden_size", "4001"}, {"kv_channels", "128"}})));
}

// Megatron-LM's validate_args stops an FSDP2 run with PP, EP or the distributed optimizer.
TEST(BuildJob, MegatronFsdp2RefusesWhatMegatronRefuses) {
  const std::vector<std::pair<std::string, std::string>> fsdp2 = {
      {"use_torch_fsdp2", "true"}, {"use_distributed_optimizer", "false"}};
  EXPECT_NO_THROW(BuildJob(TinyRequest(fsdp2)));
  auto with_pp = fsdp2;
  with_pp.push_back({"pipeline_model_parallel_size", "2"});
  EXPECT_THAT(ErrorOf(TinyRequest(with_pp)),
              HasSubstr("is not supported with pipeline parallelism"));
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"use_torch_fsdp2", "true"}, {"use_distributed_optimizer", "true"}})),
      HasSubstr("is not supported with the distributed optimizer"));
}

// Megatron's parallel-size names given to torchtitan name torchtitan's keys.
TEST(BuildJob, MegatronNamesOnTorchTitanPointAtItsKeys) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"tensor_model_parallel_size", "2"}};
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("torchtitan calls it --parallelism.tensor_parallel_degree"));
  // The expert-parallel name too, although "--exp" (the --config alias) and the model key
  // "model" look alike.
  request.command_flags = {"--exp", "--config", "--target-nodes"};
  request.overrides = {{"expert_model_parallel_size", "2"}};
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("torchtitan calls it --parallelism.expert_parallel_degree"));
  // Megatron's precision switch: torchtitan's is a float8 model converter.
  request.overrides = {{"fp8", "hybrid"}};
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("torchtitan trains in FP8 with --model.converters quantize.linear.float8"));
}

// compile.components as a command line writes a list: "[model,loss]" (YAML's flow style) or
// "model,loss"; torchtitan compiles only the model and the loss.
TEST(BuildJob, TorchTitanCompileComponentsInEitherListSpelling) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  for (const char* list : {"[model,loss]", "model, loss", "['model', 'loss']"}) {
    request.overrides = {{"compile.enable", "true"}, {"compile.components", list}};
    const Job job = BuildJob(request);
    EXPECT_TRUE(job.training.compiled_graph) << list;
    EXPECT_TRUE(job.training.cross_entropy_loss_fusion) << list;
  }
  request.overrides = {{"compile.enable", "true"}, {"compile.components", "[loss]"}};
  const Job loss_only = BuildJob(request);
  EXPECT_FALSE(loss_only.training.compiled_graph);
  EXPECT_TRUE(loss_only.training.cross_entropy_loss_fusion);
  request.overrides = {{"compile.enable", "true"}, {"compile.components", "[modle]"}};
  EXPECT_THAT(ErrorOf(request), HasSubstr("\"modle\" is not a component torchtitan compiles"));
}

// Megatron's --cross-entropy-fusion-impl takes native (the default) or te.
TEST(BuildJob, CrossEntropyFusionImpl) {
  EXPECT_EQ(BuildJob(TinyRequest()).training.cross_entropy_impl, CrossEntropyImpl::kNative);
  EXPECT_EQ(
      BuildJob(TinyRequest({{"cross_entropy_fusion_impl", "te"}})).training.cross_entropy_impl,
      CrossEntropyImpl::kTransformerEngine);
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"cross_entropy_fusion_impl", "apex"}})),
      AllOf(HasSubstr("cross_entropy_fusion_impl"), HasSubstr("'apex' is not native or te")));
}

TEST(BuildJob, TensorParallelMustDivideHeads) {
  const std::string error = ErrorOf(TinyRequest({{"tensor_model_parallel_size", "3"}}));
  EXPECT_THAT(
      error,
      HasSubstr("tensor_model_parallel_size=3 (--tensor_model_parallel_size) does not divide "
                "num_attention_heads=16 ("));
  EXPECT_THAT(error, HasSubstr("tiny_llama.yaml:6:22)"));
}

TEST(BuildJob, TensorParallelMustDivideQueryGroups) {
  // 16 heads split 8 ways, but only 4 key/value groups.
  EXPECT_THAT(ErrorOf(TinyRequest({{"tensor_model_parallel_size", "8"}})),
              HasSubstr("does not divide num_query_groups=4"));
}

TEST(BuildJob, GlobalBatchMustDivideByMicroBatchTimesDataParallel) {
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"global_batch_size", "6"}})),
      HasSubstr(
          "global_batch_size=6 (--global_batch_size) is not divisible by micro_batch_size=1"));
  // A micro-batch from the command line that the configured batch is no multiple of fits no
  // data-parallel size (128 over 3): Megatron refuses it, and so does the projection.
  JobRequest request = TinyRequest();
  request.micro_batch_size = 3;
  EXPECT_THAT(ErrorOf(request), HasSubstr("global_batch_size 128 ("));
  EXPECT_THAT(ErrorOf(request), HasSubstr("is not a multiple of micro_batch_size 3"));
  // One that divides it but not over the one-node DP is rounded as a new scale is (128 over
  // 64 x DP 4: one micro-batch per rank, 256 sequences).
  request.micro_batch_size = 64;
  const Job rounded = BuildJob(request);
  EXPECT_EQ(rounded.training.global_batch_size, 256);
  ASSERT_EQ(rounded.warnings.size(), 1u);
  EXPECT_THAT(rounded.warnings[0],
              HasSubstr("micro_batch_size 64 x data-parallel size 4 at 1 node:"));
}

// A key that takes its value from another (ETP from TP) is named once, with where it came
// from: not "expert_tensor_parallel_size (= ...)=1 (expert_tensor_parallel_size (= ...), f:1)".
TEST(BuildJob, AKeyDerivedFromAnotherIsNamedOnce) {
  JobRequest request = TinyRequest({{"expert_model_parallel_size", "3"}});
  request.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  request.target_nodes = 1;
  const std::string error = ErrorOf(request);
  EXPECT_THAT(error, HasSubstr("expert_tensor_parallel_size (= tensor_model_parallel_size)=1 ("));
  const size_t first = error.find("expert_tensor_parallel_size");
  ASSERT_NE(first, std::string::npos) << error;
  EXPECT_EQ(error.find("expert_tensor_parallel_size", first + 1), std::string::npos) << error;
}

TEST(BuildJob, LayersMustSplitOverPipelineStages) {
  // PP 3 needs 3 nodes (2 x 3 = 6 must divide the world); 8 layers do not split in 3.
  const std::string error = ErrorOf(TinyRequest({{"pipeline_model_parallel_size", "3"}}));
  EXPECT_THAT(error, HasSubstr("num_layers=8 ("));
  EXPECT_THAT(
      error,
      HasSubstr(
          "is not divisible by pipeline_model_parallel_size=3 (--pipeline_model_parallel_size)"));
  // Primus's allow_padding_num_layers accepts the uneven split, with a note.
  const Job job = BuildJob(
      TinyRequest({{"pipeline_model_parallel_size", "3"}, {"allow_padding_num_layers", "true"}}));
  EXPECT_EQ(job.cluster.num_nodes, 3);
  EXPECT_THAT(job.notes, Contains(HasSubstr("uneven split")));
}

TEST(BuildJob, TargetNodesRoundTheGlobalBatchDownAsPrimusDoes) {
  // Read the tiny experiment's batch, then ask for a node count that does not divide it.
  const Job base = BuildJob(TinyRequest());
  const int64_t gbs = base.training.global_batch_size;
  const int64_t mbs = base.training.micro_batch_size;
  JobRequest request = TinyRequest();
  request.target_nodes = 3;  // DP = 3 x the one-node DP
  const Job job = BuildJob(request);
  const int64_t per_step = mbs * job.parallel.dp;
  ASSERT_NE(gbs % per_step, 0) << "pick a node count that does not divide the batch";
  EXPECT_EQ(job.training.global_batch_size, std::max<int64_t>(1, gbs / per_step) * per_step);
  ASSERT_EQ(job.warnings.size(), 1u);
  EXPECT_THAT(job.warnings[0], HasSubstr("does not split over micro_batch_size"));
  // A global batch the user typed is their number: still an error.
  request.global_batch_size = gbs;
  EXPECT_THAT(ErrorOf(request), HasSubstr("is not divisible by"));
}

// A GB200 node is its NVL72 rack (72 GPUs): the fewest nodes that fit give DP 36 at TP 2,
// which the tiny experiment's batch of 128 does not split over. The configuration does not fix
// that scale, so the batch is rounded as at a requested one, and the note names the node.
TEST(BuildJob, TheDefaultScaleRoundsTheBatchToo) {
  JobRequest request = TinyRequest();
  request.gpu_arch = "gb200";
  const Job job = BuildJob(request);
  ASSERT_EQ(job.cluster.gpus_per_node, 72);
  const int64_t per_step = job.training.micro_batch_size * job.parallel.dp;
  EXPECT_EQ(job.training.global_batch_size % per_step, 0);
  ASSERT_EQ(job.warnings.size(), 1u);
  EXPECT_THAT(job.warnings[0], HasSubstr("does not split over micro_batch_size"));
  EXPECT_THAT(job.notes, Contains(HasSubstr("the GPU's NVLink domain; $GPUS_PER_NODE")));
}

TEST(BuildJob, PrimusScheduleKeysChooseTheSchedule) {
  // Primus's own pipeline (primus_pipeline.yaml): patch_primus_pipeline + pp_algorithm.
  EXPECT_EQ(BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                  {"patch_primus_pipeline", "true"},
                                  {"pp_algorithm", "v-half"}}))
                .training.pipeline_schedule,
            ScheduleKind::kZbvGreedyHalf);
  // pp_algorithm without the patch is not applied.
  EXPECT_EQ(BuildJob(TinyRequest(
                         {{"pipeline_model_parallel_size", "2"}, {"pp_algorithm", "zero-bubble"}}))
                .training.pipeline_schedule,
            ScheduleKind::k1F1B);
  // Megatron's zero-bubble patch, its V-shape form and its ZB-H2 memory setting.
  EXPECT_EQ(BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                  {"patch_zero_bubble", "true"},
                                  {"enable_zero_bubble", "true"}}))
                .training.pipeline_schedule,
            ScheduleKind::kZeroBubbleH1);
  EXPECT_EQ(BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                  {"patch_zero_bubble", "true"},
                                  {"enable_zero_bubble", "true"},
                                  {"zero_bubble_max_pending_backward", "4"}}))
                .training.pipeline_schedule,
            ScheduleKind::kZeroBubbleH2);
  EXPECT_EQ(BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                  {"patch_zero_bubble", "true"},
                                  {"enable_zero_bubble", "true"},
                                  {"zero_bubble_v_schedule", "true"},
                                  {"zero_bubble_v_schedule_mem_setup", "min"}}))
                .training.pipeline_schedule,
            ScheduleKind::kZbvGreedyMin);
  EXPECT_THAT(ErrorOf(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                   {"patch_primus_pipeline", "true"},
                                   {"pp_algorithm", "zero-bubbles"}})),
              HasSubstr("'pp_algorithm': unknown pipeline algorithm 'zero-bubbles'"));
}

TEST(BuildJob, CommandLineScheduleAcceptsPrimusNames) {
  JobRequest request = TinyRequest({{"pipeline_model_parallel_size", "2"}});
  request.pipeline_schedule = "seaailab-ilp";
  EXPECT_EQ(BuildJob(request).training.pipeline_schedule, ScheduleKind::kZeroBubbleHeuristic);
  request.pipeline_schedule = "all";  // a request to the projection: the run keeps its own
  EXPECT_EQ(BuildJob(request).training.pipeline_schedule, ScheduleKind::k1F1B);
  request.pipeline_schedule = "zb-hl";
  EXPECT_THAT(ErrorOf(request), HasSubstr("--pipeline-schedule-algorithm"));
  EXPECT_THAT(ErrorOf(request), HasSubstr("did you mean zb-h1"));
}

// Without pipeline parallelism Megatron runs the micro-batches one after the other: a schedule
// asked for is said to have no effect and the job keeps 1F1B; interleaving without virtual
// stages is said to run as 1F1B.
TEST(BuildJob, ScheduleWithoutPipelineOrVirtualStagesIsSaidToHaveNoEffect) {
  JobRequest request = TinyRequest({{"pipeline_model_parallel_size", "1"}});
  for (const char* schedule : {"gpipe", "dualpipev", "interleaved"}) {
    request.pipeline_schedule = schedule;
    const Job job = BuildJob(request);
    EXPECT_EQ(job.training.pipeline_schedule, ScheduleKind::k1F1B) << schedule;
    ASSERT_EQ(job.warnings.size(), 1u) << schedule;
    EXPECT_THAT(job.warnings[0], HasSubstr("has no effect without pipeline parallelism (PP 1)"));
  }
  request = TinyRequest({{"pipeline_model_parallel_size", "2"}});
  request.pipeline_schedule = "interleaved";
  const Job job = BuildJob(request);
  EXPECT_EQ(job.training.pipeline_schedule, ScheduleKind::k1F1B);
  ASSERT_EQ(job.warnings.size(), 1u);
  EXPECT_THAT(job.warnings[0], HasSubstr("interleaving needs virtual stages"));
}

TEST(BuildJob, VirtualStagesFromAnyOfThreeKeys) {
  EXPECT_EQ(BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                  {"num_layers_per_virtual_pipeline_stage", "2"}}))
                .parallel.vpp,
            2);  // 8 layers / (2 per stage x PP 2)
  const Job job = BuildJob(TinyRequest(
      {{"pipeline_model_parallel_size", "2"}, {"num_virtual_stages_per_pipeline_rank", "4"}}));
  EXPECT_EQ(job.parallel.vpp, 4);
  EXPECT_EQ(job.training.pipeline_schedule, ScheduleKind::kInterleaved1F1B);
  EXPECT_THAT(ErrorOf(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                   {"virtual_pipeline_model_parallel_size", "2"},
                                   {"num_virtual_stages_per_pipeline_rank", "4"}})),
              HasSubstr("gives 4 virtual stages per pipeline rank but "
                        "virtual_pipeline_model_parallel_size gives 2"));
  EXPECT_THAT(ErrorOf(TinyRequest({{"num_virtual_stages_per_pipeline_rank", "2"}})),
              HasSubstr("needs pipeline parallelism"));
}

TEST(BuildJob, PipelineLayoutSetsVirtualStagesAndMustAddUp) {
  const Job job = BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                        {"pipeline_model_parallel_layout", "Et*2|t*2|t*2|t*2,L"}}));
  EXPECT_EQ(job.parallel.vpp, 2);  // 4 stages over PP 2
  EXPECT_THAT(ErrorOf(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                   {"pipeline_model_parallel_layout", "Et*3|t*2,L"}})),
              HasSubstr("places 5 decoder layers but num_layers=8"));
}

// Megatron-Core's account_for_embedding/loss_in_pipeline_split: the tiny model's 8 layers and
// the embedding make 9 slots, 3 per stage on PP 3, so the first stage builds 2 layers; with
// the loss as well, 10 slots do not divide by 3 and Megatron refuses the split.
TEST(BuildJob, EmbeddingAndLossCountAsPipelineLayersWhenAsked) {
  const Job embedding =
      BuildJob(TinyRequest({{"pipeline_model_parallel_size", "3"},
                            {"account_for_embedding_in_pipeline_split", "true"}}));
  EXPECT_EQ(embedding.parallel.layout, "Et*2|t*3|t*3");
  const Job both = BuildJob(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                         {"account_for_embedding_in_pipeline_split", "true"},
                                         {"account_for_loss_in_pipeline_split", "true"}}));
  EXPECT_EQ(both.parallel.layout, "Et*4|t*4,L");
  EXPECT_THAT(ErrorOf(TinyRequest({{"pipeline_model_parallel_size", "3"},
                                   {"account_for_embedding_in_pipeline_split", "true"},
                                   {"account_for_loss_in_pipeline_split", "true"}})),
              HasSubstr("num_layers 8 plus the embedding and the loss is not divisible by "
                        "pipeline_model_parallel_size 3 x virtual stages 1"));
  EXPECT_THAT(ErrorOf(TinyRequest({{"pipeline_model_parallel_size", "2"},
                                   {"decoder_first_pipeline_num_layers", "3"},
                                   {"account_for_loss_in_pipeline_split", "true"}})),
              HasSubstr("cannot be combined with pipeline_model_parallel_layout"));
  // --num-virtual-stages-per-pipeline-rank spreads the slots over its stages: 10 slots over
  // PP 2 x 5 virtual stages, 1 each (the first stage holds only the embedding, the last only
  // the loss).
  JobRequest interleaved = TinyRequest({{"pipeline_model_parallel_size", "2"},
                                        {"account_for_embedding_in_pipeline_split", "true"},
                                        {"account_for_loss_in_pipeline_split", "true"}});
  interleaved.num_virtual_stages = 5;
  EXPECT_EQ(BuildJob(interleaved).parallel.layout, "E|t*1|t*1|t*1|t*1|t*1|t*1|t*1|t*1|,L");
  interleaved.num_virtual_stages = 3;
  EXPECT_THAT(ErrorOf(interleaved), HasSubstr("--num-virtual-stages-per-pipeline-rank"));
  // Without pipeline parallelism there is nothing to split.
  EXPECT_EQ(
      BuildJob(TinyRequest({{"account_for_embedding_in_pipeline_split", "true"}})).parallel.layout,
      "");
}

TEST(BuildJob, SequenceParallelOnTheCommandLineNeedsTensorParallel) {
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"tensor_model_parallel_size", "1"}, {"sequence_parallel", "true"}})),
      HasSubstr("requires tensor_model_parallel_size > 1"));
}

TEST(BuildJob, ExpertParallelChecks) {
  EXPECT_THAT(ErrorOf(TinyRequest({{"expert_model_parallel_size", "2"}})),
              HasSubstr("but the model has no experts"));
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  const Job job = BuildJob(moe);
  EXPECT_EQ(job.model.moe.num_experts, 8);
  EXPECT_EQ(job.model.moe.router_topk, 2);
  EXPECT_EQ(job.model.moe.shared_expert_ffn_hidden_size, 256);
  EXPECT_EQ(job.model.moe.moe_layers, (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(job.parallel.ep, 4);
  EXPECT_EQ(job.parallel.etp, 1);  // defaults to TP
  moe.overrides = {{"expert_model_parallel_size", "3"}};
  EXPECT_THAT(
      ErrorOf(moe),
      HasSubstr("expert_model_parallel_size=3 (--expert_model_parallel_size) does not divide "
                "num_experts=8"));
  moe.overrides = {{"moe_layer_freq", "[0,1]"}};
  EXPECT_THAT(ErrorOf(moe), HasSubstr("the pattern has 2 entries but num_layers is 4"));
  moe.overrides = {{"moe_layer_freq", "2"}};
  EXPECT_EQ(BuildJob(moe).model.moe.moe_layers, (std::vector<bool>{true, false, true, false}));
  moe.overrides = {};
  moe.target_ep = 8;  // --target-ep-size
  EXPECT_EQ(BuildJob(moe).parallel.ep, 8);
}

TEST(BuildJob, ExpertGemmLaunchAndGradientAccumulationFromTheConfig) {
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  // Primus's default (use_turbo_grouped_gemm: false): TE's GroupedLinear, one GEMM per expert.
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kStreamLoop);
  EXPECT_TRUE(BuildJob(moe).training.gradient_accumulation_fusion);
  moe.overrides = {{"use_turbo_grouped_gemm", "true"}};
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kGroupedKernel);
  // Sync-free stages 2 and 3 require Turbo's grouped GEMM; stage 1 does not.
  moe.overrides = {{"turbo_sync_free_moe_stage", "2"}};
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kGroupedKernel);
  EXPECT_EQ(BuildJob(moe).training.sync_free_moe_stage, 2);
  // Stage 2 turns DeepEP on whatever use_turbo_deepep says, and a false one is said to do
  // nothing.
  moe.overrides = {{"turbo_sync_free_moe_stage", "2"}, {"use_turbo_deepep", "false"}};
  const Job forced = BuildJob(moe);
  EXPECT_TRUE(forced.training.deepep);
  EXPECT_TRUE(std::any_of(forced.notes.begin(), forced.notes.end(), [](const std::string& n) {
    return n.find("use_turbo_deepep false (--use_turbo_deepep) has no effect") == 0;
  }));
  moe.overrides = {{"turbo_sync_free_moe_stage", "1"}};
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kStreamLoop);
  EXPECT_EQ(BuildJob(moe).training.sync_free_moe_stage, 1);
  moe.overrides = {{"moe_grouped_gemm", "false"}};
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kSequentialLoop);
  // Without moe_grouped_gemm Megatron builds SequentialMLP whatever the Turbo flag says.
  moe.overrides = {{"moe_grouped_gemm", "false"}, {"use_turbo_grouped_gemm", "true"}};
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kSequentialLoop);
  moe.overrides = {{"moe_use_legacy_grouped_gemm", "true"}};
  EXPECT_EQ(BuildJob(moe).training.expert_gemm_launch, ExpertGemmLaunch::kGroupedGemmPackage);
  moe.overrides = {{"gradient_accumulation_fusion", "false"}};
  EXPECT_FALSE(BuildJob(moe).training.gradient_accumulation_fusion);
}

TEST(BuildJob, LoraFromTheSftTrainerSection) {
  JobRequest lora;
  lora.config_path = kData + "experiments/MI355X/tiny-lora.yaml";
  lora.primus_path = kCheckout;
  lora.use_environment = false;
  const Job job = BuildJob(lora);
  const LoraSpec& l = job.training.lora;
  EXPECT_TRUE(l.enabled);
  EXPECT_EQ(l.rank, 8);
  EXPECT_DOUBLE_EQ(l.alpha, 32);  // the LoRA dataclass default
  EXPECT_DOUBLE_EQ(l.dropout, 0.1);
  EXPECT_TRUE(l.dropout_before);
  // A module path keeps its last component, and the report says so.
  EXPECT_EQ(l.target_modules, (std::vector<std::string>{"linear_qkv", "linear_fc2"}));
  EXPECT_TRUE(l.Targets("linear_fc2"));
  EXPECT_FALSE(l.Targets("linear_fc1"));
  EXPECT_THAT(job.notes, Contains(HasSubstr("applied to every layer")));
  // Without the section (pre-training) nothing is frozen.
  EXPECT_FALSE(BuildJob(TinyRequest()).training.lora.enabled);
}

// An SFT experiment whose `lora:` section is `lora_yaml` (indented under overrides), written
// to a scratch MI355X directory.
JobRequest LoraRequest(const std::string& name, const std::string& lora_yaml,
                       const std::string& extra = "      stage: sft\n") {
  const std::string dir = ::testing::TempDir() + "/lora_tests/MI355X";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << "modules:\n  post_trainer:\n    framework: megatron\n"
                         "    config: pre_trainer.yaml\n    model: tiny_llama.yaml\n"
                         "    overrides:\n      tensor_model_parallel_size: 2\n"
                      << extra << "      lora:\n"
                      << lora_yaml;
  JobRequest request;
  request.config_path = path;
  request.primus_path = kCheckout;
  request.use_environment = false;
  return request;
}

TEST(BuildJob, LoraSectionFollowsPrimusSemantics) {
  // Primus's pre-training trainer never reads the section.
  const Job pretrain = BuildJob(LoraRequest("pretrain", "        enabled: true\n", ""));
  EXPECT_FALSE(pretrain.training.lora.enabled);
  EXPECT_THAT(pretrain.notes, Contains(HasSubstr("read only by Primus's SFT trainer")));
  // No targets: every linear layer not excluded (ModuleMatcher's third branch).
  const Job all = BuildJob(LoraRequest("all",
                                       "        enabled: true\n        target_modules: []\n"
                                       "        exclude_modules: [linear_proj, output_layer]\n"));
  EXPECT_TRUE(all.training.lora.Targets("linear_qkv"));
  EXPECT_TRUE(all.training.lora.Targets("linear_fc2"));
  EXPECT_FALSE(all.training.lora.Targets("linear_proj"));
  EXPECT_FALSE(all.training.lora.Targets("output_layer"));
  EXPECT_FALSE(all.training.lora.Targets("router"));
  // A module the model does not have is said, and so is a LoRA that trains nothing.
  const Job none = BuildJob(LoraRequest(
      "none", "        enabled: true\n        target_modules: [linear_kv_up_proj, foo]\n"));
  EXPECT_THAT(none.warnings,
              Contains(HasSubstr("lora.target_modules: foo names no module of tiny_llama")));
  EXPECT_THAT(none.warnings, Contains(HasSubstr("LoRA adapts no module")));
  // Primus stops on settings its LoRA does not have, on targets given with exclusions, and on
  // a rank the tensor-parallel group cannot split.
  EXPECT_THAT(ErrorOf(LoraRequest("rank", "        enabled: true\n        rank: 8\n")),
              HasSubstr("'lora.rank': not a setting of Primus's LoRA"));
  // ...but only when LoRA is on: Primus builds its LoRA settings only then.
  EXPECT_FALSE(BuildJob(LoraRequest("off", "        enabled: false\n        rank: 8\n"))
                   .training.lora.enabled);
  EXPECT_THAT(ErrorOf(LoraRequest("both",
                                  "        enabled: true\n        target_modules: "
                                  "[linear_qkv]\n        exclude_modules: [linear_fc1]\n")),
              HasSubstr("'lora.exclude_modules': applies only when target_modules is empty"));
  EXPECT_THAT(ErrorOf(LoraRequest("odd", "        enabled: true\n        dim: 5\n")),
              AllOf(HasSubstr("tensor_model_parallel_size=2"), HasSubstr("does not divide"),
                    HasSubstr("lora.dim=5")));
}

TEST(BuildJob, KeysOutsideModulesAreNamedAndNotApplied) {
  JobRequest request;
  request.config_path = kData + "experiments/MI355X/tiny-root-keys.yaml";
  request.primus_path = kCheckout;
  request.use_environment = false;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.training.micro_batch_size, 1);  // trainer_base's, not the stray 4
  EXPECT_FALSE(job.training.lora.enabled);
  // Named with the file and the first scalar's line; `env:` is the runtime's and is not named.
  EXPECT_THAT(job.warnings,
              Contains(AllOf(HasSubstr("tiny-root-keys.yaml:11:"),
                             HasSubstr(": micro_batch_size, lora outside `modules:` not applied"),
                             HasSubstr("modules.pre_trainer.overrides"))));
  EXPECT_THAT(BuildJob(TinyRequest()).warnings, Not(Contains(HasSubstr("outside `modules:`"))));
}

TEST(BuildJob, MoePermutationFromTheConfigOrTheSyncFreeStage) {
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  // Not set anywhere: Primus's default (language_model.yaml) is Megatron's unfused path.
  EXPECT_EQ(BuildJob(moe).training.moe_permutation, MoePermutation::kIndexSelect);
  moe.overrides = {{"moe_permute_fusion", "true"}};
  EXPECT_EQ(BuildJob(moe).training.moe_permutation, MoePermutation::kFused);
  // Sync-free stage 1 turns the fused permutation on, over an explicit false; stage 2 also
  // Turbo's DeepEP.
  moe.overrides = {{"moe_permute_fusion", "false"}, {"turbo_sync_free_moe_stage", "1"}};
  EXPECT_EQ(BuildJob(moe).training.moe_permutation, MoePermutation::kFused);
  EXPECT_FALSE(BuildJob(moe).training.deepep);
  moe.overrides = {{"turbo_sync_free_moe_stage", "2"}};
  EXPECT_TRUE(BuildJob(moe).training.deepep);
  for (const char* bad : {"4", "-1"}) {
    moe.overrides = {{"turbo_sync_free_moe_stage", bad}};
    EXPECT_THAT(ErrorOf(moe), HasSubstr("turbo_sync_free_moe_stage")) << bad;
    EXPECT_THAT(ErrorOf(moe), HasSubstr("is not a stage: 0 to 3")) << bad;
  }
  moe.overrides = {{"turbo_sync_free_moe_stage", "1.5"}};
  EXPECT_THAT(ErrorOf(moe), HasSubstr("turbo_sync_free_moe_stage"));
}

TEST(BuildJob, MegatronsAllToAllOverlapIsTheCombinedOneFOneBSchedule) {
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  EXPECT_FALSE(BuildJob(moe).training.ep_a2a_combined_1f1b);
  moe.overrides = {{"overlap_moe_expert_parallel_comm", "true"}, {"delay_wgrad_compute", "true"}};
  const Job overlapped = BuildJob(moe);
  EXPECT_TRUE(overlapped.training.ep_overlap);
  EXPECT_TRUE(overlapped.training.ep_a2a_combined_1f1b);
  EXPECT_TRUE(overlapped.training.delay_wgrad_compute);
  // Turbo DeepEP alone keeps Primus's overlap fraction.
  moe.overrides = {{"use_turbo_deepep", "true"}};
  const Job deepep = BuildJob(moe);
  EXPECT_TRUE(deepep.training.ep_overlap);
  EXPECT_FALSE(deepep.training.ep_a2a_combined_1f1b);
}

// Megatron-Core's TransformerConfig.__post_init__ asserts each of these before training:
// delay_wgrad_compute needs overlap_moe_expert_parallel_comm and the non-legacy grouped GEMM;
// the overlap needs EP > 1, VPP when PP > 1, no full recompute, no moe_shared_expert_overlap,
// the alltoall or flex dispatcher and at most one MTP layer.
TEST(BuildJob, RefusesTheAllToAllOverlapWhereMegatronCoreDoes) {
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  using Overrides = std::vector<std::pair<std::string, std::string>>;
  auto error_with = [&](Overrides extra) {
    moe.overrides = {{"overlap_moe_expert_parallel_comm", "true"}};
    moe.overrides.insert(moe.overrides.end(), extra.begin(), extra.end());
    return ErrorOf(moe);
  };
  EXPECT_EQ(error_with({{"delay_wgrad_compute", "true"}}), "(no error)");

  moe.overrides = {{"delay_wgrad_compute", "true"}};
  EXPECT_THAT(ErrorOf(moe), AllOf(HasSubstr("delay_wgrad_compute"),
                                  HasSubstr("needs overlap_moe_expert_parallel_comm true")));
  EXPECT_THAT(
      error_with({{"delay_wgrad_compute", "true"}, {"moe_use_legacy_grouped_gemm", "true"}}),
      HasSubstr("not supported with moe_use_legacy_grouped_gemm true (--moe_use_legacy"));
  EXPECT_THAT(error_with({{"recompute_granularity", "full"},
                          {"recompute_method", "uniform"},
                          {"recompute_num_layers", "1"}}),
              HasSubstr("cannot run with recompute_granularity full (--recompute_granularity)"));
  EXPECT_THAT(error_with({{"moe_shared_expert_overlap", "true"}}),
              HasSubstr("add --moe_shared_expert_overlap false"));
  EXPECT_THAT(error_with({{"moe_token_dispatcher_type", "allgather"}}),
              HasSubstr("needs moe_token_dispatcher_type alltoall or flex, not allgather"));
  // DeepEP dispatches through the flex dispatcher.
  EXPECT_EQ(error_with({{"moe_token_dispatcher_type", "allgather"}, {"use_turbo_deepep", "true"}}),
            "(no error)");
  EXPECT_THAT(error_with({{"mtp_num_layers", "2"}}),
              HasSubstr("at most one MTP layer, not mtp_num_layers 2"));
  EXPECT_THAT(error_with({{"expert_model_parallel_size", "1"}}),
              HasSubstr("needs expert parallelism, but expert_model_parallel_size=1"));
  EXPECT_THAT(error_with({{"pipeline_model_parallel_size", "2"}}),
              HasSubstr("with pipeline_model_parallel_size=2 (--pipeline_model_parallel_size) "
                        "needs virtual pipeline stages"));
  EXPECT_EQ(error_with({{"pipeline_model_parallel_size", "2"},
                        {"num_virtual_stages_per_pipeline_rank", "2"}}),
            "(no error)");
}

// Megatron's default dispatcher (MoEAllGatherTokenDispatcher) is not the all-to-all the cost
// model prices: a note says so, with the top-k that sets its volume (EP / top-k times).
TEST(BuildJob, NamesTheAllGatherDispatcherItDoesNotPrice) {
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  auto notes_with = [&](std::vector<std::pair<std::string, std::string>> overrides) {
    moe.overrides = std::move(overrides);
    return ::testing::PrintToString(BuildJob(moe).notes);
  };
  EXPECT_THAT(notes_with({{"moe_token_dispatcher_type", "allgather"}}),
              HasSubstr("moe_token_dispatcher_type allgather (--moe_token_dispatcher_type) "
                        "projected as the alltoall dispatcher"));
  EXPECT_THAT(notes_with({{"moe_token_dispatcher_type", "allgather"}}), HasSubstr("(top-k 2)"));
  EXPECT_THAT(notes_with({{"moe_token_dispatcher_type", "alltoall"}}), Not(HasSubstr("allgather")));
  // DeepEP replaces the dispatcher.
  EXPECT_THAT(
      notes_with({{"moe_token_dispatcher_type", "allgather"}, {"use_turbo_deepep", "true"}}),
      Not(HasSubstr("allgather")));
}

TEST(BuildJob, TorchTitanAcceptsTheSyncFreeStageOfTheCommandLine) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  // What --sync-free-stage 1 passes.
  request.overrides = {{"use_turbo_deepep", "true"}, {"turbo_sync_free_moe_stage", "1"}};
  EXPECT_TRUE(BuildJob(request).training.deepep);
}

// Megatron refuses a recompute method or layer count with selective recompute (arguments.py,
// TransformerConfig.__post_init__); null clears them.
// Group-limited routing (moe_router_num_groups / moe_router_group_topk): read, and refused
// where Megatron's group_limited_topk cannot run it (tiny_moe: 8 experts, top-2).
TEST(BuildJob, GroupLimitedRoutingIsReadAndChecked) {
  JobRequest moe;
  moe.config_path = kData + "experiments/MI355X/tiny-moe.yaml";
  moe.primus_path = kCheckout;
  moe.use_environment = false;
  moe.overrides = {{"moe_router_num_groups", "4"}, {"moe_router_group_topk", "2"}};
  const Job job = BuildJob(moe);
  EXPECT_EQ(job.model.moe.router_groups, 4);
  EXPECT_EQ(job.model.moe.router_group_topk, 2);
  moe.overrides = {{"moe_router_num_groups", "3"}, {"moe_router_group_topk", "1"}};
  EXPECT_THAT(ErrorOf(moe), HasSubstr("3 does not divide the 8 experts into equal groups"));
  // More chosen groups than there are.
  moe.overrides = {{"moe_router_num_groups", "4"}, {"moe_router_group_topk", "5"}};
  EXPECT_THAT(ErrorOf(moe), HasSubstr("moe_router_group_topk"));
}

TEST(BuildJob, SelectiveRecomputeTakesNoMethodOrLayerCount) {
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"recompute_granularity", "selective"}, {"recompute_method", "block"}})),
      HasSubstr("'recompute_method': Megatron refuses it with selective recompute"));
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"recompute_granularity", "selective"}, {"recompute_num_layers", "2"}})),
      HasSubstr("add --recompute_num_layers null"));
  const Job job = BuildJob(TinyRequest({{"recompute_granularity", "selective"},
                                        {"recompute_method", "null"},
                                        {"recompute_num_layers", "null"}}));
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kSelective);
}

TEST(BuildJob, ContextParallelNeedsSequenceChunks) {
  EXPECT_THAT(
      ErrorOf(TinyRequest({{"context_parallel_size", "4"}, {"seq_length", "4100"}})),
      HasSubstr("seq_length=4100 (--seq_length) is not divisible by 2 x context_parallel_size=4"));
}

TEST(BuildJob, UnsupportedArchitectureIsNamed) {
  JobRequest request;
  request.config_path = kData + "experiments/MI355X/tiny-mamba.yaml";
  request.primus_path = kCheckout;
  request.use_environment = false;
  EXPECT_THAT(ErrorOf(request),
              AllOf(HasSubstr("unsupported architecture: Mamba state-space model"),
                    HasSubstr("tiny_mamba.yaml:3:")));
}

// A MaxText run config of tests/data/config/maxtext on MI355X nodes.
JobRequest MaxTextRequest(const std::string& file, int nodes) {
  JobRequest request;
  request.config_path = kData + "maxtext/" + file;
  request.use_environment = false;
  request.gpu_arch = "mi355x";
  request.target_nodes = nodes;
  return request;
}

// MaxText's own run config (no Primus `modules:`): the file is the MaxText module's
// configuration and model_name picks the model, as `python -m MaxText.train FILE` reads it.
TEST(BuildJob, ReadsAMaxTextRunConfig) {
  JobRequest request = MaxTextRequest("mixtral_8x7b-ep8.yml", 2);
  const Job job = BuildJob(request);
  EXPECT_EQ(job.framework, "maxtext");
  EXPECT_EQ(job.model.moe.num_experts, 8);
  EXPECT_EQ(job.parallel.ep, 8);   // ici_expert_parallelism
  EXPECT_EQ(job.parallel.dp, 16);  // 2 nodes x 8 GPUs: data and FSDP axes together
  EXPECT_TRUE(job.parallel.fsdp2);
  EXPECT_EQ(job.training.micro_batch_size, 4);  // per_device_batch_size
  EXPECT_EQ(job.training.seq_length, 4096);
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kFull);
  // base.yml's fp32 weights, computed in `dtype` bf16: activations are bf16, and the fp32
  // gradients are cast to grad_dtype (float32).
  EXPECT_EQ(job.training.precision.params, DType::kFP32);
  EXPECT_EQ(job.training.precision.ActivationDType(), DType::kBF16);
  EXPECT_EQ(job.training.precision.main_grads, DType::kFP32);
}

// --micro-batch-size on a MaxText config sets the batch per device: the global batch follows
// at every node count (per_device_batch_size 4 -> 2 on 2 and 4 nodes: 32 and 64 sequences),
// instead of keeping the file's 4 per device and refusing node counts it does not divide.
TEST(BuildJob, AMaxTextMicroBatchFromTheCommandLineSetsTheBatchPerDevice) {
  for (int nodes : {2, 4}) {
    JobRequest request = MaxTextRequest("mixtral_8x7b-ep8.yml", nodes);
    request.micro_batch_size = 2;
    const Job job = BuildJob(request);
    EXPECT_EQ(job.training.micro_batch_size, 2);
    EXPECT_EQ(job.training.global_batch_size, 2 * 8 * nodes) << nodes;
    EXPECT_EQ(job.training.NumMicroBatches(job.parallel.dp), 1) << nodes;
  }
}

// A model written in the MaxText config (model_name "default"): DeepSeek-style dense-first
// layers, shared experts and multi-head latent attention are read, not left as a GQA model.
TEST(BuildJob, ReadsAnInlineMaxTextModel) {
  JobRequest request = MaxTextRequest("deepseek_proxy_mla.yml", 1);
  const Job job = BuildJob(request);
  const ModelSpec& m = job.model;
  EXPECT_EQ(m.num_layers, 4);
  EXPECT_FALSE(m.IsMoeLayer(0));
  EXPECT_TRUE(m.IsMoeLayer(1));
  EXPECT_TRUE(m.IsMoeLayer(3));
  EXPECT_EQ(m.moe.shared_expert_ffn_hidden_size, 2 * 1408);
  EXPECT_EQ(m.attention, AttentionType::kMultiLatent);
  EXPECT_EQ(m.mla.q_lora_rank, 0);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_head_dim, 128);
  EXPECT_EQ(m.mla.qk_pos_emb_head_dim, 64);
  EXPECT_EQ(m.mla.v_head_dim, 128);
}

// A MaxText model_name the library lacks: the error says how MaxText itself takes a model it
// has no file for (its dimensions in the config), not Primus's remedy.
TEST(BuildJob, AnUnknownMaxTextModelSaysHowToWriteItsDimensions) {
  JobRequest request = MaxTextRequest("mixtral_8x7b-ep8.yml", 2);
  request.overrides = {{"model_name", "qwen3-480b-a35b"}};
  EXPECT_THAT(ErrorOf(request), AllOf(HasSubstr("model not in Sextant's model library"),
                                      HasSubstr("with model_name: default")));
}

// base_config names the file a MaxText config extends, relative to it (pyconfig); a cycle is
// an error naming the chain.
TEST(BuildJob, FollowsAMaxTextBaseConfigChain) {
  JobRequest request = MaxTextRequest("mixtral_8x7b-ep8-small-batch.yml", 2);
  const Job job = BuildJob(request);
  EXPECT_EQ(job.model.moe.num_experts, 8);      // model_name from the base
  EXPECT_EQ(job.parallel.ep, 8);                // ici_expert_parallelism from the base
  EXPECT_EQ(job.training.micro_batch_size, 1);  // per_device_batch_size from this file
  EXPECT_EQ(job.training.seq_length, 4096);     // max_target_length from the base
  request.config_path = kData + "maxtext/cycle_a.yml";
  EXPECT_THAT(ErrorOf(request), AllOf(HasSubstr("cycle"), HasSubstr("cycle_b.yml")));
}

// MaxText trains a multi-token-prediction module only with mtp_num_layers (base.yml: 0), even
// for DeepSeek-V3, which was released with one.
TEST(BuildJob, MaxTextTrainsMultiTokenPredictionOnlyWhenAsked) {
  JobRequest request = MaxTextRequest("mixtral_8x7b-ep8.yml", 8);
  request.overrides = {{"model_name", "deepseek3-671b"}};
  EXPECT_EQ(BuildJob(request).model.mtp_num_layers, 0);
  request.overrides.emplace_back("mtp_num_layers", "1");
  EXPECT_EQ(BuildJob(request).model.mtp_num_layers, 1);
}

// Host offload of MaxText's optimizer state is not modelled: the job says its memory is then
// an upper bound instead of passing over the key.
TEST(BuildJob, MaxTextHostOffloadIsNamedAsNotModelled) {
  JobRequest request = MaxTextRequest("mixtral_8x7b-ep8.yml", 2);
  auto offload_notes = [](const Job& job) {
    int n = 0;
    for (const std::string& note : job.notes) n += note.find("host offload") != std::string::npos;
    return n;
  };
  EXPECT_EQ(offload_notes(BuildJob(request)), 0);
  request.overrides = {{"optimizer_memory_host_offload", "true"}};
  EXPECT_EQ(offload_notes(BuildJob(request)), 1);
}

TEST(BuildJob, FileStructureErrors) {
  JobRequest request = TinyRequest();
  request.config_path = kData + "experiments/no-modules.yaml";
  EXPECT_THAT(ErrorOf(request), AllOf(HasSubstr("not a Primus experiment file"),
                                      HasSubstr("or, for a MaxText config, model_name")));
  // A hardware file given as the experiment: the flag it belongs to.
  request.config_path = kData + "experiments/hardware-as-experiment.yaml";
  EXPECT_THAT(ErrorOf(request), HasSubstr("but a hardware config (a top-level hardware_config:): "
                                          "give it with --hardware-config"));
  request.config_path = kData + "experiments/unknown-framework.yaml";
  EXPECT_THAT(ErrorOf(request), HasSubstr("unsupported framework \"paddle\" (supported: megatron, "
                                          "megatron_bridge, torchtitan, maxtext)"));
  request.config_path = kData + "experiments/missing.yaml";
  EXPECT_THAT(ErrorOf(request), HasSubstr("cannot open"));
  request = TinyRequest();
  request.primus_path = kData;
  EXPECT_THAT(ErrorOf(request), HasSubstr("not a Primus checkout"));
}

TEST(BuildJob, GpuSelection) {
  JobRequest request = TinyRequest();
  request.gpu_arch = "H100";
  EXPECT_EQ(BuildJob(request).cluster.gpu.name, "H100");
  request.gpu_arch = "MI999X";
  EXPECT_THAT(ErrorOf(request), HasSubstr("unknown GPU \"MI999X\""));
  {
    ScopedEnvironment env(Vars{{"PRIMUS_GPU_ARCH", "MI325X"}, {"PRIMUS_GPU_CLOCK_MHZ", "1000"}});
    request = TinyRequest();
    request.use_environment = true;
    const Job job = BuildJob(request);
    EXPECT_EQ(job.cluster.gpu.name, "MI325X");
    EXPECT_DOUBLE_EQ(job.cluster.gpu.max_clock_mhz, 1000);
  }
}

// The bundled default example: Llama 3.1 8B, BF16, MI300X, one node of 8 GPUs.
TEST(BuildJob, DefaultExampleFromTheModelLibrary) {
  ScopedEnvironment env;
  JobRequest request;
  request.use_environment = false;
  const Job job = BuildJob(request);
  EXPECT_THAT(job.name, HasSubstr("default example"));
  EXPECT_EQ(job.model.num_layers, 32);
  EXPECT_EQ(job.model.hidden_size, 4096);
  EXPECT_EQ(job.model.ffn_hidden_size, 14336);
  EXPECT_EQ(job.model.num_attention_heads, 32);
  EXPECT_EQ(job.model.num_query_groups, 8);
  EXPECT_EQ(job.model.vocab_size, 128256);
  EXPECT_EQ(job.cluster.gpu.name, "MI300X");
  EXPECT_EQ(job.cluster.num_nodes, 1);
  EXPECT_EQ(job.parallel.tp, 1);
  EXPECT_EQ(job.parallel.dp, 8);
  EXPECT_EQ(job.training.seq_length, 8192);
  EXPECT_EQ(job.training.micro_batch_size, 2);
  EXPECT_EQ(job.training.global_batch_size, 128);
  EXPECT_EQ(job.training.precision.params, DType::kBF16);
  EXPECT_EQ(job.training.precision.gemm, DType::kBF16);
  EXPECT_TRUE(job.parallel.distributed_optimizer);
  EXPECT_THAT(job.notes, Contains(HasSubstr("GPU MI300X, as the bundled default example states")));
  EXPECT_THAT(job.notes, Contains(HasSubstr("from Sextant's model library")));
  EXPECT_TRUE(DefaultExamplePath().ends_with("examples/llama3.1_8B-BF16-pretrain.yaml"));
}

// Megatron's precision keys: fp8 with its recipe, and fp4 (Primus's MXFP4 examples set
// fp4: e2m1 with fp4_recipe: mxfp4), which a false value leaves off.
TEST(BuildJob, Fp8AndFp4PrecisionKeys) {
  ScopedEnvironment env;
  JobRequest request;
  request.use_environment = false;
  request.overrides = {{"fp8", "hybrid"}, {"fp8_recipe", "mxfp8"}};
  EXPECT_EQ(BuildJob(request).training.precision.gemm, DType::kMXFP8);
  request.overrides = {{"fp4", "e2m1"}, {"fp4_recipe", "mxfp4"}};
  const Job fp4 = BuildJob(request);
  EXPECT_EQ(fp4.training.precision.gemm, DType::kFP4);
  EXPECT_EQ(fp4.training.precision.params, DType::kBF16) << "weights stay bf16";
  request.overrides = {{"fp4", "false"}};
  EXPECT_EQ(BuildJob(request).training.precision.gemm, DType::kBF16);
}

// Megatron-Core's --fp8-recipe choices: delayed (its default) takes scales from an amax
// history, tensorwise and blockwise from the tensor being cast; anything else is refused, as
// argparse refuses it, instead of being projected as delayed scaling.
TEST(BuildJob, Fp8RecipesAreReadOrRefused) {
  ScopedEnvironment env;
  JobRequest request;
  request.use_environment = false;
  request.overrides = {{"fp8", "hybrid"}};
  const PrecisionRecipe delayed = BuildJob(request).training.precision;
  EXPECT_EQ(delayed.gemm, DType::kFP8);
  EXPECT_FALSE(delayed.fp8_current_scaling);
  EXPECT_EQ(delayed.GemmDescription(), "fp8 (delayed scaling)");
  request.overrides = {{"fp8", "hybrid"}, {"fp8_recipe", "blockwise"}};
  const PrecisionRecipe blockwise = BuildJob(request).training.precision;
  EXPECT_TRUE(blockwise.fp8_current_scaling);
  EXPECT_TRUE(blockwise.fp8_blockwise);
  EXPECT_EQ(blockwise.GemmDescription(), "fp8 (blockwise scaling)");
  request.overrides = {{"fp8", "hybrid"}, {"fp8_recipe", "tensorwise"}};
  EXPECT_EQ(BuildJob(request).training.precision.GemmDescription(), "fp8 (current scaling)");
  for (const char* bad : {"Blockwise", "custom", "bogus"}) {
    request.overrides = {{"fp8", "hybrid"}, {"fp8_recipe", bad}};
    EXPECT_THROW(BuildJob(request), UserError) << bad;
  }
  // Megatron's FP8 formats are e4m3 and hybrid: a typo is refused, not projected as FP8.
  request.overrides = {{"fp8", "e4m3"}};
  EXPECT_EQ(BuildJob(request).training.precision.gemm, DType::kFP8);
  request.overrides = {{"fp8", "false"}};
  EXPECT_EQ(BuildJob(request).training.precision.gemm, DType::kBF16);
  for (const char* bad : {"hybird", "true", "E4M3"}) {
    request.overrides = {{"fp8", bad}};
    EXPECT_THROW(BuildJob(request), UserError) << bad;
  }
  // Primus's no_fp8_weight_transpose_cache turns TE's transpose cache off.
  request.overrides = {{"fp8", "hybrid"}};
  EXPECT_TRUE(BuildJob(request).training.precision.fp8_weight_transpose_cache);
  request.overrides = {{"fp8", "hybrid"}, {"no_fp8_weight_transpose_cache", "true"}};
  EXPECT_FALSE(BuildJob(request).training.precision.fp8_weight_transpose_cache);
}

// Changing a library model's shape makes another model: it is not reported as the library's.
TEST(BuildJob, ALibraryModelWithItsShapeOverriddenIsRenamed) {
  ScopedEnvironment env;
  JobRequest request;
  request.use_environment = false;
  request.overrides = {{"num_layers", "12"}, {"hidden_size", "768"}};
  const Job job = BuildJob(request);
  EXPECT_EQ(job.model.name, "llama3.1_8B-modified");
  EXPECT_THAT(job.notes, Contains(HasSubstr("llama3.1_8B with num_layers 32 -> 12, hidden_size "
                                            "4096 -> 768")));
  request.overrides = {{"seq_length", "4096"}};  // not the model's shape
  EXPECT_EQ(BuildJob(request).model.name, "llama3.1_8B");
  request.overrides = {{"ffn_hidden_size", "10944"}};  // a dense model's MLP: its shape
  EXPECT_EQ(BuildJob(request).model.name, "llama3.1_8B-modified");
}

TEST(BuildJob, DefaultExampleWithAPrimusCheckoutReadsItsModelFile) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  JobRequest request;
  request.primus_path = kCorpusPrimus;
  request.use_environment = false;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.model.name, "llama3.1_8B");
  EXPECT_EQ(job.model.num_layers, 32);
  EXPECT_EQ(job.model.ffn_hidden_size, 14336);
  EXPECT_EQ(job.model.num_query_groups, 8);
  EXPECT_EQ(job.model.max_position_embeddings, 8192);  // the experiment's override wins
  EXPECT_EQ(job.model.vocab_size, 128256);
}

// torchtitan's pipeline_parallel.py: single-stage schedules run one stage per rank, multi-stage
// ones two by default, or ceil((layers + 1 + 1) / layers_per_stage) / PP with the option.
TEST(BuildJob, TorchTitanStagesPerRankFollowTheSchedule) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";  // 32 layers, 8 GPUs, TP 2
  request.use_environment = false;
  auto with = [&](const std::string& schedule, const std::string& per_stage) {
    JobRequest r = request;
    r.overrides = {{"parallelism.pipeline_parallel_degree", "2"},
                   {"parallelism.pipeline_parallel_schedule", schedule}};
    if (!per_stage.empty())
      r.overrides.push_back({"parallelism.pipeline_parallel_layers_per_stage", per_stage});
    return r;
  };
  auto build = [&](const std::string& schedule, const std::string& per_stage) {
    return BuildJob(with(schedule, per_stage));
  };
  EXPECT_EQ(build("1F1B", "").parallel.vpp, 1);
  const Job interleaved = build("Interleaved1F1B", "");
  EXPECT_EQ(interleaved.parallel.vpp, 2);
  EXPECT_EQ(interleaved.training.pipeline_schedule, ScheduleKind::kInterleaved1F1B);
  const Job dualpipe = build("DualPipeV", "");
  EXPECT_EQ(dualpipe.parallel.vpp, 2);
  EXPECT_EQ(dualpipe.training.pipeline_schedule, ScheduleKind::kDualPipeV);
  // (32 + 2) / 9 rounds up to 4 stages: 2 per rank.
  EXPECT_EQ(build("Interleaved1F1B", "9").parallel.vpp, 2);
  // (32 + 2) / 5 rounds up to 7 stages, which 2 ranks do not share.
  EXPECT_THAT(ErrorOf(with("Interleaved1F1B", "5")), HasSubstr("make 7 stages"));
  // 34 / 17 = 2 stages: one per rank, too few for a multi-stage schedule.
  EXPECT_THAT(ErrorOf(with("Interleaved1F1B", "17")), HasSubstr("at least two"));
  EXPECT_THAT(ErrorOf(with("Bogus", "")), HasSubstr("unknown schedule \"Bogus\""));
  // InterleavedZeroBubble loops its stages over the ranks (torchtitan's "v" placement is for
  // ZBVZeroBubble and DualPipeV only): simulated as interleaved 1F1B, with a note; three
  // stages per rank work as they do for Interleaved1F1B.
  const Job zb = build("InterleavedZeroBubble", "");
  EXPECT_EQ(zb.training.pipeline_schedule, ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(zb.parallel.vpp, 2);
  EXPECT_EQ(build("InterleavedZeroBubble", "6").parallel.vpp, 3);  // (32 + 2) / 6 -> 6 stages
  EXPECT_TRUE(std::any_of(zb.notes.begin(), zb.notes.end(), [](const std::string& n) {
    return n.rfind("InterleavedZeroBubble simulated as", 0) == 0;
  }));
}

TEST(BuildJob, TorchTitanConvertersSetTheGemmPrecisionOrAreNamed) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  auto with = [&](const char* converters) {
    request.overrides = {{"model.converters", converters}};
    return BuildJob(request);
  };
  EXPECT_EQ(with("quantize.linear.mx").training.precision.gemm, DType::kMXFP8);
  EXPECT_EQ(with("[mx]").training.precision.gemm, DType::kMXFP8);  // a list typed on a shell
  const Job turbo = with("primus_turbo,quantize.linear.float8");
  EXPECT_EQ(turbo.training.precision.gemm, DType::kFP8);
  // A name no converter has is said, not silently bf16.
  const Job unknown = with("bogus");
  EXPECT_EQ(unknown.training.precision.gemm, DType::kBF16);
  EXPECT_THAT(unknown.notes,
              Contains(HasSubstr("\"bogus\" (--model.converters) is not a converter")));
  // Two low-precision converters: the numbers and the note both follow the last.
  const Job both = with("float8,mx");
  EXPECT_EQ(both.training.precision.gemm, DType::kMXFP8);
  EXPECT_FALSE(both.training.precision.fp8_current_scaling);
  EXPECT_THAT(both.notes, Contains(HasSubstr("projected with the last, mx")));
}

TEST(BuildJob, TorchTitanPipelineGradientAccumulationIsSaid) {
  // local 2 x DP 2 = 4 sequences per schedule; global 16 = 4 accumulation steps, each its own
  // pipeline schedule of 2 micro-batches.
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"parallelism.pipeline_parallel_degree", "2"},
                       {"parallelism.tensor_parallel_degree", "2"},
                       {"training.local_batch_size", "2"},
                       {"training.global_batch_size", "16"}};
  const Job job = BuildJob(request);
  ASSERT_EQ(job.parallel.dp, 2);
  EXPECT_THAT(job.notes, Contains(HasSubstr("torchtitan runs 4 gradient-accumulation steps per "
                                            "iteration, each a pipeline schedule of 2 "
                                            "micro-batches")));
  request.overrides.back() = {"training.global_batch_size", "4"};
  EXPECT_THAT(BuildJob(request).notes, Not(Contains(HasSubstr("gradient-accumulation steps"))));
}

// per_op_sac_force_recompute_mm_shapes_by_fqns (torchtitan/distributed/activation_checkpoint.py):
// Primus's Llama 3.1 405B FP8 example lists every linear of the block, which leaves op-level AC
// recomputing nearly everything; a partial list is said not to be modelled.
TEST(BuildJob, TorchTitanForcedMatmulRecomputeListingEveryLinearIsFullRecompute) {
  std::ifstream in(kData + "torchtitan_job.toml");
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string dir = ::testing::TempDir() + "/titan_sac";
  std::filesystem::create_directories(dir);
  auto request_with = [&](const std::string& name, const std::string& fqns) {
    const std::string path = dir + "/" + name + ".toml";
    std::ofstream(path) << base << "selective_ac_option = \"op\"\n"
                        << "per_op_sac_force_recompute_mm_shapes_by_fqns = [" << fqns << "]\n";
    JobRequest request;
    request.config_path = path;
    request.use_environment = false;
    return request;
  };
  const Job every = BuildJob(
      request_with("every",
                   "\"attention.wq\", \"attention.wk\", \"attention.wv\", \"attention.wo\", "
                   "\"feed_forward.w1\", \"feed_forward.w2\", \"feed_forward.w3\", \"output\""));
  EXPECT_EQ(every.training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_THAT(every.notes, Contains(HasSubstr("projected as full recompute")));
  const Job some = BuildJob(request_with("some", "\"feed_forward.w2\""));
  EXPECT_EQ(some.training.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_THAT(some.notes, Contains(HasSubstr("their forced recompute is not modelled")));
  const Job none = BuildJob(request_with("none", ""));
  EXPECT_EQ(none.training.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_THAT(none.notes, Not(Contains(HasSubstr("per_op_sac_force_recompute"))));
}

// torchtitan builds the model from model.flavor alone (train.py model_args[flavor]): the
// flavor wins over the checkpoint named by hf_assets_path, and an unknown one is refused.
TEST(BuildJob, TorchTitanFlavorDecidesTheModel) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"model.hf_assets_path", "./assets/hf/Llama-3.1-8B"},
                       {"model.flavor", "70B"}};
  EXPECT_EQ(BuildJob(request).model.num_layers, 80);
  request.overrides = {{"model.flavor", "405B"}};  // released as Llama 3.1 only
  EXPECT_EQ(BuildJob(request).model.num_layers, 126);
  request.overrides = {{"model.hf_assets_path", "./assets/hf/Llama-3.1-8B"},
                       {"model.flavor", "9B"}};
  EXPECT_THAT([&] { BuildJob(request); },
              ThrowsMessage<UserError>(HasSubstr("llama3 flavor \"9B\" is not in")));
}

// Op-level selective checkpointing is torchtitan's per-op policy, not Megatron's core-attention
// recompute (which with flash attention saves nothing).
TEST(BuildJob, TorchTitanOpLevelCheckpointingIsThePerOpPolicy) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"activation_checkpoint.selective_ac_option", "op"}};
  const Job job = BuildJob(request);
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_TRUE(job.training.recompute.per_op_policy);
  EXPECT_TRUE(job.training.recompute.modules.empty());
}

// HSDP: data_parallel_shard_degree GPUs hold one shard group, replicated
// data_parallel_replicate_degree times; a replicate degree that does not divide DP is refused.
TEST(BuildJob, TorchTitanHsdpShardsOverTheShardGroupOnly) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"parallelism.data_parallel_replicate_degree", "2"},
                       {"parallelism.data_parallel_shard_degree", "2"}};
  const Job hsdp = BuildJob(request);
  EXPECT_EQ(hsdp.parallel.dp, 4);
  EXPECT_EQ(hsdp.parallel.fsdp_replicas, 2);
  EXPECT_EQ(hsdp.parallel.FsdpShardGroup(), 2);
  request.overrides = {{"parallelism.data_parallel_replicate_degree", "2"}};  // shard -1 fills
  EXPECT_EQ(BuildJob(request).parallel.FsdpShardGroup(), 2);
  request.overrides = {{"parallelism.data_parallel_replicate_degree", "3"}};
  EXPECT_THAT([&] { BuildJob(request); },
              ThrowsMessage<UserError>(HasSubstr("does not divide the 4 data-parallel GPUs")));
}

// torchtitan splits layers + 1 + 1 over the stages, the first stages taking the remainder
// (pipeline_parallel.py generate_llm_fqn_per_model_part): 34 over 4 is 9, 9, 8, 8, so 32
// layers run 8, 9, 8, 7 although they would divide evenly; the V schedules' 2 x PP stages
// likewise. ETP is 1 or TP (ParallelDims).
TEST(BuildJob, TorchTitanPipelineSplitAndExpertTensorParallelism) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";  // 32 layers, 8 GPUs, TP 2
  request.use_environment = false;
  request.overrides = {{"parallelism.pipeline_parallel_degree", "4"},
                       {"parallelism.tensor_parallel_degree", "1"},
                       {"parallelism.pipeline_parallel_microbatch_size", "1"}};
  EXPECT_EQ(BuildJob(request).parallel.layout, "Et*8|t*9|t*8|t*7,L");
  request.overrides.push_back({"parallelism.pipeline_parallel_first_stage_less_layers", "0"});
  request.overrides.push_back({"parallelism.pipeline_parallel_last_stage_less_layers", "0"});
  EXPECT_EQ(BuildJob(request).parallel.layout, "");     // 32 / 4: the even split
  EXPECT_EQ(TorchTitanPipelineLayout(2, 2, 3, 0), "");  // torchtitan refuses: weight 3 > share 2
  // ZBVZeroBubble splits the same way over 2 x 4 stages (34 = 5 + 5 + 4 x 6), placed as a V.
  request.overrides = {{"parallelism.pipeline_parallel_degree", "4"},
                       {"parallelism.tensor_parallel_degree", "1"},
                       {"parallelism.pipeline_parallel_microbatch_size", "1"},
                       {"parallelism.pipeline_parallel_schedule", "ZBVZeroBubble"}};
  const Job v = BuildJob(request);
  EXPECT_EQ(v.parallel.layout, "Et*4|t*5|t*4|t*4|t*4|t*4|t*4|t*3,L");
  EXPECT_EQ(v.parallel.vpp, 2);
  request.overrides = {{"parallelism.expert_tensor_parallel_degree", "4"}};
  EXPECT_THAT(ErrorOf(request), HasSubstr("must be 1 or the tensor_parallel_degree (2), found 4"));
}

// torchtitan's own JobConfig fields are accepted; those the projection does not model say so
// when set away from their neutral value, and the memory_budget mode is refused by name.
TEST(BuildJob, TorchTitanFieldsItDoesNotModelAreNamed) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"parallelism.enable_async_tensor_parallel", "true"},
                       {"training.max_norm", "1.0"},
                       {"parallelism.fsdp_reshard_after_forward", "default"}};
  const Job job = BuildJob(request);
  EXPECT_THAT(job.notes, Contains(HasSubstr("parallelism.enable_async_tensor_parallel = true")));
  EXPECT_THAT(job.notes, Not(Contains(HasSubstr("fsdp_reshard_after_forward"))));
  request.overrides = {{"activation_checkpoint.mode", "memory_budget"}};
  EXPECT_THAT(ErrorOf(request), HasSubstr("memory_budget (torch.compile's"));
}

// A misspelt field of a section whose every field is known is said, with where and the
// nearest field: the job is projected with the default (TP 1), which torchtitan would refuse.
TEST(BuildJob, TorchTitanUnknownFieldIsWarned) {
  JobRequest request;
  request.config_path = kData + "torchtitan_typo.toml";
  request.use_environment = false;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.parallel.tp, 1);
  ASSERT_EQ(job.warnings.size(), 1u);
  EXPECT_THAT(job.warnings[0], HasSubstr("torchtitan_typo.toml:12:"));
  EXPECT_THAT(job.warnings[0],
              HasSubstr("parallelism.tensor_paralel_degree: not a field of torchtitan's "
                        "[parallelism]"));
  EXPECT_THAT(job.warnings[0], HasSubstr("did you mean parallelism.tensor_parallel_degree"));
}

// A Primus experiment's override one typo from a module key is warned about with its line and
// the key meant (Primus and Megatron take it silently); a short key two edits from another
// ("stage" / "save") is left alone.
TEST(BuildJob, MistypedOverrideInAnExperimentIsWarned) {
  JobRequest request;
  request.config_path = kData + "experiments/MI355X/tiny-typo.yaml";
  request.primus_path = kCheckout;
  request.use_environment = false;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.parallel.pp, 1);
  ASSERT_EQ(job.warnings.size(), 1u) << fmt::format("{}", fmt::join(job.warnings, "\n"));
  EXPECT_THAT(job.warnings[0], HasSubstr("tiny-typo.yaml:9:7: pipeline_model_paralel_size is in "
                                         "no module default or model file"));
  EXPECT_THAT(job.warnings[0], HasSubstr("did you mean pipeline_model_parallel_size"));
}

// A temporary copy of a test config with `edit` applied to its text.
std::string EditedCopy(const std::string& source, const std::string& name,
                       const std::function<std::string(std::string)>& edit) {
  std::ifstream in(source);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string dir = ::testing::TempDir() + "/edited_configs/MI355X";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << edit(text);
  return path;
}

std::string Inserted(std::string text, std::string_view after, const std::string& insert) {
  const size_t at = text.find(after);
  if (at == std::string::npos) return text;
  return text.insert(at + after.size(), insert);
}

// 30,000 fields torchtitan does not define: 20 are named, the rest counted in one line.
TEST(BuildJob, TorchTitanUnknownFieldsPastTwentyAreCounted) {
  std::string many;
  for (int i = 0; i < 30'000; ++i) many += fmt::format("bogus_setting_{} = 1\n", i);
  JobRequest request;
  request.config_path =
      EditedCopy(kData + "torchtitan_job.toml", "many_unknown.toml",
                 [&](std::string t) { return Inserted(t, "[parallelism]\n", many); });
  request.use_environment = false;
  const Job job = BuildJob(request);
  ASSERT_EQ(job.warnings.size(), 21u);
  EXPECT_THAT(job.warnings[0], HasSubstr("many_unknown.toml:16:"));
  EXPECT_THAT(job.warnings[0], HasSubstr("parallelism.bogus_setting_0: not a field"));
  EXPECT_THAT(job.warnings[20],
              HasSubstr("... and 29980 more fields torchtitan's JobConfig does not define"));
}

// An absent model.name in TorchTitan's TOML names the file: an empty file, or [[model]] (an
// array of tables, not a table).
TEST(BuildJob, TorchTitanMissingModelNameNamesTheFile) {
  JobRequest request;
  request.use_environment = false;
  request.config_path =
      EditedCopy(kData + "torchtitan_job.toml", "empty.toml", [](std::string) { return ""; });
  EXPECT_THAT([&] { BuildJob(request); },
              ThrowsMessage<UserError>(HasSubstr("empty.toml:1:1: 'model.name': missing")));
  request.config_path = EditedCopy(kData + "torchtitan_job.toml", "model_array.toml",
                                   [](std::string) { return "[[model]]\n"; });
  EXPECT_THAT([&] { BuildJob(request); },
              ThrowsMessage<UserError>(HasSubstr("model_array.toml:1:1: 'model.name': missing")));
}

// A 1 MB flavor: quoted cut to 80 characters, and no similar-name search over it.
TEST(BuildJob, TorchTitanLongFlavorIsCutInTheMessage) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  request.overrides = {{"model.flavor", std::string(1'000'000, 'B')}};
  const std::string error = ErrorOf(request);
  EXPECT_THAT(error, HasSubstr("llama3 flavor \"BBB"));
  EXPECT_THAT(error, HasSubstr("B... (1000000 bytes)\" is not in Sextant's model library"));
  EXPECT_LT(error.size(), 400u);
}

// 25 overrides one edit from pipeline_model_parallel_size: 20 are warned, the rest counted; a
// 2 MB key is compared with nothing (no key is near it) and warns of nothing.
TEST(BuildJob, MistypedOverridesPastTwentyAreCounted) {
  std::string keys;
  const std::string known = "pipeline_model_parallel_size";
  for (size_t i = 0; i < 25; ++i) {
    std::string typo = known;
    typo[i] = 'Q';  // one substitution (or, over an underscore, one insertion once folded)
    keys += "      " + typo + ": 2\n";
  }
  keys += "      ? " + std::string(2'000'000, 'k') + "\n      : 1\n";
  JobRequest request;
  request.config_path =
      EditedCopy(kData + "experiments/MI355X/tiny-typo.yaml", "many-typos.yaml",
                 [&](std::string t) { return Inserted(t, "    overrides:\n", keys); });
  request.primus_path = kCheckout;
  request.use_environment = false;
  const Job job = BuildJob(request);
  ASSERT_EQ(job.warnings.size(), 21u) << fmt::format("{}", fmt::join(job.warnings, "\n"));
  EXPECT_THAT(job.warnings[0], HasSubstr("many-typos.yaml:8:7: Qipeline_model_parallel_size is"));
  EXPECT_THAT(job.warnings[19], HasSubstr("did you mean pipeline_model_parallel_size"));
  // The 21st line counts the last 5 of the 25 and the file's own typo
  // (pipeline_model_paralel_size).
  EXPECT_THAT(job.warnings[20], HasSubstr("... and 6 more overrides a typo away"));
}

// A model file name too long for the file system is the user's error, naming the key.
TEST(BuildJob, AModelFileNameTooLongToLookUpNamesTheKey) {
  JobRequest request = TinyRequest();
  request.config_path = EditedCopy(kTiny, "long-model.yaml", [](std::string t) {
    const size_t at = t.find("model: ");
    const size_t end = t.find('\n', at);
    return t.replace(at, end - at, "model: " + std::string(100'000, 'a') + ".yaml");
  });
  const std::string error = ErrorOf(request);
  EXPECT_THAT(error, HasSubstr("long-model.yaml:"));
  EXPECT_THAT(error, HasSubstr("'modules.pre_trainer.model': cannot look up \"aaa"));
  EXPECT_THAT(error, HasSubstr("a... (100005 bytes)\": File name too long"));
  EXPECT_LT(error.size(), 400u);
}

TEST(BuildJob, TorchTitanToml) {
  JobRequest request;
  request.config_path = kData + "torchtitan_job.toml";
  request.use_environment = false;
  const Job job = BuildJob(request);
  EXPECT_EQ(job.framework, "torchtitan");
  EXPECT_EQ(job.model.num_layers, 32);  // llama3 flavor 8B
  EXPECT_EQ(job.parallel.tp, 2);
  // torchtitan's embedding has vocab_size rows: no Megatron-style padding to 128 x TP.
  // (Megatron would pad 128256 to 129024 at TP 8.)
  EXPECT_EQ(job.model.PaddedVocabSize(8), job.model.vocab_size);
  EXPECT_EQ(job.parallel.dp, 4);  // data_parallel_shard_degree -1 fills 8 / 2
  EXPECT_TRUE(job.parallel.fsdp2);
  EXPECT_TRUE(job.parallel.sequence_parallel);
  EXPECT_EQ(job.training.micro_batch_size, 2);
  EXPECT_EQ(job.training.global_batch_size, 64);
  EXPECT_EQ(job.training.seq_length, 8192);
  EXPECT_EQ(job.training.precision.gemm, DType::kFP8);      // converters = ["float8"]
  EXPECT_TRUE(job.training.precision.fp8_current_scaling);  // torchao's dynamic scaling
  // selective_ac_option defaults to "2": every second block fully recomputed.
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(job.training.recompute.layer_ids.size(), 16u);
  EXPECT_EQ(job.training.recompute.layer_ids[1], 2);
  request.overrides = {{"parallelism.tensor_parallel_degree", "4"}};
  EXPECT_EQ(BuildJob(request).parallel.dp, 2);
  EXPECT_FALSE(job.training.deepep);
  request.overrides = {{"use_turbo_deepep", "true"}};  // what --enable-deepep passes
  EXPECT_TRUE(BuildJob(request).training.deepep);
  // No [compile] section: torchtitan runs eager, element-wise ops unfused.
  EXPECT_FALSE(job.training.fused_elementwise);
  auto has_note = [](const Job& j, const std::string& prefix) {
    return std::any_of(j.notes.begin(), j.notes.end(),
                       [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has_note(job, "eager (no torch.compile)"));
  request.overrides = {{"compile.enable", "true"}};
  EXPECT_TRUE(BuildJob(request).training.fused_elementwise);
  EXPECT_TRUE(has_note(BuildJob(request), "torch.compile on (compile.enable)"));
  request.overrides = {{"training.compile", "true"}};  // the 2024 spelling
  EXPECT_TRUE(BuildJob(request).training.fused_elementwise);
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// The merged configuration (what --export_config writes) read back as an experiment builds the
// same job: every setting came through, from the module defaults to the command line.
TEST(BuildJob, MergedConfigurationReadsBackToTheSameJob) {
  JobRequest first = TinyRequest();
  first.overrides = {{"micro_batch_size", "1"}, {"tensor_model_parallel_size", "2"}};
  const Job job = BuildJob(first);
  ASSERT_NE(job.configuration, nullptr);
  const std::string dir = ::testing::TempDir() + "/export_round_trip/MI355X";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/merged.yaml";
  std::ofstream(path) << ToYaml(*job.configuration);
  JobRequest again;
  again.config_path = path;
  again.primus_path = first.primus_path;
  again.use_environment = false;
  const Job reread = BuildJob(again);
  EXPECT_EQ(reread.model.name, job.model.name);
  EXPECT_EQ(reread.model.num_layers, job.model.num_layers);
  EXPECT_EQ(reread.parallel.tp, 2);
  EXPECT_EQ(reread.parallel.dp, job.parallel.dp);
  EXPECT_EQ(reread.training.micro_batch_size, 1);
  EXPECT_EQ(reread.training.global_batch_size, job.training.global_batch_size);
  EXPECT_EQ(reread.training.seq_length, job.training.seq_length);
  EXPECT_EQ(reread.cluster.gpu.name, job.cluster.gpu.name);
}

}  // namespace
}  // namespace sextant
