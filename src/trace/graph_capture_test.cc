#include "trace/graph_capture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "trace/op_breakdown.h"
#include "trace/trace_runner.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// A launch recorded under stream capture: ROCm names the kernel in args "kernel".
std::string CapturedLaunch(std::string_view kernel, double ts_us, int64_t correlation) {
  return fmt::format(
      R"({{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, )"
      R"("ts": {}, "dur": 1, "args": {{"correlation": {}, "kernel": {}}}}})",
      ts_us, correlation, KinetoTraceBuilder::Quote(kernel));
}

// Capture: BeginCapture; aten::mm [2, 10) records "gemm"; aten::relu [12, 18) records "relu";
// a capture-info query (no node); EndCapture.
TraceData Capture() {
  return KinetoTraceBuilder()
      .Runtime("hipStreamBeginCapture", 0, 1, 1)
      .CpuOp("aten::mm", 2, 8, R"("Input Dims": [[2, 3], [3, 4]])")
      .Event(CapturedLaunch("gemm", 3, 2))
      .CpuOp("aten::relu", 12, 6, R"("Input Dims": [[2, 4]])")
      .Event(CapturedLaunch("relu", 13, 3))
      .Runtime("hipStreamGetCaptureInfo", 15, 1, 4)
      .Runtime("hipStreamEndCapture", 20, 1, 5)
      .Parse("capture.json");
}

const OpStats* Find(const std::vector<OpStats>& ops, std::string_view name) {
  for (const auto& o : ops) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

TEST(GraphCaptureTest, ReplayedKernelsTakeTheCapturedOps) {
  // Two replays of the graph (correlations 9 and 10): gemm 10 + 12 us, relu 3 + 4 us.
  TraceData replay = KinetoTraceBuilder()
                         .Runtime("hipGraphLaunch", 100, 5, 9)
                         .Runtime("hipGraphLaunch", 200, 5, 10)
                         .Kernel("gemm", 110, 10, 9)
                         .Kernel("relu", 120, 3, 9)
                         .Kernel("gemm", 210, 12, 10)
                         .Kernel("relu", 222, 4, 10)
                         .Parse("replay.json");
  TraceData capture = Capture();
  GraphAttribution a = AttributeGraphReplays(replay, {&capture});
  EXPECT_EQ(a.graphs_captured, 1u);
  EXPECT_EQ(a.launches, 2u);
  EXPECT_EQ(a.launches_matched, 2u);
  EXPECT_EQ(a.kernels, 4u);
  EXPECT_EQ(a.kernels_attributed, 4u);
  EXPECT_EQ(a.ops_imported, 2u);  // each captured op once, shared by both replays
  EXPECT_EQ(replay.graph_kernels_attributed, 4u);
  EXPECT_TRUE(replay.warnings.empty());

  std::vector<OpStats> ops = SummarizeOps(replay, ComputeOpKernelTimes(replay), true);
  const OpStats* mm = Find(ops, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->input_dims, "[[2, 3], [3, 4]]");
  EXPECT_EQ(mm->direct_kernel_ns, 22'000);
  EXPECT_EQ(mm->kernels, 2);
  EXPECT_EQ(mm->count, 1);   // one captured call, replayed twice
  EXPECT_EQ(mm->cpu_ns, 0);  // recording the graph is not the replay's CPU time
  const OpStats* relu = Find(ops, "aten::relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->direct_kernel_ns, 7'000);
}

TEST(GraphCaptureTest, KernelsOfInterleavedStreamsMatchByName) {
  // A graph on two streams: relu starts before gemm in the replay, the capture recorded gemm
  // first. Matched by name, each still gets its own op.
  TraceData replay = KinetoTraceBuilder()
                         .Runtime("hipGraphLaunch", 100, 5, 9)
                         .Kernel("relu", 110, 3, 9, /*stream=*/8)
                         .Kernel("gemm", 111, 10, 9, /*stream=*/7)
                         .Parse("replay.json");
  TraceData capture = Capture();
  GraphAttribution a = AttributeGraphReplays(replay, {&capture});
  EXPECT_EQ(a.kernels_attributed, 2u);
  std::vector<OpStats> ops = SummarizeOps(replay, ComputeOpKernelTimes(replay), false);
  ASSERT_NE(Find(ops, "aten::mm"), nullptr);
  EXPECT_EQ(Find(ops, "aten::mm")->direct_kernel_ns, 10'000);
  EXPECT_EQ(Find(ops, "aten::relu")->direct_kernel_ns, 3'000);
}

TEST(GraphCaptureTest, AGraphNoCaptureRecordedIsReported) {
  TraceData replay = KinetoTraceBuilder()
                         .CpuOp("decode_step", 90, 30)
                         .Runtime("hipGraphLaunch", 100, 5, 9)
                         .Kernel("softmax", 110, 3, 9)
                         .Parse("replay.json");
  TraceData capture = Capture();
  GraphAttribution a = AttributeGraphReplays(replay, {&capture});
  EXPECT_EQ(a.launches, 1u);
  EXPECT_EQ(a.launches_matched, 0u);
  EXPECT_EQ(a.kernels_attributed, 0u);
  ASSERT_EQ(replay.warnings.size(), 1u);
  EXPECT_NE(replay.warnings[0].find("1 of 1 graph launches (1 kernels) match no captured graph"),
            std::string::npos)
      << replay.warnings[0];
  // The kernel stays with the op around its launch.
  std::vector<OpStats> ops = SummarizeOps(replay, ComputeOpKernelTimes(replay), false);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].name, "decode_step");
}

// Through `trace report`: what the reader noticed in a capture trace (here, cut short) is said
// with the capture's name, and a trace without graph launches says the captures go unused.
TEST(GraphCaptureTest, CaptureTraceWarningsReachTheReport) {
  const std::string dir = ::testing::TempDir();
  const std::string replay = dir + "/gc_replay.json", plain = dir + "/gc_plain.json",
                    cut = dir + "/gc_capture_cut.json";
  KinetoTraceBuilder()
      .CpuOp("decode_step", 90, 30)
      .Runtime("hipGraphLaunch", 100, 5, 9)
      .Kernel("gemm", 110, 3, 9)
      .WriteTo(replay);
  KinetoTraceBuilder().CpuOp("aten::mm", 0, 10).Kernel("gemm", 2, 3, 1).WriteTo(plain);
  KinetoTraceBuilder capture;
  capture.Runtime("hipStreamBeginCapture", 0, 1, 1)
      .CpuOp("aten::mm", 2, 8, R"("Input Dims": [[2, 3], [3, 4]])")
      .Event(CapturedLaunch("gemm", 3, 2))
      .Runtime("hipStreamEndCapture", 20, 1, 5);
  const std::string json = capture.Json();
  std::ofstream(cut, std::ios::binary) << json.substr(0, json.size() - 40);
  ReportOptions options;
  options.capture_traces = {cut};
  const std::vector<RankReport> reports = AnalyzeTraceFiles({replay, plain}, options, 1);
  ASSERT_EQ(reports.size(), 2u);
  auto said = [](const RankReport& r, std::string_view text) {
    return std::any_of(r.warnings.begin(), r.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said(reports[0], "capture trace " + cut));
  EXPECT_FALSE(said(reports[0], "no graph launches"));
  EXPECT_TRUE(said(reports[1], "--capture: this trace has no graph launches"));
}

}  // namespace
}  // namespace sextant
