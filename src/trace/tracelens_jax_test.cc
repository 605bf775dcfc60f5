#include "trace/tracelens_jax.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trace/op_category.h"
#include "trace/trace_runner.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

// The corpus profile's convolution: input (1, 16, 32, 60, 104), filter (5120, 16, 1, 2, 2),
// output (1, 5120, 34, 31, 53), bf16, no bias.
JaxConvCall ReferenceConv() {
  JaxConvCall c;
  c.input = {1, 16, 32, 60, 104};
  c.filter = {5120, 16, 1, 2, 2};
  c.output = {1, 5120, 34, 31, 53};
  c.bytes_per_element = 2;
  return c;
}

TEST(TraceLensJaxTest, ConvolutionFlopsAndBytesByHand) {
  JaxConvCall c = ReferenceConv();
  // Each of the 1 x 5120 x 34 x 31 x 53 = 286,013,440 outputs sums 16 channels x 1 x 2 x 2
  // products: 2 x 64 x 286,013,440 = 36,609,720,320 FLOPs. (TraceLens's JAX sheet writes
  // 2,288,107,520: 2 x 2 x 2 x outputs, the window's last two dimensions only.)
  EXPECT_DOUBLE_EQ(JaxConvFlops(c), 36609720320.0);
  // (3,194,880 input + 327,680 filter + 286,013,440 output elements) x 2 B.
  EXPECT_DOUBLE_EQ(JaxConvBytes(c), 579072000.0);
  c.bias = true;
  EXPECT_DOUBLE_EQ(JaxConvFlops(c), 36609720320.0 + 286013440.0);
  c.bias = false;
  c.backward = true;  // data and weight gradients: the forward's products twice
  EXPECT_DOUBLE_EQ(JaxConvFlops(c), 2 * 36609720320.0);
  c.bytes_per_element = 0;
  EXPECT_TRUE(std::isnan(JaxConvBytes(c)));
}

TEST(TraceLensJaxTest, KernelCategoriesAsTraceLensNamesThem) {
  // hipBLASLt's GEMM running cuDNN-style convolution on ROCm: its XLA op says conv.
  EXPECT_EQ(TraceLensJaxCategory("Cijk_Ailk_Bljk_BBS_BH_MT256x128x64", "cudnn-conv.1.0"), "Conv");
  EXPECT_EQ(TraceLensJaxCategory("Im3d2Col", "cudnn-conv.1.0"), "Conv");
  EXPECT_EQ(TraceLensJaxCategory("input_transpose_fusion_1", "input_transpose_fusion.1"),
            "Uncategorized Events/XLA");
  EXPECT_EQ(TraceLensJaxCategory("gemm_fusion_dot.kd", "gemm_fusion_dot"), "GEMM");
  // Transformer Engine's fused attention: CK's FMHA kernels stay flash attention, the buffer
  // fills inside the custom call go to TE by their XLA op (TraceLens issues #422, #423).
  EXPECT_EQ(TraceLensJaxCategory("ck_tile::FmhaBwdDQDKDVKernel", "te_fused_attn_backward_ffi.3"),
            "FA BWD");
  EXPECT_EQ(
      TraceLensJaxCategory("__amd_rocclr_fillBufferAligned.kd", "te_fused_attn_backward_ffi.12"),
      "TE");
  EXPECT_EQ(TraceLensJaxCategory("ncclDevKernel_AllReduce", ""), "Communication rccl/nccl");
}

// The report over both GPUs of the corpus profile: the tables TraceLens's JAX report writes,
// with its numbers (tests/cli/trace_report_tracelens_format.py compares every row with its
// reference CSVs; here a few cells by hand).
TEST(TraceLensJaxTest, ReportSpansTheFilesGpus) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::vector<RankReport> ranks =
      AnalyzeTraceFiles({CorpusPath("traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                                    "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb")},
                        ReportOptions{}, 1);
  ASSERT_EQ(ranks.size(), 2u);
  const std::vector<Table> tables = TraceLensJaxTables({&ranks[0], &ranks[1]});
  std::vector<std::string> names;
  for (const Table& t : tables) names.push_back(t.name());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "gpu_timeline", "gpu_events_averages", "kernel_launchers",
                       "kernel_launchers_summary", "kernel_launchers_summary_by_category",
                       "kernel_launchers_unique_args", "df_xla_perf", "xla_summary", "op_conv"}));
  // GPU 7 (pid 8) first, as Python iterates the set {1, 8}; its computation 3.586493 ms.
  const Table& timeline = tables[0];
  ASSERT_EQ(timeline.rows().size(), 16u);
  EXPECT_EQ(std::get<int64_t>(timeline.rows()[0][3]), 8);
  EXPECT_NEAR(std::get<double>(timeline.rows()[0][1]), 3.586493, 1e-9);
  EXPECT_EQ(std::get<int64_t>(timeline.rows()[8][3]), 1);
  // The average over the two GPUs: (3.586493 + 0) / 2 ms of computation.
  EXPECT_NEAR(std::get<double>(tables[1].rows()[0][1]), 1.7932465, 1e-9);
  // xla_summary drops every digit: input_transpose_fusion_1 -> input_transpose_fusion_.
  const Table& xla = tables[7];
  ASSERT_EQ(xla.rows().size(), 3u);
  EXPECT_EQ(std::get<std::string>(xla.rows()[1][0]), "input_transpose_fusion_");
  EXPECT_NEAR(std::get<double>(xla.rows()[1][1]), 6.689 + 6.53 + 6.329 + 6.73 + 42.983, 1e-9);

  // The same report from the devices' xla_activities tables handed over (and freed as read).
  std::vector<Table> activities;
  for (const RankReport& r : ranks) {
    for (const Table& t : r.tables)
      if (t.name() == "xla_activities") activities.push_back(t);
  }
  ASSERT_EQ(activities.size(), 2u);
  const std::vector<Table> again = TraceLensJaxTablesFromActivities(std::move(activities));
  ASSERT_EQ(again.size(), tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    EXPECT_EQ(again[i].name(), tables[i].name());
    EXPECT_EQ(again[i].rows(), tables[i].rows()) << tables[i].name();
  }
}

// Two hosts' profiles (each numbers its GPUs from 0): the second file's GPUs are numbered on
// from the first's highest, in the reports and in every table's rank column.
TEST(TraceLensJaxTest, SeveralHostsGetRanksOfTheirOwn) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::vector<RankReport> ranks = AnalyzeTraceFiles(
      {CorpusPath("traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                  "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"),
       CorpusPath("traces/TraceLens/jax/test_data_jax_te_fused_attn_categorization/"
                  "934987a2fc2f.xplane.pb")},
      ReportOptions{}, 1);
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0].rank, 0);
  EXPECT_EQ(ranks[1].rank, 7);
  EXPECT_EQ(ranks[2].rank, 8);  // the second host's GPU 0
  for (const Table& t : ranks[2].tables) {
    const int column = t.ColumnIndex("rank");
    if (column < 0) continue;
    for (const auto& row : t.rows()) {
      EXPECT_EQ(std::get<int64_t>(row[static_cast<size_t>(column)]), 8) << t.name();
    }
  }
}

// For the console alone the GPUs' xla_activities tables are not built (a row per device
// event); the hosts' GPUs are numbered on all the same.
TEST(TraceLensJaxTest, HostsAreNumberedWithoutTheirActivityTables) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  ReportOptions console;
  console.every_table = false;
  const std::vector<RankReport> ranks = AnalyzeTraceFiles(
      {CorpusPath("traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                  "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"),
       CorpusPath("traces/TraceLens/jax/test_data_jax_te_fused_attn_categorization/"
                  "934987a2fc2f.xplane.pb")},
      console, 1);
  std::vector<int64_t> numbers;
  for (const RankReport& r : ranks) {
    numbers.push_back(r.rank);
    EXPECT_TRUE(r.xplane);
    for (const Table& t : r.tables) EXPECT_NE(t.name(), "xla_activities");
  }
  EXPECT_EQ(numbers, (std::vector<int64_t>{0, 7, 8}));
}

// A PyTorch trace (rank 0: no distributedInfo, first on the command line) and a JAX profile of
// GPUs 0 and 7: the XPlane GPUs are numbered on after rank 0, as ranks 1 and 8, and say so.
TEST(TraceLensJaxTest, XPlaneGpusFollowThePyTorchRanksGivenWithThem) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::vector<RankReport> ranks = AnalyzeTraceFiles(
      {CorpusPath("traces/TraceLens/h100/gaunernst_bert-small-uncased__1016001.json.gz"),
       CorpusPath("traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                  "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb")},
      ReportOptions{}, 1);
  ASSERT_EQ(ranks.size(), 3u);
  std::vector<int64_t> numbers;
  for (const RankReport& r : ranks) numbers.push_back(r.rank);
  EXPECT_EQ(numbers, (std::vector<int64_t>{0, 1, 8}));
  ASSERT_FALSE(ranks[2].warnings.empty());
  EXPECT_NE(ranks[2].warnings.back().find("GPU 7 of this XPlane profile is reported as rank 8"),
            std::string::npos)
      << ranks[2].warnings.back();
  for (const Table& t : ranks[1].tables) {
    const int column = t.ColumnIndex("rank");
    if (column < 0) continue;
    for (const auto& row : t.rows()) {
      EXPECT_EQ(std::get<int64_t>(row[static_cast<size_t>(column)]), 1) << t.name();
    }
  }
}

}  // namespace
}  // namespace sextant
