#include "trace/tracelens_format.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trace/trace_report.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

std::vector<std::string> Headers(const std::vector<Table>& tables, const std::string& name) {
  for (const Table& t : tables) {
    if (t.name() != name) continue;
    std::vector<std::string> headers;
    for (const Column& c : t.columns()) headers.push_back(c.header);
    return headers;
  }
  ADD_FAILURE() << "no table " << name;
  return {};
}

bool Has(const std::vector<std::string>& headers, const std::string& header) {
  return std::find(headers.begin(), headers.end(), header) != headers.end();
}

// TraceLens adds unified_perf_summary's FLOP and byte columns from its perf-model rows: a
// trace whose ops have no perf model (kineto's docs trace: one custom op) has none of them.
TEST(TraceLensFormatTest, UnifiedPerfHasRateColumnsOnlyWithPerfModelOps) {
  const TraceData plain =
      KinetoTraceBuilder().CpuOp("op1", 0, 20).Launch(1, 1, 1).Kernel("kernel1", 5, 10, 1).Parse();
  const std::vector<std::string> without =
      Headers(TraceLensTables(AnalyzeTrace(plain, {}, 0)), "unified_perf_summary");
  EXPECT_TRUE(Has(without, "Kernel Time (µs)_sum"));
  EXPECT_TRUE(Has(without, "has_perf_model"));
  for (const char* rate : {"GFLOPS", "Data Moved (MB)", "FLOPS/Byte", "TB/s_mean", "TFLOPS/s_max"})
    EXPECT_FALSE(Has(without, rate)) << rate;

  const TraceData gemm =
      KinetoTraceBuilder()
          .CpuOp("aten::mm", 0, 20,
                 R"("Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"])")
          .Launch(1, 1, 1)
          .Kernel("gemm", 5, 10, 1)
          .Parse();
  const std::vector<std::string> with =
      Headers(TraceLensTables(AnalyzeTrace(gemm, {}, 0)), "unified_perf_summary");
  for (const char* rate : {"GFLOPS", "Data Moved (MB)", "FLOPS/Byte", "TB/s_mean", "TFLOPS/s_max"})
    EXPECT_TRUE(Has(with, rate)) << rate;
}

}  // namespace
}  // namespace sextant
