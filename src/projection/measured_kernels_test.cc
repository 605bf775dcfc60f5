#include "projection/measured_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "util/corpus_path.h"
#include "util/csv_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

// The GEMMs read from a trace are TraceLens's GEMM table of the same trace: every bf16 row of
// its GEMM.csv (M, N, K, batch) is found with TraceLens's mean kernel time per call.
TEST(MeasuredKernelsTest, GemmsOfATraceAreThoseOfTraceLensGemmReport) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string dir = "traces/TraceLens/mi300/";
  const std::string name = "Qwen_Qwen1.5-0.5B-Chat__1016005";
  const MeasuredKernelFile trace = ReadMeasuredKernels(CorpusPath(dir + name + ".json.gz"));
  EXPECT_NE(trace.device_name.find("MI300X"), std::string::npos);
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::pair<double, int64_t>> ours;
  for (const MeasuredKernel& k : trace.kernels) {
    if (k.kind != KernelClass::kGemm || k.dtype != DType::kBF16) continue;
    auto& [seconds, calls] = ours[{k.gemm.m, k.gemm.n, k.gemm.k, k.gemm.batch}];
    seconds += k.seconds * k.calls;
    calls += k.calls;
  }
  // TraceLens lists mm and addmm of one shape apart; per shape, calls and time add up.
  const CsvTable reference = CsvTable::Read(CorpusPath(dir + name + "_perf_report_csvs/GEMM.csv"));
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::pair<double, int64_t>> theirs;
  for (size_t i = 0; i < reference.size(); ++i) {
    if (reference.Get(i, "param: dtype_A_B").find("BFloat16") == std::string::npos) continue;
    auto& [seconds, calls] = theirs[{
        std::stoll(reference.Get(i, "param: M")), std::stoll(reference.Get(i, "param: N")),
        std::stoll(reference.Get(i, "param: K")), std::stoll(reference.Get(i, "param: B"))}];
    seconds += std::stod(reference.Get(i, "Kernel Time (µs)_sum")) * 1e-6;
    calls += std::stoll(reference.Get(i, "name_count"));
  }
  int compared = 0;
  for (const auto& [shape, reference_total] : theirs) {
    ASSERT_TRUE(ours.count(shape)) << "a GEMM shape of TraceLens's report is missing";
    EXPECT_EQ(ours[shape].second, reference_total.second);
    EXPECT_NEAR(ours[shape].first, reference_total.first, 0.01 * reference_total.first);
    ++compared;
  }
  EXPECT_EQ(compared, 3);  // TraceLens's three bf16 GEMM shapes (four rows) of this trace
}

TEST(MeasuredKernelsTest, ReadsTraceLensGemmAndAttentionTables) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string dir =
      CorpusPath("traces/TraceLens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs/");
  const MeasuredKernelFile gemms = ReadMeasuredKernels(dir + "GEMM.csv");
  // Five rows: four bf16 GEMMs and one fp32 bmm (32 x [559 x 1]) .
  ASSERT_EQ(gemms.kernels.size(), 5u);
  EXPECT_EQ(gemms.kernels[0].gemm.m, 8944);
  EXPECT_EQ(gemms.kernels[0].gemm.n, 2816);
  EXPECT_EQ(gemms.kernels[0].gemm.k, 1024);
  EXPECT_NEAR(gemms.kernels[0].seconds, 110.452880859375e-6, 1e-12);  // the median column
  EXPECT_EQ(gemms.kernels[0].calls, 48);
  EXPECT_EQ(gemms.kernels[4].dtype, DType::kFP32);
  const MeasuredKernelFile attention = ReadMeasuredKernels(dir + "SDPA_fwd.csv");
  ASSERT_EQ(attention.kernels.size(), 1u);
  const AttentionShape& a = attention.kernels[0].attention;
  EXPECT_EQ(attention.kernels[0].kind, KernelClass::kAttentionForward);
  EXPECT_EQ(a.batch, 16);
  EXPECT_EQ(a.q_heads, 16);
  EXPECT_EQ(a.seq, 559);
  EXPECT_EQ(a.head_dim_qk, 64);
  EXPECT_TRUE(a.causal);
}

TEST(MeasuredKernelsTest, GemmTimingTablesInCsvAndJson) {
  const MeasuredKernelFile csv =
      ParseMeasuredKernelTable("m,n,k,dtype,time_us\n4096,4096,4096,bf16,2000\n", "g.csv");
  ASSERT_EQ(csv.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(csv.kernels[0].seconds, 2e-3);
  const MeasuredKernelFile json = ParseMeasuredKernelTable(
      R"({"gemms":[{"m":8,"n":16,"k":32,"dtype":"fp8","time_us":3}]})", "g.json");
  ASSERT_EQ(json.kernels.size(), 1u);
  EXPECT_EQ(json.kernels[0].dtype, DType::kFP8);
}

TEST(MeasuredKernelsTest, ABadTraceLensCellNamesFileLineAndColumn) {
  const std::string text =
      "name,param: B,param: M,param: N,param: K,param: dtype_A_B,Kernel Time (µs)_median\n"
      "aten::mm,1,64,64,64,\"('c10::BFloat16', 'c10::BFloat16')\",5.0\n"
      "aten::mm,1,64,x,64,\"('c10::BFloat16', 'c10::BFloat16')\",5.0\n";
  try {
    ParseMeasuredKernelTable(text, "GEMM.csv");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GEMM.csv:3"), std::string::npos) << what;
    EXPECT_NE(what.find("param: N"), std::string::npos) << what;
  }
  // Dimensions beyond any tensor are refused, not multiplied into overflow.
  EXPECT_THROW(
      ParseMeasuredKernelTable("name,param: B,param: M,param: N,param: K,param: dtype_A_B,"
                               "Kernel Time (µs)_median\naten::mm,1,1e300,64,64,c10::BFloat16,5\n",
                               "GEMM.csv"),
      UserError);
}

}  // namespace
}  // namespace sextant
