#include "trace/perf_sheets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "trace/gpu_timeline.h"
#include "trace/graph_capture.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

PerfSheet Sheet(const TraceData& trace, std::string_view name) {
  for (PerfSheet& sheet :
       SummarizePerfSheets(trace, TimelineEvents(trace), ComputeOpKernelTimes(trace), {}))
    if (sheet.tracelens_name == name) return sheet;
  ADD_FAILURE() << "no sheet " << name;
  return {};
}
PerfSheet GemmSheet(const TraceData& trace) { return Sheet(trace, "GEMM"); }

TEST(SummarizeCallsTest, PandasStatisticsOverNumbers) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, median 4.5, sample std sqrt(32 / 7).
  CallStats s = SummarizeCalls({2, 4, 4, 4, 5, 5, 7, 9, NAN});
  EXPECT_EQ(s.n, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(32.0 / 7));
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.sum, 40);
  CallStats one = SummarizeCalls({3});
  EXPECT_DOUBLE_EQ(one.median, 3);
  EXPECT_TRUE(std::isnan(one.std)) << "pandas' sample std of one value";
  EXPECT_TRUE(std::isnan(SummarizeCalls({NAN}).mean));
  // Calls in trace order, not sorted: median (4 + 7) / 2, and the extremes wherever they are.
  CallStats shuffled = SummarizeCalls({9, 2, 7, 4});
  EXPECT_DOUBLE_EQ(shuffled.median, 5.5);
  EXPECT_DOUBLE_EQ(shuffled.min, 2);
  EXPECT_DOUBLE_EQ(shuffled.max, 9);
  EXPECT_DOUBLE_EQ(SummarizeCalls({5, 1, 3}).median, 3);
  // Added left to right, 1.44 + 1.402 + 1.4 + 1.472 is 5.713999999999999 and 1.44 + 1.402 +
  // 1.472 + 1.4 is 5.714; compensated, both give the double nearest the four doubles' exact
  // sum, 5.7139999999999995 (Python's math.fsum).
  EXPECT_EQ(SummarizeCalls({1.44, 1.402, 1.4, 1.472}).sum, 5.7139999999999995);
  EXPECT_EQ(SummarizeCalls({1.44, 1.402, 1.472, 1.4}).sum, 5.7139999999999995);
}

// aten::linear -> aten::addmm twice with the same operands (10 and 30 µs of kernels), and an
// aten::mm with transposed B: the sheet has the primitives, not the linear around them.
TEST(GemmSheetTest, GroupsPrimitiveCallsByShapeLayoutAndDtype) {
  const std::string addmm_args =
      R"("Input Dims": [[64], [8, 32], [32, 64]], )"
      R"("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"], )"
      R"("Input Strides": [[1], [32, 1], [1, 32]], "Concrete Inputs": ["", "", ""])";
  const std::string mm_args =
      R"("Input Dims": [[128, 256], [256, 512]], "Input type": ["float", "float"], )"
      R"("Input Strides": [[256, 1], [1, 256]])";
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::linear", 0, 20, addmm_args)
                        .CpuOp("aten::addmm", 1, 10, addmm_args)
                        .Launch(2, 1, 1)
                        .CpuOp("aten::linear", 30, 20, addmm_args)
                        .CpuOp("aten::addmm", 31, 10, addmm_args)
                        .Launch(32, 1, 2)
                        .CpuOp("aten::mm", 60, 10, mm_args)
                        .Launch(61, 1, 3)
                        .Kernel("gemm_a", 5, 10, 1)
                        .Kernel("gemm_a", 40, 30, 2)
                        .Kernel("gemm_b", 80, 4, 3)
                        .Parse();
  auto groups = GemmSheet(trace).groups;
  ASSERT_EQ(groups.size(), 2u);
  const PerfSheetGroup& addmm = groups[0];
  EXPECT_EQ(addmm.name, "aten::addmm");
  // M, N, K, bias, stride_A, stride_B, dtype_A_B, B.
  EXPECT_EQ(addmm.params, (std::vector<std::string>{"8", "64", "32", "True", "(32, 1)", "(1, 32)",
                                                    "('c10::BFloat16', 'c10::BFloat16')", "1"}));
  EXPECT_EQ(addmm.input_dims, "[[64], [8, 32], [32, 64]]");
  EXPECT_EQ(addmm.concrete_inputs, "['', '', '']");
  // 2·8·64·32 + 8·64 FLOPs; (8·32 + 32·64 + 8·64 + 64)·2 bytes.
  EXPECT_DOUBLE_EQ(addmm.gflops, (2.0 * 8 * 64 * 32 + 8 * 64) / 1e9);
  EXPECT_DOUBLE_EQ(addmm.bytes, (8 * 32 + 32 * 64 + 8 * 64 + 64) * 2.0);
  EXPECT_EQ(addmm.kernel_us.n, 2);
  EXPECT_DOUBLE_EQ(addmm.kernel_us.sum, 40);
  EXPECT_DOUBLE_EQ(addmm.kernel_us.median, 20);
  EXPECT_DOUBLE_EQ(addmm.tflops.max, (2.0 * 8 * 64 * 32 + 8 * 64) / 1e12 / 10e-6);
  const PerfSheetGroup& mm = groups[1];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.params, (std::vector<std::string>{"128", "512", "256", "False", "(256, 1)",
                                                 "(1, 256)", "('float', 'float')", "1"}));
  EXPECT_TRUE(std::isnan(mm.kernel_us.std));
}

TEST(GemmSheetTest, CallsWithoutShapesAreLeftOut) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mm", 0, 10)
                        .Launch(1, 1, 1)
                        .Kernel("gemm", 5, 10, 1)
                        .Parse();
  EXPECT_TRUE(GemmSheet(trace).groups.empty());
}

// aiter's fused residual add + RMSNorm on x[8192, 2880]: RMSNorm's rows·(2C + 2) + 2·elements
// FLOPs plus one per element for the add; input and residual read, output and new residual
// written, the weight read once. TraceLens's vLLM report prints 0.117981184 GFLOP and
// 180.0054931640625 MB for this call.
TEST(RmsNormSheetTest, AiterResidualAddRmsNorm) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aiter::rmsnorm2d_fwd_with_add_ck", 0, 10,
                 R"("Input Dims": [[8192, 2880], [8192, 2880], [8192, 2880], [8192, 2880], )"
                 R"([2880], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", )"
                 R"("c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"], )"
                 R"("Input Strides": [[2880, 1], [2880, 1], [2880, 1], [2880, 1], [1], [], []])")
          .Launch(1, 1, 1)
          .Kernel("rmsnorm_kernel", 5, 10, 1)
          .Parse();
  const PerfSheet sheet = Sheet(trace, "RMSNorm_fwd");
  ASSERT_EQ(sheet.groups.size(), 1u);
  const PerfSheetGroup& g = sheet.groups[0];
  const double elems = 8192.0 * 2880;
  EXPECT_DOUBLE_EQ(g.gflops * 1e9, 8192.0 * (2 * 2880 + 2) + 2 * elems + elems);
  EXPECT_NEAR(g.gflops, 0.117981184, 1e-12);
  EXPECT_DOUBLE_EQ(g.bytes, (4 * elems + 2880) * 2);
  EXPECT_NEAR(g.bytes / (1 << 20), 180.0054931640625, 1e-9);
  EXPECT_EQ(g.params[0], "(8192, 2880)");
  EXPECT_EQ(g.params[1], "('c10::BFloat16', None)");
  EXPECT_EQ(g.params[4], "2880");
}

// SGLang's rotary embedding on 32 tokens: query 4096 wide and key 1024 wide in heads of 128
// (Concrete Inputs[3]) make 32 + 8 heads, all 128 lanes rotated: 163840 elements, 3 FLOPs and
// 4 bytes (bf16 read and write) each, as TraceLens's sglang report prints.
TEST(RopeSheetTest, SglangRotaryEmbedding) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("sgl_kernel::rotary_embedding", 0, 10,
                 R"("Input Dims": [[32], [32, 4096], [32, 1024], [], [40960, 128], []], )"
                 R"("Input type": ["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", )"
                 R"("float", "Scalar"], "Concrete Inputs": ["", "", "", "128", "", "True"])")
          .Launch(1, 1, 1)
          .Kernel("rotary_embedding_kernel", 5, 5, 1)
          .Parse();
  const PerfSheet sheet = Sheet(trace, "RoPE_fwd");
  ASSERT_EQ(sheet.groups.size(), 1u);
  EXPECT_EQ(sheet.groups[0].params[0], "163840");
  EXPECT_DOUBLE_EQ(sheet.groups[0].gflops, 3 * 163840 / 1e9);
  EXPECT_DOUBLE_EQ(sheet.groups[0].bytes, 2 * 163840 * 2.0);
}

// vLLM's unified attention over a step of one prefill chunk (4 new tokens after 2 cached: sq 4,
// sk 6) and two decodes (caches of 4 and 6 tokens: sq 1 + 1, sk 5 + 5), 4 query and 2 K/V
// heads of 8. TraceLens's model, by hand: QK^T and PV each 2 FLOPs per multiply-add over
// H_Q (2 sq sk - sq^2) for the chunk and H_Q sq sk for the decodes:
//   4 (2 x 24 - 16) x (8 + 8) + 2 x 4 x 10 x (8 + 8) = 2048 + 1280 = 3328 FLOPs;
// bytes: 6 new tokens' Q, O, K and V (4 x 16 + 2 x 16 = 96 elements each) and 10 cached tokens'
// K and V (2 x 16 each), bf16: (6 x 96 + 10 x 32) x 2 = 1792.
TEST(InferenceAttentionSheetTest, VllmStepFromItsAnnotation) {
  const std::string args =
      R"("Input Dims": [[6, 4, 8], [6, 2, 8], [6, 2, 8], [6, 4, 8]], )"
      R"("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])";
  TraceData trace =
      KinetoTraceBuilder()
          .Annotation("execute_6_context_1(sq4sk6sqsq16sqsk24)_generation_2(sq2sk10sqsq2sqsk10)", 0,
                      100)
          .CpuOp("vllm::unified_attention_with_output", 10, 20, args)
          .Launch(11, 1, 1)
          .Kernel("kernel_unified_attention_2d", 15, 8, 1)
          // Outside any step: no statistics, no row (TraceLens has no estimate).
          .CpuOp("vllm::unified_attention_with_output", 200, 20, args)
          .Parse();
  const PerfSheet sheet = Sheet(trace, "InferenceAttention_fwd");
  ASSERT_EQ(sheet.groups.size(), 1u);
  ASSERT_EQ(sheet.params.size(), 22u);
  EXPECT_EQ(sheet.params.back(), "dtype_KV");
  const PerfSheetGroup& g = sheet.groups[0];
  EXPECT_DOUBLE_EQ(g.gflops * 1e9, 3328);
  EXPECT_DOUBLE_EQ(g.bytes, 1792);
  EXPECT_EQ(g.kernel_us.n, 1);
  const std::vector<std::string> want = {
      "1",    "6", "4", "2",  "2",  "6", "2",  "8", "8",  "0.0",           "False",
      "True", "4", "6", "16", "24", "2", "10", "2", "10", "c10::BFloat16", "c10::BFloat16"};
  EXPECT_EQ(g.params, want);
}

// SGLang's paged decode attention (2 requests with caches of 5: g_sk 10, K/V caches of pages
// [100, 16, 2, 8]) and its store_cache ([2, 16] bf16 rows: 4 x 32 x 2 = 256 bytes) share one
// sheet. FLOPs 2 x 4 x 10 x 16 = 1280; bytes (2 x 96 + 8 x 32) x 2 = 896. Columns are the
// union in the order the calls come (store_cache's first), and a column a row lacks prints
// its whole numbers as floats, as pandas does.
TEST(InferenceAttentionSheetTest, SglangPagedDecodeAndStoreCacheShareTheSheet) {
  TraceData trace =
      KinetoTraceBuilder()
          .Annotation("step[DECODE bs=2 g_sq=2 g_sqsq=2 g_sqsk=10 g_sk=10]", 0, 100)
          .CpuOp("sglang::store_cache", 5, 3,
                 R"("Input Dims": [[2, 16], [2, 16], [100, 16], [100, 16], [2]], )"
                 R"("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", )"
                 R"("c10::BFloat16", "long int"])")
          .CpuOp("sglang_profiler::attention_paged_attention_ragged", 10, 20,
                 R"("Input Dims": [[2, 4, 8], [2, 4, 8], [2, 4, 8], [100, 16, 2, 8], )"
                 R"([100, 16, 2, 8]], "Input type": ["c10::BFloat16", "c10::BFloat16", )"
                 R"("c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])")
          .Launch(11, 1, 1)
          .Kernel("paged_attention_ll4mi_QKV_mfma16_kernel", 15, 8, 1)
          // Under a native annotation (no sums): left out.
          .Annotation("step[DECODE bs=2]", 200, 100)
          .CpuOp("sglang_profiler::attention_paged_attention_ragged", 210, 20,
                 R"("Input Dims": [[2, 4, 8], [2, 4, 8], [2, 4, 8], [100, 16, 2, 8], )"
                 R"([100, 16, 2, 8]], "Input type": ["c10::BFloat16", "c10::BFloat16", )"
                 R"("c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])")
          .Parse();
  const PerfSheet sheet = Sheet(trace, "InferenceAttention_fwd");
  ASSERT_EQ(sheet.groups.size(), 2u);
  ASSERT_EQ(sheet.params.size(), 24u);
  EXPECT_EQ(sheet.params[0], "op_shape");
  EXPECT_EQ(sheet.params[3], "B");
  EXPECT_EQ(sheet.params.back(), "dtype_Q");
  const PerfSheetGroup& paged = sheet.groups[0];  // the one with kernel time
  EXPECT_EQ(paged.name, "sglang_profiler::attention_paged_attention_ragged");
  EXPECT_DOUBLE_EQ(paged.gflops * 1e9, 1280);
  EXPECT_DOUBLE_EQ(paged.bytes, 896);
  EXPECT_EQ(paged.params[0], "");
  EXPECT_EQ(paged.params[3], "1.0");
  EXPECT_EQ(paged.params[8], "10.0");    // N_KV = c_sk + g_sk
  EXPECT_EQ(paged.params[13], "False");  // causal
  EXPECT_EQ(paged.params[14], "True");   // flash_impl
  const PerfSheetGroup& store = sheet.groups[1];
  EXPECT_EQ(store.params[0], "(2, 16)");
  EXPECT_EQ(store.params[1], "32.0");
  EXPECT_EQ(store.params[2], "c10::BFloat16");
  EXPECT_EQ(store.params[3], "");
  EXPECT_DOUBLE_EQ(store.gflops, 0);
  EXPECT_DOUBLE_EQ(store.bytes, 256);
}

// A captured SGLang attention call replayed by two graph launches, each in its own decode step
// (caches of 10 and of 1000 tokens for the 2 requests): one row per step, as TraceLens merges
// the capture under each launch. FLOPs 2 x 4 x g_sqsk x 16: 1280 and 128000; each row the
// kernel time of its own replay (10 and 12 us).
TEST(InferenceAttentionSheetTest, EachGraphReplayTakesItsOwnStep) {
  const std::string launch =
      R"({"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, )"
      R"("ts": 3, "dur": 1, "args": {"correlation": 2, "kernel": "pa_kernel"}})";
  TraceData capture =
      KinetoTraceBuilder()
          .Runtime("hipStreamBeginCapture", 0, 1, 1)
          .CpuOp("sglang_profiler::attention_paged_attention_ragged", 2, 8,
                 R"("Input Dims": [[2, 4, 8], [2, 4, 8], [2, 4, 8], [100, 16, 2, 8], )"
                 R"([100, 16, 2, 8]], "Input type": ["c10::BFloat16", "c10::BFloat16", )"
                 R"("c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])")
          .Event(launch)
          .Runtime("hipStreamEndCapture", 20, 1, 5)
          .Parse("capture.json");
  TraceData replay =
      KinetoTraceBuilder()
          .Annotation("step[DECODE bs=2 g_sq=2 g_sqsq=2 g_sqsk=10 g_sk=10]", 90, 60)
          .Runtime("hipGraphLaunch", 100, 5, 9)
          .Annotation("step[DECODE bs=2 g_sq=2 g_sqsq=2 g_sqsk=1000 g_sk=1000]", 190, 60)
          .Runtime("hipGraphLaunch", 200, 5, 10)
          .Kernel("pa_kernel", 110, 10, 9)
          .Kernel("pa_kernel", 210, 12, 10)
          .Parse("replay.json");
  ASSERT_EQ(AttributeGraphReplays(replay, {&capture}).kernels_attributed, 2u);
  const PerfSheet sheet = Sheet(replay, "InferenceAttention_fwd");
  ASSERT_EQ(sheet.groups.size(), 2u);
  const PerfSheetGroup& long_cache = sheet.groups[0];  // 12 us
  EXPECT_EQ(long_cache.params[5], "1000");             // N_KV
  EXPECT_DOUBLE_EQ(long_cache.gflops * 1e9, 128000);
  EXPECT_DOUBLE_EQ(long_cache.kernel_us.sum, 12);
  const PerfSheetGroup& short_cache = sheet.groups[1];
  EXPECT_EQ(short_cache.params[5], "10");
  EXPECT_DOUBLE_EQ(short_cache.gflops * 1e9, 1280);
  EXPECT_DOUBLE_EQ(short_cache.kernel_us.sum, 10);
}

// aiter's fmha_v3_varlen_fwd takes V's head size from v (MLA: Q/K heads of 192, V of 128), and
// an fp8 K/V (dtype_KV, one byte) prices the cached tokens at one byte. One prefill chunk of 3
// after 1 cached token (sq 3, sk 4, sqsq 9, sqsk 12), 2 query and 1 K/V heads:
//   FLOPs 2 x (24 - 9) x (192 + 128) = 9600;
//   bytes: 3 new tokens x (2 x 320 + 1 x 320) x 2 + 1 cached x 320 x 1 = 6080.
// A step with no tokens at all has no estimate (TraceLens raises).
TEST(InferenceAttentionSheetTest, AiterVarlenTakesVsHeadSizeAndTheCacheDtype) {
  const std::string args =
      R"("Input Dims": [[3, 2, 192], [3, 1, 192], [3, 1, 128]], )"
      R"("Input type": ["c10::BFloat16", "c10::Float8_e4m3fnuz", "c10::BFloat16"])";
  TraceData trace =
      KinetoTraceBuilder()
          .Annotation("execute_3_context_1(sq3sk4sqsq9sqsk12)_generation_0(sq0sk0sqsq0sqsk0)", 0,
                      50)
          .CpuOp("aiter::fmha_v3_varlen_fwd", 10, 20, args)
          .Annotation("execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", 100,
                      50)
          .CpuOp("aiter::fmha_v3_varlen_fwd", 110, 20, args)
          .Parse();
  const PerfSheet sheet = Sheet(trace, "InferenceAttention_fwd");
  ASSERT_EQ(sheet.groups.size(), 1u);
  const PerfSheetGroup& g = sheet.groups[0];
  EXPECT_EQ(g.params[8], "128");  // d_h_v
  EXPECT_EQ(g.params.back(), "c10::Float8_e4m3fnuz");
  EXPECT_DOUBLE_EQ(g.gflops * 1e9, 9600);
  EXPECT_DOUBLE_EQ(g.bytes, 6080);
}

// Families sharing a sheet must be listed together: each sheet is named once.
TEST(PerfSheetsTest, EverySheetIsNamedOnce) {
  std::set<std::string_view> seen;
  for (const auto& [table, sheet] : PerfSheetNames()) {
    EXPECT_TRUE(seen.insert(sheet).second) << sheet;
  }
}

// vLLM's unfused MoE on 16 tokens of hidden size 64, 8 experts, top-2 (the TopK op's second
// concrete input): the first matmul_ogs kernel (fused SwiGLU, MXFP4 weights) is the up
// projection, the second the down projection, priced as TraceLens does with the intermediate
// size taken as 64. Experts in use: 8 (1 - 0.75^16) = 7.919819... By hand:
//   up:   2 x 16 x 64 x 64 x 2 x 2 = 524288 FLOPs; 16 x 64 x 2 + 7.9198 x 2 x 64 x 64 x 0.5 +
//         16 x 64 x 2 x 2 bytes;
//   down: 262144 FLOPs; 16 x 64 x 2 x 2 + 7.9198 x 64 x 64 x 0.5 + 16 x 64 x 2 bytes.
// A MoE call whose kernels name no FP4/FP8 weights has no byte count in TraceLens: no row.
TEST(MoeUnfusedSheetTest, MatmulOgsKernelsBecomeUpAndDownPseudoOps) {
  const std::string moe_args = R"("Input Dims": [[16, 64], [16, 8], [], []], )"
                               R"("Input type": ["c10::BFloat16", "c10::BFloat16", "", ""])";
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("vllm::moe_forward", 0, 100, moe_args)
          .CpuOp("TopK", 2, 5, R"("Input Dims": [[16, 8], []], "Concrete Inputs": ["", "2"])")
          .Launch(10, 1, 1)
          .Launch(20, 1, 2)
          .CpuOp("vllm::moe_forward", 200, 100, moe_args)
          .Launch(210, 1, 3)
          .Kernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu", 30, 12, 1)
          .Kernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1", 50, 6, 2)
          .Kernel("_matmul_ogs_NNT_bf16xbf16xbf16_128x128x128x1", 230, 6, 3)
          .Parse();
  const PerfSheet sheet = Sheet(trace, "MoE_unfused_fwd");
  ASSERT_EQ(sheet.groups.size(), 2u);
  const double active = 8 * (1 - 0.01002259575761855);  // 0.75^16
  const PerfSheetGroup& up = sheet.groups[0];           // 12 us of kernel time against 6
  EXPECT_EQ(up.name, "pseudo_op::moe_triton_unfused_up");
  const std::vector<std::string> up_params = {"16", "64", "64", "8", "2", "True", "c10::BFloat16",
                                              "FP4"};
  EXPECT_EQ(up.params, up_params);
  EXPECT_DOUBLE_EQ(up.gflops * 1e9, 524288);
  EXPECT_NEAR(up.bytes, 2048 + active * 4096 + 4096, 1e-9);
  EXPECT_DOUBLE_EQ(up.kernel_us.sum, 12);
  const PerfSheetGroup& down = sheet.groups[1];
  EXPECT_EQ(down.name, "pseudo_op::moe_triton_unfused_down");
  EXPECT_EQ(down.params[5], "False");
  EXPECT_DOUBLE_EQ(down.gflops * 1e9, 262144);
  EXPECT_NEAR(down.bytes, 4096 + active * 2048 + 2048, 1e-9);
  EXPECT_DOUBLE_EQ(down.kernel_us.sum, 6);
}

// aten::copy_(dst [4, 8] bf16, src [4, 8] float): 32 elements read as fp32 and written as
// bf16; aten::sigmoid(x [2, 3] half) has no output argument: in and out are half.
TEST(UnaryElementwiseSheetTest, ShapeDtypesStridesAndBytes) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::copy_", 0, 10,
                 R"("Input Dims": [[4, 8], [4, 8], []], "Input type": ["c10::BFloat16", )"
                 R"("float", "Scalar"], "Input Strides": [[8, 1], [1, 4], []])")
          .Launch(1, 1, 1)
          .CpuOp("aten::sigmoid", 20, 10,
                 R"("Input Dims": [[2, 3]], "Input type": ["c10::Half"], )"
                 R"("Input Strides": [[3, 1]])")
          .Launch(21, 1, 2)
          .Kernel("copy", 5, 4, 1)
          .Kernel("sigmoid", 25, 2, 2)
          .Parse();
  PerfSheet sheet = Sheet(trace, "UnaryElementwise");
  ASSERT_EQ(sheet.groups.size(), 2u);
  const PerfSheetGroup& copy = sheet.groups[0];
  EXPECT_EQ(copy.params,
            (std::vector<std::string>{"(4, 8)", "('c10::BFloat16', 'float')", "(8, 1)", "(1, 4)"}));
  EXPECT_DOUBLE_EQ(copy.gflops, 32 / 1e9);
  EXPECT_DOUBLE_EQ(copy.bytes, 32 * 2 + 32 * 4);  // TraceLens: input dtype first, then output
  const PerfSheetGroup& sigmoid = sheet.groups[1];
  EXPECT_EQ(sigmoid.params,
            (std::vector<std::string>{"(2, 3)", "('c10::Half', None)", "(3, 1)", ""}));
  EXPECT_DOUBLE_EQ(sigmoid.bytes, 6 * 2 + 6 * 2);
}

// aten::add(x [8, 1, 16] float, y [4, 16] bf16, alpha): broadcast output [8, 4, 16] in the
// wider dtype (4 bytes); aten::mul by a Python scalar counts it as 4 bytes (TraceLens's dtype
// table); a bool operand has no size there; a non-broadcastable pair is left out.
TEST(BinaryElementwiseSheetTest, BroadcastOutputAndItsDtype) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::add", 0, 10,
                 R"("Input Dims": [[8, 1, 16], [4, 16], []], "Input type": ["float", )"
                 R"("c10::BFloat16", "Scalar"], "Input Strides": [[16, 16, 1], [16, 1], []])")
          .Launch(1, 1, 1)
          .CpuOp("aten::mul", 20, 10,
                 R"("Input Dims": [[5], []], "Input type": ["float", "Scalar"], )"
                 R"("Input Strides": [[1], []])")
          .Launch(21, 1, 2)
          .CpuOp("aten::mul", 40, 10,
                 R"("Input Dims": [[5], [3]], "Input type": ["float", "float"], )"
                 R"("Input Strides": [[1], [1]])")
          .Launch(41, 1, 3)
          .CpuOp("aten::div", 60, 10,
                 R"("Input Dims": [[5], [5]], "Input type": ["float", "bool"], )"
                 R"("Input Strides": [[1], [1]])")
          .Launch(61, 1, 4)
          .Kernel("add", 5, 8, 1)
          .Kernel("mul", 25, 2, 2)
          .Kernel("mul", 45, 2, 3)
          .Kernel("div", 65, 1, 4)
          .Parse();
  PerfSheet sheet = Sheet(trace, "BinaryElementwise");
  ASSERT_EQ(sheet.groups.size(), 3u);
  const PerfSheetGroup& add = sheet.groups[0];
  EXPECT_EQ(add.params,
            (std::vector<std::string>{"(8, 1, 16)", "(4, 16)", "('float', 'c10::BFloat16', None)",
                                      "(16, 16, 1)", "(16, 1)", ""}));
  EXPECT_DOUBLE_EQ(add.gflops, 8 * 4 * 16 / 1e9);
  EXPECT_DOUBLE_EQ(add.bytes, 128 * 4 + 64 * 2 + 512 * 4);
  const PerfSheetGroup& mul = sheet.groups[1];
  EXPECT_EQ(mul.params[1], "()");
  EXPECT_DOUBLE_EQ(mul.bytes, 5 * 4 + 1 * 4 + 5 * 4);
  const PerfSheetGroup& div = sheet.groups[2];
  EXPECT_TRUE(std::isnan(div.bytes));
  EXPECT_TRUE(std::isnan(div.tbps.mean));
}

// One call of each, priced by hand from TraceLens's formulas (perf_sheets.h).
TEST(PerfSheetsTest, AttentionReduceNormAndConvolution) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::_scaled_dot_product_flash_attention", 0, 10,
                 R"("Input Dims": [[2, 4, 128, 64], [2, 4, 128, 64], [2, 4, 128, 64], [], [], )"
                 R"([], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", )"
                 R"("Scalar", "Scalar", "Scalar", "Scalar"], "Input Strides": [[], [], [], [], )"
                 R"([], [], []], "Concrete Inputs": ["", "", "", "0.", "True", "False", ""])")
          .Launch(1, 1, 1)
          .CpuOp("aten::cumsum", 20, 10,
                 R"("Input Dims": [[4, 8], [], []], "Input type": ["float", "Scalar", ""], )"
                 R"("Input Strides": [[8, 1], [], []], "Concrete Inputs": ["", "1", ""])")
          .Launch(21, 1, 2)
          .CpuOp("aten::layer_norm", 40, 10,
                 R"("Input Dims": [[2, 8, 16], [], [16], [16], [], []], "Input type": )"
                 R"(["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"], )"
                 R"("Input Strides": [[128, 16, 1], [], [1], [1], [], []], )"
                 R"("Concrete Inputs": ["", "[16]", "", "", "1e-05", "True"])")
          .Launch(41, 1, 3)
          .CpuOp("aten::convolution", 60, 10,
                 R"("Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []], )"
                 R"("Input type": ["float", "float", "", "ScalarList", "ScalarList", )"
                 R"("ScalarList", "Scalar", "ScalarList", "Scalar"], "Input Strides": )"
                 R"([[192, 64, 8, 1], [27, 9, 3, 1], [], [], [], [], [], [], []], )"
                 R"("Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", )"
                 R"("[0, 0]", "1"])")
          .Launch(61, 1, 4)
          .Kernel("attn", 5, 10, 1)
          .Kernel("scan", 25, 2, 2)
          .Kernel("ln", 45, 3, 3)
          .Kernel("conv", 65, 4, 4)
          .Parse();
  const PerfSheet sdpa = Sheet(trace, "SDPA_fwd");
  ASSERT_EQ(sdpa.groups.size(), 1u);
  EXPECT_EQ(sdpa.groups[0].params,
            (std::vector<std::string>{"2", "128", "4", "128", "4", "64", "64", "0.0", "True",
                                      "True", "('c10::BFloat16', 'c10::BFloat16')"}));
  // QK and PV: 2·B·H·N·N·d each, halved for causal; Q, K, V, O at 2 bytes.
  EXPECT_DOUBLE_EQ(sdpa.groups[0].gflops, 2.0 * 2 * 2 * 4 * 128 * 128 * 64 / 2 / 1e9);
  EXPECT_DOUBLE_EQ(sdpa.groups[0].bytes, 4.0 * 2 * 128 * 4 * 64 * 2);

  const PerfSheet reduce = Sheet(trace, "Reduce_fwd");
  ASSERT_EQ(reduce.groups.size(), 1u);
  EXPECT_EQ(reduce.groups[0].params,
            (std::vector<std::string>{"32", "32", "('float', None)", "sum"}));
  EXPECT_DOUBLE_EQ(reduce.groups[0].bytes, (32 + 32) * 4.0);

  const PerfSheet norm = Sheet(trace, "Normalization");
  ASSERT_EQ(norm.groups.size(), 1u);
  EXPECT_EQ(norm.params.size(), 8u) << "no backward op: no output_mask column";
  EXPECT_EQ(norm.groups[0].params,
            (std::vector<std::string>{"(2, 8, 16)", "('c10::BFloat16', None)", "(128, 16, 1)", "",
                                      "16", "True", "True", "True"}));
  // Channel work 3C twice, training statistics 3n, normalise 2n; activations in and out plus
  // six per-channel tensors (mean, variance, scale, shift, two running statistics).
  EXPECT_DOUBLE_EQ(norm.groups[0].gflops, (3 * 16 + 3 * 256 + 3 * 16 + 2 * 256) / 1e9);
  EXPECT_DOUBLE_EQ(norm.groups[0].bytes, 2 * 256 * 2.0 + 6 * 16 * 2.0);

  const PerfSheet conv = Sheet(trace, "CONV_fwd");
  ASSERT_EQ(conv.groups.size(), 1u);
  EXPECT_EQ(conv.groups[0].params,
            (std::vector<std::string>{
                "conv2d", "(1, 3, 8, 8)", "(4, 3, 3, 3)", "('float', 'float')", "(192, 64, 8, 1)",
                "(27, 9, 3, 1)", "False", "(1, 1)", "(1, 1)", "(1, 1)", "False", "(0, 0)", "1"}));
  // Output (1, 4, 8, 8): 256 elements of 2·3·3·3 FLOPs; input 192, filter 108, output 256.
  EXPECT_DOUBLE_EQ(conv.groups[0].gflops, 256 * 54 / 1e9);
  EXPECT_DOUBLE_EQ(conv.groups[0].bytes, (192 + 108 + 256) * 4.0);
}

// convolution_backward(grad_out [2, 4, 8, 8], x [2, 3, 8, 8], w [4, 3, 3, 3], bias_sizes [],
// stride 1, padding 1): input gradient 2·prod(w[1:]) per output-gradient element, weight
// gradient 2·N·H·W per filter element; bytes of both at 2 bytes.
TEST(PerfSheetsTest, ConvolutionBackward) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::convolution_backward", 0, 10,
                 R"("Input Dims": [[2, 4, 8, 8], [2, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], )"
                 R"([], [], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", )"
                 R"("c10::BFloat16", "", "", "", "", "", "", "", ""], "Input Strides": )"
                 R"([[256, 64, 8, 1], [192, 64, 8, 1], [27, 9, 3, 1], [], [], [], [], [], [], )"
                 R"([], []], "Concrete Inputs": ["", "", "", "[0]", "[1, 1]", "[1, 1]", )"
                 R"("[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"])")
          .Launch(1, 1, 1)
          .Kernel("dgrad", 5, 10, 1)
          .Parse();
  const PerfSheet sheet = Sheet(trace, "CONV_bwd");
  ASSERT_EQ(sheet.groups.size(), 1u);
  EXPECT_EQ(sheet.groups[0].params[1], "(2, 3, 8, 8)");
  EXPECT_EQ(sheet.groups[0].params[6], "[]");
  const double out = 2 * 4 * 8 * 8, x = 2 * 3 * 8 * 8, w = 4 * 3 * 3 * 3;
  EXPECT_DOUBLE_EQ(sheet.groups[0].gflops, (out * 2 * 27 + w * 2 * (2 * 8 * 8)) / 1e9);
  EXPECT_DOUBLE_EQ(sheet.groups[0].bytes, 2 * (out + w + x) * 2);
}

// A hostile trace's sizes beyond int64 are printed, not cast (which would be undefined).
TEST(PerfSheetsTest, SizesBeyondInt64AreStillPrinted) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::mm", 0, 10,
                 R"("Input Dims": [[9223372036854775807, 4], [4, 9223372036854775807]], )"
                 R"("Input type": ["float", "float"], "Input Strides": [[4, 1], [1, 4]])")
          .Launch(1, 1, 1)
          .CpuOp("aten::sum", 20, 10,
                 R"("Input Dims": [[9223372036854775807, 9223372036854775807]], )"
                 R"("Input type": ["float"], "Input Strides": [[1, 1]])")
          .Launch(21, 1, 2)
          .Kernel("gemm", 5, 10, 1)
          .Kernel("sum", 25, 1, 2)
          .Parse();
  const PerfSheet gemm = Sheet(trace, "GEMM");
  ASSERT_EQ(gemm.groups.size(), 1u);
  EXPECT_EQ(gemm.groups[0].params[0], "9223372036854775808");  // the double nearest 2^63 - 1
  const PerfSheet reduce = Sheet(trace, "Reduce_fwd");
  ASSERT_EQ(reduce.groups.size(), 1u);
  EXPECT_EQ(reduce.groups[0].params[0], "9223372036854775808");  // saturated at INT64_MAX
}

// aten::mean over a [4, 8] bf16 tensor (sequence 5); its backward node on the autograd thread
// launches two kernels (10 µs under an aten::div inside MeanBackward1, 4 µs directly under
// MeanBackward1). Reduce_bwd has the forward call's parameters, TraceLens's backward model
// (32 FLOPs; (32 + 1) x 2 bytes) and the backward node's 14 µs; Reduce_fwd keeps the
// forward's own 3 µs.
TEST(BackwardSheetTest, ReduceBackwardTakesTheBackwardNodesKernels) {
  const std::string mean_args =
      R"("Input Dims": [[4, 8], [], [], []], )"
      R"("Input type": ["c10::BFloat16", "ScalarList", "Scalar", ""], "Sequence number": 5)";
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mean", 10, 10, mean_args)
                        .Launch(11, 1, 1)
                        .CpuOp("autograd::engine::evaluate_function: MeanBackward1", 100, 30,
                               R"("Sequence number": 5)", 2)
                        .CpuOp("MeanBackward1", 101, 20, R"("Sequence number": 5)", 2)
                        .CpuOp("aten::div", 102, 5, "", 2)
                        .Launch(103, 1, 2, 2)
                        .Launch(110, 1, 3, 2)
                        .Kernel("reduce_kernel", 20, 3, 1)
                        .Kernel("div_kernel", 150, 10, 2)
                        .Kernel("mul_kernel", 160, 4, 3)
                        .Parse();
  const PerfSheet forward = Sheet(trace, "Reduce_fwd");
  ASSERT_EQ(forward.groups.size(), 1u);
  EXPECT_DOUBLE_EQ(forward.groups[0].kernel_us.sum, 3);
  const PerfSheet backward = Sheet(trace, "Reduce_bwd");
  ASSERT_EQ(backward.groups.size(), 1u);
  const PerfSheetGroup& g = backward.groups[0];
  EXPECT_EQ(g.name, "aten::mean");
  EXPECT_EQ(g.params, (std::vector<std::string>{"32", "1", "('c10::BFloat16', None)", "mean"}));
  EXPECT_DOUBLE_EQ(g.gflops, 32e-9);
  EXPECT_DOUBLE_EQ(g.bytes, 66);
  EXPECT_EQ(g.kernel_us.n, 1);
  EXPECT_DOUBLE_EQ(g.kernel_us.sum, 14);
  EXPECT_DOUBLE_EQ(g.tbps.mean, 66 / 1e12 / 14e-6);
}

// Flash SDPA with Q [1, 2, 4, 8] and K, V [1, 1, 4, 8] (two query heads per K/V head), not
// causal; an op nested in it has a backward node of its own, whose kernel overlaps the SDPA
// node's on another stream. SDPA_bwd, by hand from TraceLens's SDPA.flops_bwd: recomputed
// Q K^T 2·2·4·4·8 = 512, dV 512 + 4·8·(2 - 1) = 544, dP 512, dQ 512, dK 544: 2624 FLOPs;
// bytes (Q 64 + K 32 + V 32 + dO 64 + dQ 64 + dK 32 + dV 32) x 2 = 640. Kernel time is the
// union of both nodes' kernels, [200, 210] and [205, 220]: 20 µs, not 25.
TEST(BackwardSheetTest, SdpaBackwardIsPricedByTheBackwardModelOverItsNodesKernels) {
  const std::string sdpa_args =
      R"("Input Dims": [[1, 2, 4, 8], [1, 1, 4, 8], [1, 1, 4, 8], [], [], []], )"
      R"("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", ""], )"
      R"("Concrete Inputs": ["", "", "", "0.0", "False", ""], "Sequence number": 7)";
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::_scaled_dot_product_flash_attention", 10, 20, sdpa_args)
          .CpuOp("aten::_flash_attention_forward", 12, 5, R"("Sequence number": 8)")
          .CpuOp("autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0",
                 100, 20, R"("Sequence number": 7)", 2)
          .Launch(101, 1, 10, 2)
          .CpuOp("autograd::engine::evaluate_function: FlashAttentionForwardBackward0", 130, 20,
                 R"("Sequence number": 8)", 2)
          .Launch(131, 1, 11, 2)
          .Kernel("attn_bwd_a", 200, 10, 10, 7)
          .Kernel("attn_bwd_b", 205, 15, 11, 8)
          .Parse();
  const PerfSheet backward = Sheet(trace, "SDPA_bwd");
  ASSERT_EQ(backward.groups.size(), 1u);
  const PerfSheetGroup& g = backward.groups[0];
  EXPECT_EQ(g.name, "aten::_scaled_dot_product_flash_attention");
  ASSERT_EQ(g.params.size(), 11u);
  // B, N_Q, H_Q, N_KV, H_KV, d_h_qk, d_h_v, dropout, causal, flash_impl.
  EXPECT_EQ(std::vector<std::string>(g.params.begin(), g.params.begin() + 10),
            (std::vector<std::string>{"1", "4", "2", "4", "1", "8", "8", "0.0", "False", "True"}));
  EXPECT_DOUBLE_EQ(g.gflops, 2624e-9);
  EXPECT_DOUBLE_EQ(g.bytes, 640);
  EXPECT_DOUBLE_EQ(g.kernel_us.sum, 20);
  EXPECT_TRUE(Sheet(trace, "Reduce_bwd").groups.empty());
}

// Memory-efficient (not flash) causal attention with three query heads on two K/V heads
// (H_Q // H_KV - 1 = 0 extra head sums): no recomputed Q K^T; dV, dP, dQ, dK each
// 2·3·4·4·8 = 768, halved for causal: 1536 FLOPs. Bytes: Q 96 + K 64 + V 64 + dO 96 + dQ 96
// + dK 64 + dV 64 = 544 elements x 2.
TEST(BackwardSheetTest, CausalEfficientAttentionBackward) {
  const std::string sdpa_args =
      R"("Input Dims": [[1, 3, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], [], [], [], [], []], )"
      R"("Input type": ["float", "float", "float", "", "Scalar", "Scalar", "Scalar", ""], )"
      R"("Concrete Inputs": ["", "", "", "", "True", "0.0", "True", ""], "Sequence number": 3)";
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::_scaled_dot_product_efficient_attention", 10, 20, sdpa_args)
          .CpuOp("autograd::engine::evaluate_function: ScaledDotProductEfficientAttentionBackward0",
                 100, 20, R"("Sequence number": 3)", 2)
          .Launch(101, 1, 1, 2)
          .Kernel("attn_bwd", 200, 8, 1)
          .Parse();
  const PerfSheet backward = Sheet(trace, "SDPA_bwd");
  ASSERT_EQ(backward.groups.size(), 1u);
  const PerfSheetGroup& g = backward.groups[0];
  EXPECT_EQ(g.params[8], "True");   // causal
  EXPECT_EQ(g.params[9], "False");  // flash_impl
  EXPECT_DOUBLE_EQ(g.gflops, 1536e-9);
  EXPECT_DOUBLE_EQ(g.bytes, 1088);
  EXPECT_DOUBLE_EQ(g.kernel_us.sum, 8);
}

// 2000 reductions nested in one another, each with a backward node and one 1 µs kernel: the
// search above each op stops 256 levels up, so the sheet is built in bounded work; every call
// has a row, and the innermost call's time is its own node's kernel.
TEST(BackwardSheetTest, DeeplyNestedCallsStayBounded) {
  constexpr int kDepth = 2000;
  KinetoTraceBuilder b;
  const std::string args = R"("Input Dims": [[4]], "Input type": ["float"], "Sequence number": )";
  for (int i = 0; i < kDepth; ++i)
    b.CpuOp("aten::sum", 10 + i * 0.001, 100 - i * 0.002, args + std::to_string(i));
  for (int i = 0; i < kDepth; ++i) {
    b.CpuOp("autograd::engine::evaluate_function: SumBackward0", 1000 + i * 10, 5,
            R"("Sequence number": )" + std::to_string(i), 2);
    b.Launch(1001 + i * 10, 1, 100 + i, 2);
    b.Kernel("k", 5000 + i * 10, 1, 100 + i);
  }
  const PerfSheet backward = Sheet(b.Parse(), "Reduce_bwd");
  ASSERT_EQ(backward.groups.size(), 1u);
  EXPECT_EQ(backward.groups[0].kernel_us.n, kDepth);
  EXPECT_DOUBLE_EQ(backward.groups[0].kernel_us.min, 1);
}

// A forward call whose own backward node is missing is left out of the backward sheet, as
// TraceLens leaves it out, even when an op nested in it has one.
TEST(BackwardSheetTest, CallWithoutItsOwnBackwardNodeIsLeftOut) {
  const std::string mean_args =
      R"("Input Dims": [[4, 8]], "Input type": ["float"], "Sequence number": 5)";
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mean", 10, 10, mean_args)
                        .CpuOp("aten::sum", 11, 5, R"("Sequence number": 6)")
                        .CpuOp("autograd::engine::evaluate_function: SumBackward0", 100, 30,
                               R"("Sequence number": 6)", 2)
                        .Launch(101, 1, 1, 2)
                        .Kernel("k", 150, 10, 1)
                        .Parse();
  EXPECT_TRUE(Sheet(trace, "Reduce_bwd").groups.empty());
}

}  // namespace
}  // namespace sextant
