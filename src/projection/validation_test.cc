#include "projection/validation.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/corpus_path.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

const std::string kRuns = CorpusPath("validation/published_runs.csv");

TEST(PublishedRunTest, BuildsTorchtitanFsdpJob) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const CsvTable t = CsvTable::Read(kRuns);
  bool found = false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.Get(i, "id") != "torchtitan-T1-01-mem") continue;
    found = true;
    const PublishedRun r = ReadPublishedRun(t, i);
    ASSERT_TRUE(r.job.has_value()) << r.reason;
    EXPECT_EQ(SourceFamily(r.id), "torchtitan");
    EXPECT_EQ(r.framework, "torchtitan");
    EXPECT_TRUE(r.job->parallel.fsdp2);
    EXPECT_EQ(r.job->parallel.dp, 8);
    EXPECT_EQ(r.job->training.seq_length, 8192);
    EXPECT_EQ(r.job->model.num_layers, 32);
    EXPECT_EQ(r.job->cluster.gpu.name, "H100");
    EXPECT_DOUBLE_EQ(r.measured, 82.4);
  }
  EXPECT_TRUE(found);
}

// Every missing fact is named at once. amd-ppipe-llama2-1-mem states no sequence length,
// micro-batch or global batch; amd-moe2-dsv3p-mxfp8-deepep states its global batch (512).
TEST(PublishedRunTest, RowsWithoutSequenceLengthSayWhy) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const CsvTable t = CsvTable::Read(kRuns);
  int found = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string id = t.Get(i, "id");
    if (id != "amd-ppipe-llama2-1-mem" && id != "amd-moe2-dsv3p-mxfp8-deepep") continue;
    const PublishedRun r = ReadPublishedRun(t, i);
    EXPECT_FALSE(r.job.has_value()) << id;
    EXPECT_EQ(r.reason, id == "amd-ppipe-llama2-1-mem"
                            ? "sequence length, micro-batch and global batch not stated"
                            : "sequence length not stated")
        << id;
    ++found;
  }
  EXPECT_EQ(found, 2);
}

// A measured run ran: where the memory model finds its configuration OOM, the row says so
// next to its time error. Narayanan et al.'s GPT 1.7B on 32 A100s fits (about 1.7e9 x 18 B of
// state and a few GB of activations); the same row with GPT-3 175B's dimensions holds 175e9 x 18 B
// of state per GPU with no model parallelism, far past 80 GB.
TEST(ValidationTest, MarksTimeRowsWhoseConfigurationProjectsOom) {
  const std::string header =
      "id,model,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,moe_experts,gpu,"
      "gpus_per_node,num_gpus,tp,pp,dp,cp,ep,vpp,micro_batch,global_batch,precision,recompute,"
      "optimizer_sharding,metric_name,metric_value,notes\n";
  const std::string rows =
      "megatron-01,GPT-1.7B,24,2304,,24,,51200,2048,,A100-80GB,8,32,1,1,32,1,1,,1,512,fp16,,none,"
      "tflops_per_gpu,137,\n"
      "megatron-02,GPT-175B,96,12288,,96,,51200,2048,,A100-80GB,8,32,1,1,32,1,1,,1,512,fp16,,none,"
      "tflops_per_gpu,137,\n";
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("sextant_oom_" + std::to_string(::getpid()) + ".csv");
  WriteFileAtomically(path.string(), header + rows);
  const ValidationReport r = Validate(
      path.string(),
      [](const PublishedRun& run, std::string&) -> std::optional<double> { return run.measured; });
  std::filesystem::remove(path);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].memory_note, "");
  EXPECT_THAT(r.rows[1].memory_note, ::testing::StartsWith("OOM: "));
  EXPECT_THAT(r.rows[1].memory_note, ::testing::EndsWith(" of 80.0 GiB"));
  EXPECT_THAT(ValidationJson(r).dump(), ::testing::HasSubstr("\"memory_note\":\"OOM: "));
}

TEST(ValidationTest, ScoresEveryProjectedRowAndExplainsTheRest) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  // A predictor that is exactly 10% high must score 10% everywhere.
  const ValidationReport r =
      Validate(kRuns, [](const PublishedRun& run, std::string&) -> std::optional<double> {
        return run.measured * 1.1;
      });
  EXPECT_EQ(r.rows.size() + r.skipped.size(), CsvTable::Read(kRuns).size());  // every row
  EXPECT_GT(r.rows.size(), 100u);
  EXPECT_NEAR(r.mape_pct, 10.0, 1e-9);
  for (const auto& s : r.skipped) EXPECT_FALSE(s.run.reason.empty()) << s.run.id;
}

TEST(ValidationTest, MemoryRowsAreWithinReachOfMeasuredPeaks) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const ValidationReport r = Validate(kRuns, DefaultPredictor());
  int memory_rows = 0;
  for (const auto& row : r.rows) {
    if (row.run.metric_name.rfind("peak_memory", 0) != 0) continue;
    ++memory_rows;
    // Each projected peak must be within a factor of 2 of the measurement; the aggregate
    // accuracy is reported by `sextant validate` and documented in docs/validate.md.
    EXPECT_GT(*row.predicted, 0.5 * row.run.measured) << row.run.id;
    EXPECT_LT(*row.predicted, 2.0 * row.run.measured) << row.run.id;
  }
  EXPECT_GE(memory_rows, 5);
}

// The accuracy targets of the performance projection (SPEC §5, docs/validate.md): over the
// projectable time/throughput rows, every source within 15% MAPE and the mean over sources
// within 10%. Memory rows are scored separately.
TEST(ValidationTest, TimeRowsMeetTheAccuracyTargets) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const RowPredictor predict = DefaultPredictor();
  const ValidationReport r =
      Validate(kRuns, [&](const PublishedRun& run, std::string& why) -> std::optional<double> {
        if (run.metric_name.rfind("peak_memory", 0) == 0) {
          why = "memory row";
          return std::nullopt;
        }
        return predict(run, why);
      });
  EXPECT_GE(r.rows.size(), 130u);
  // Sources the projection is known to miss the target on. Each must still miss it, so that
  // the improvement that fixes one also removes its line here.
  const std::map<std::string, std::string> known_off_target = {
      {"amd-moepkg",
       "DeepSeek-V2 (PP4 EP8) on MI355X 47-74% too fast, V2-Lite 45% too fast at micro-batch 2 "
       "and 15-17% too slow at 12-14: the rows do not state the baseline's unfused permutation and "
       "legacy grouped "
       "GEMM (examples/moe_package/configs), and MI355X all-to-all is not measured"},
      {"dgxc-llama4mav", "Llama 4 Maverick on GB200 NVL72: 14-26% too fast (H100 rows within 10%)"},
      {"mbridge2604",
       "Megatron-Bridge MoE: Qwen3-30B-A3B on H100 39% and gpt-oss-120b 47-53% too fast; the "
       "DeepSeek-V3 MXFP8 rows 10-41% too slow without the A2A overlap their recipes turn on "
       "(the rows do not state it)"},
      {"titan-deepep",
       "torchtitan FSDP2 + DeepEP Qwen3-30B-A3B on B200: 13-19% too fast with its unfused "
       "permutation charged (30-37% before); memory 12% low"},
  };
  double sum = 0, row_sum = 0;
  int sources = 0, rows = 0;
  for (const ValidationRow& row : r.rows) {
    if (known_off_target.count(SourceFamily(row.run.id))) continue;
    row_sum += std::fabs(row.error_pct);
    ++rows;
  }
  for (const GroupScore& s : r.per_source) {
    if (known_off_target.count(s.name)) {
      EXPECT_GT(s.mape_pct, 15.0) << s.name << " now meets the target; remove its known line";
      continue;
    }
    EXPECT_LE(s.mape_pct, 15.0) << s.name;
    sum += s.mape_pct;
    ++sources;
  }
  ASSERT_GT(sources, 0);
  EXPECT_LE(sum / sources, 10.0);  // mean over the sources within reach
  ASSERT_GT(rows, 0);
  EXPECT_LE(row_sum / rows, 10.0);
}

TEST(ValidationTest, ExplainShowsTheProjectionBehindOneRow) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string text = ExplainPublishedRow(kRuns, "torchtitan-T1-02-tps");
  EXPECT_NE(text.find("measured 6667"), std::string::npos) << text;
  EXPECT_NE(text.find("Where the iteration goes"), std::string::npos);
  EXPECT_NE(text.find("Memory per GPU"), std::string::npos);
  EXPECT_THROW(ExplainPublishedRow(kRuns, "no-such-row"), UserError);
  EXPECT_THROW(ExplainPublishedRow(kRuns, "amd-ppipe-llama2-1-mem"), UserError);
}

}  // namespace
}  // namespace sextant
