// Primus's MI355X Megatron examples whose measured runs are in the published-runs table
// (corpus/validation/published_runs.csv), projected the way a Primus user would ask:
// `sextant projection performance --config EXAMPLE --target-nodes N` followed by the flags the
// run's launch script passes to primus-cli. Each projection must land within 10% of what was
// measured. The measured value comes from the table, transcribed from AMD's publications; the
// flags come from the scripts named next to each case (AMD-AGI/Primus @fd1eeab).
//
// This is the config path of `projection performance`, not the table-row path of `validate`:
// the example files carry facts the table's columns do not (legacy grouped GEMM, DeepEP, the
// sync-free stage, recompute layer ids, fusions), so the two can disagree.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "job/job_builder.h"
#include "projection/performance_model.h"
#include "util/corpus_path.h"
#include "util/csv_reader.h"

namespace sextant {
namespace {

using Flags = std::vector<std::pair<std::string, std::string>>;

Flags operator+(Flags a, const Flags& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct MeasuredExample {
  std::string row_id;  // the measured run in published_runs.csv
  std::string config;  // under the Primus checkout's examples/
  int nodes;
  Flags flags;
  // Why the projection is still more than 10% off, or empty. A listed case must stay off, so
  // that a model change which fixes it also removes its line.
  std::string known_miss;
};

// examples/moe_package/run_deepseek_v3_pretrain_mi355x.sh: 61 layers, all MoE, MBS 2,
// PP16 x VPP2 with its 32-stage layout, EP8, legacy grouped GEMM, Turbo DeepEP (80 CUs), no
// MTP, fused cross-entropy, BF16 optimizer moments.
const Flags kDeepSeekV3 = {
    {"num_layers", "61"},
    {"moe_layer_freq", "1"},
    {"micro_batch_size", "2"},
    {"moe_use_legacy_grouped_gemm", "True"},
    {"use_turbo_deepep", "True"},
    {"use_turbo_grouped_gemm", "False"},
    {"turbo_deepep_num_cu", "80"},
    {"pipeline_model_parallel_size", "16"},
    {"num_virtual_stages_per_pipeline_rank", "2"},
    {"expert_model_parallel_size", "8"},
    {"pipeline_model_parallel_layout",
     "Et*1|t*1|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|"
     "t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*2|t*1,L"},
    {"mtp_num_layers", "0"},
    {"cross_entropy_fusion_impl", "te"},
    {"cross_entropy_loss_fusion", "True"},
    {"use_precision_aware_optimizer", "True"},
};
// The blog's recompute table: one layer per virtual stage (default), or nine layer ids (tuned).
const Flags kRecomputeOnePerStage = {{"recompute_granularity", "full"},
                                     {"recompute_method", "block"},
                                     {"recompute_num_layers", "1"},
                                     {"recompute_layer_ids", "null"}};
const Flags kRecomputeNineIds = {{"recompute_granularity", "full"},
                                 {"recompute_layer_ids", "0,1,2,4,6,8,10,12,14"},
                                 {"recompute_method", "null"},
                                 {"recompute_num_layers", "null"}};

// examples/moe_package/run_deepseek_v2{,_lite}_pretrain_mi355x.sh defaults (TP1, EP8, seq 4096,
// legacy grouped GEMM, MLA, no MTP, forced balance) and its MoE_Features switches.
const Flags kDeepSeekV2Script = {
    {"seq_length", "4096"},
    {"tensor_model_parallel_size", "1"},
    {"expert_tensor_parallel_size", "1"},
    {"expert_model_parallel_size", "8"},
    {"context_parallel_size", "1"},
    {"moe_router_force_load_balancing", "True"},
    {"moe_use_legacy_grouped_gemm", "True"},
    {"multi_latent_attention", "True"},
    {"mtp_num_layers", "None"},
};
const Flags kLossFusion = {{"cross_entropy_fusion_impl", "te"},
                           {"cross_entropy_loss_fusion", "True"}};
const Flags kTurboDeepEp = {{"enable_primus_turbo", "True"},
                            {"use_turbo_deepep", "True"},
                            {"turbo_deepep_num_cu", "64"},
                            {"moe_shared_expert_overlap", "False"},
                            {"moe_router_dtype", "fp32"}};
const Flags kSyncFree1 = {{"turbo_sync_free_moe_stage", "1"}};
const Flags kLite = kDeepSeekV2Script + Flags{{"pipeline_model_parallel_size", "1"}};
const Flags kV2 = kDeepSeekV2Script + Flags{{"pipeline_model_parallel_size", "4"},
                                            {"micro_batch_size", "1"},
                                            {"global_batch_size", "256"}};
Flags Batch(int micro, int global) {
  return {{"micro_batch_size", std::to_string(micro)},
          {"global_batch_size", std::to_string(global)}};
}

const char* const kV3 = "megatron/configs/MI355X/deepseek_v3-FP8-pretrain.yaml";
const char* const kLiteYaml = "moe_package/configs/MI355X/deepseek_v2_lite-pretrain-baseline.yaml";
const char* const kV2Yaml = "moe_package/configs/MI355X/deepseek_v2-pretrain-baseline.yaml";

const std::string kHostBound =
    "the baseline at micro-batch 2 (no sync-free MoE, legacy grouped GEMM) runs ~4 ms per MoE "
    "layer slower than its kernels, a gap that shrinks with the micro-batch (+8% at 4, +2% at "
    "8): host launch and synchronisation time, which is not modelled";
const std::string kDeepSeekV2Gap =
    "DeepSeek-V2 on 4 nodes runs ~10 ms per layer and micro-batch slower than its modelled "
    "kernels with or without DeepEP, VPP and sync-free MoE; not explained (20 experts per GPU "
    "through legacy grouped GEMM, MLA attention with 192/128 head dims)";
const std::string kGptOssFusion =
    "the example turns gradient_accumulation_fusion off (its weight-gradient adds cost ~10%); "
    "the blog's MLPerf configuration does not say whether it does";

std::vector<MeasuredExample> Cases() {
  const Flags gptoss = Batch(2, 16) + Flags{{"expert_model_parallel_size", "1"},
                                            {"use_turbo_grouped_gemm", "True"},
                                            {"recompute_granularity", "null"}};
  return {
      {"amd-moe2-dsv3-32n-default", kV3, 32,
       kDeepSeekV3 + kRecomputeOnePerStage + Flags{{"global_batch_size", "4096"}}, ""},
      {"amd-moe2-dsv3-128n-default", kV3, 128,
       kDeepSeekV3 + kRecomputeOnePerStage + Flags{{"global_batch_size", "16384"}}, ""},
      {"amd-moe2-dsv3-128n-tuned", kV3, 128,
       kDeepSeekV3 + kRecomputeNineIds + Flags{{"global_batch_size", "16384"}}, ""},
      {"amd-moe2-dsv3-128n-tuned-c4", kV3, 128,
       kDeepSeekV3 + kRecomputeNineIds +
           Flags{{"global_batch_size", "16384"}, {"mock_data", "False"}},
       ""},
      // examples/moe_package/run_qwen_30B_a3B_pretrain_mi355x.sh with the blog's "Turbo"
      // column: sync-free stage 2 and Turbo grouped GEMM instead of the legacy one.
      {"amd-moe2-qwen30-turbo", "megatron/configs/MI355X/qwen3_30B_A3B-FP8-pretrain.yaml", 1,
       Batch(8, 512) + Flags{{"use_turbo_deepep", "True"},
                             {"moe_use_legacy_grouped_gemm", "False"},
                             {"use_turbo_grouped_gemm", "True"},
                             {"turbo_sync_free_moe_stage", "2"},
                             {"pipeline_model_parallel_size", "1"},
                             {"expert_model_parallel_size", "8"},
                             {"recompute_granularity", "null"},
                             {"cross_entropy_loss_fusion", "True"}},
       ""},
      // The blog's best Qwen3-235B layout: CP4 x EP8 on 4 nodes, no pipeline.
      {"amd-moe2-qwen235-best", "megatron/configs/MI355X/qwen3_235B_A22B-FP8-pretrain.yaml", 4,
       Batch(2, 1024) + Flags{{"context_parallel_size", "4"},
                              {"expert_model_parallel_size", "8"},
                              {"pipeline_model_parallel_size", "1"},
                              {"pipeline_model_parallel_layout", "null"},
                              {"num_virtual_stages_per_pipeline_rank", "null"},
                              {"turbo_sync_free_moe_stage", "1"},
                              {"recompute_granularity", "null"}},
       ""},
      {"amd-moe2-gptoss20-mlperf", "megatron/configs/MI355X/gpt_oss_20B-FP8-pretrain.yaml", 1,
       gptoss, kGptOssFusion},
      {"amd-moe2-gptoss20-turbo", "megatron/configs/MI355X/gpt_oss_20B-FP8-pretrain.yaml", 1,
       gptoss, kGptOssFusion + "; and the FlyDSL grouped-GEMM backend's +9.7% is not modelled"},
      {"amd-moepkg-dsv2lite-02", kLiteYaml, 1, kLite + Batch(2, 768), kHostBound},
      {"amd-moepkg-dsv2lite-03", kLiteYaml, 1, kLite + Batch(4, 768), ""},
      {"amd-moepkg-dsv2lite-04", kLiteYaml, 1, kLite + Batch(8, 768), ""},
      {"amd-moepkg-dsv2lite-07", kLiteYaml, 1, kLite + Batch(12, 768) + kLossFusion + kTurboDeepEp,
       ""},
      {"amd-moepkg-dsv2lite-09", kLiteYaml, 1,
       kLite + Batch(12, 768) + kLossFusion + kTurboDeepEp + kSyncFree1, ""},
      {"amd-moepkg-dsv2lite-10", kLiteYaml, 1,
       kLite + Batch(14, 896) + kLossFusion + kTurboDeepEp + kSyncFree1, ""},
      {"amd-moepkg-dsv2-01", kV2Yaml, 4, kV2, kDeepSeekV2Gap},
      {"amd-moepkg-dsv2-02", kV2Yaml, 4, kV2 + kLossFusion, kDeepSeekV2Gap},
      {"amd-moepkg-dsv2-03", kV2Yaml, 4, kV2 + kLossFusion + kTurboDeepEp, kDeepSeekV2Gap},
      // NUMA binding and a larger kernel-argument pool: host-side settings, same flags.
      {"amd-moepkg-dsv2-04", kV2Yaml, 4, kV2 + kLossFusion + kTurboDeepEp, kDeepSeekV2Gap},
      {"amd-moepkg-dsv2-05", kV2Yaml, 4,
       kV2 + kLossFusion + kTurboDeepEp + Flags{{"num_virtual_stages_per_pipeline_rank", "3"}},
       kDeepSeekV2Gap},
      {"amd-moepkg-dsv2-06", kV2Yaml, 4,
       kV2 + kLossFusion + kTurboDeepEp + kSyncFree1 +
           Flags{{"num_virtual_stages_per_pipeline_rank", "3"}},
       kDeepSeekV2Gap},
  };
}

TEST(PrimusMeasuredRuns, ExamplesProjectWithinTenPercentOfTheirMeasuredRuns) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const CsvTable runs = CsvTable::Read(CorpusPath("validation/published_runs.csv"));
  int within = 0, missed = 0;
  for (const MeasuredExample& c : Cases()) {
    size_t row = runs.size();
    for (size_t i = 0; i < runs.size(); ++i)
      if (runs.Get(i, "id") == c.row_id) row = i;
    ASSERT_LT(row, runs.size()) << c.row_id << " is not in the table";
    const double measured = std::stod(runs.Get(row, "metric_value"));
    const std::string metric = runs.Get(row, "metric_name");

    JobRequest request;
    request.config_path = CorpusPath("primus/examples/" + c.config);
    request.primus_path = CorpusPath("primus");
    request.use_environment = false;
    request.target_nodes = c.nodes;
    request.overrides = c.flags;
    const Job job = BuildJob(request);
    ASSERT_EQ(job.cluster.gpu.name, "MI355X") << c.row_id;
    PerformanceOptions options;
    options.scaling_nodes = {c.nodes};
    const PerformanceReport report = ProjectPerformance(job, options);
    double projected = 0;
    if (metric == "tokens_per_sec_per_gpu") {
      projected = report.tokens_per_s_per_gpu;
    } else {
      ASSERT_EQ(metric, "iteration_time_s") << c.row_id;
      projected = report.iteration_time_ms / 1e3;
    }
    const double error = projected / measured - 1;
    if (c.known_miss.empty()) {
      EXPECT_LE(std::abs(error), 0.10) << c.row_id << ": projected " << projected << ", measured "
                                       << measured << " (" << error * 100 << "%)";
      ++within;
    } else {
      EXPECT_GT(std::abs(error), 0.10)
          << c.row_id << " is now within 10% (" << error * 100 << "%): remove its known miss";
      ++missed;
    }
  }
  // 11 of the 20 measured runs of these examples are projected within 10%.
  EXPECT_EQ(within, 11);
  EXPECT_EQ(missed, 9);
}

// AMD's measured MI325X runs of Primus's Llama 3.1 examples on 8 nodes, published next to
// Primus's own projection of them (AMD-AGI/Primus @fd1eeab,
// docs_deprecated/tech_blogs/projection/projection.md, "MI325X - Dense Models"): tokens/s per
// GPU at the micro-batch the table gives, sequence 8192, TP = PP = CP = EP = 1, FSDP as the
// examples set it. These runs are not in the published-runs table; nothing was fitted on them.
struct BlogRun {
  std::string config;  // under examples/megatron/configs/MI325X/
  int micro_batch;
  double measured_tokens_per_s;
  std::string known_miss;
};

TEST(PrimusMeasuredRuns, Mi325xDenseExamplesAgainstAmdsMeasuredRuns) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string kDenseGap =
      "the dense layers run at the MI325X's max-achievable GEMM rate times the in-training "
      "factor fitted on NVIDIA-heavy rows; AMD's measured run is faster still";
  const std::vector<BlogRun> runs = {
      {"llama3.1_8B-FP8-pretrain.yaml", 2, 16186, kDenseGap},
      {"llama3.1_70B-FP8-pretrain.yaml", 4, 1726, ""},
      {"llama3.1_70B-BF16-pretrain.yaml", 1, 1174, kDenseGap},
  };
  for (const BlogRun& run : runs) {
    JobRequest request;
    request.config_path = CorpusPath("primus/examples/megatron/configs/MI325X/" + run.config);
    request.primus_path = CorpusPath("primus");
    request.use_environment = false;
    request.target_nodes = 8;
    request.overrides = {{"micro_batch_size", std::to_string(run.micro_batch)}};
    const Job job = BuildJob(request);
    ASSERT_EQ(job.cluster.gpu.name, "MI325X") << run.config;
    PerformanceOptions options;
    options.scaling_nodes = {8};
    const double projected = ProjectPerformance(job, options).tokens_per_s_per_gpu;
    const double error = projected / run.measured_tokens_per_s - 1;
    if (run.known_miss.empty()) {
      EXPECT_LE(std::abs(error), 0.10) << run.config << ": projected " << projected << ", measured "
                                       << run.measured_tokens_per_s;
    } else {
      EXPECT_GT(std::abs(error), 0.10)
          << run.config << " is now within 10% (" << error * 100 << "%): remove its known miss";
    }
    // Within 20% either way: the MI325X's own ceiling (843 of 1307 TFLOP/s bf16) applies.
    // With the MI300X's (708) every run was 22-27% slow.
    EXPECT_LE(std::abs(error), 0.20) << run.config << ": projected " << projected;
  }
}

}  // namespace
}  // namespace sextant
