#include "trace/op_category.h"

#include <gtest/gtest.h>

#include "trace/gpu_timeline.h"
#include "trace/recompute.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// Categories as TraceLens's torch_op_mapping.py files them (@171dd747).
TEST(TraceLensOpCategoryTest, NamedOpsTakeTheirPerfModelsCategory) {
  EXPECT_EQ(TraceLensOpCategory("aten::mm", ""), "GEMM");
  EXPECT_EQ(TraceLensOpCategory("aten::addmm", ""), "GEMM");
  EXPECT_EQ(TraceLensOpCategory("aten::convolution_backward", ""), "CONV_bwd");
  EXPECT_EQ(TraceLensOpCategory("aten::miopen_convolution", ""), "CONV_fwd");
  EXPECT_EQ(TraceLensOpCategory("aten::native_layer_norm", ""), "NORM_fwd");
  EXPECT_EQ(TraceLensOpCategory("aten::native_batch_norm_backward", ""), "NORM_bwd");
  EXPECT_EQ(TraceLensOpCategory("aten::_scaled_dot_product_flash_attention", ""), "SDPA_fwd");
  EXPECT_EQ(TraceLensOpCategory("FlashAttnFuncBackward", ""), "SDPA_bwd");
  EXPECT_EQ(TraceLensOpCategory("aten::add", ""), "elementwise");
  EXPECT_EQ(TraceLensOpCategory("aten::mean", ""), "reduce");
  // Inference extensions: paged attention, fused RMSNorm, RoPE, KV-cache writes, MoE.
  EXPECT_EQ(TraceLensOpCategory("vllm::unified_attention_with_output", ""), "InferenceAttention");
  EXPECT_EQ(TraceLensOpCategory("_C_cache_ops::reshape_and_cache_flash", ""), "InferenceAttention");
  EXPECT_EQ(TraceLensOpCategory("aiter::rms_norm", ""), "RMSNorm");
  EXPECT_EQ(TraceLensOpCategory("sgl_kernel::rotary_embedding", ""), "RoPE_fwd");
  EXPECT_EQ(TraceLensOpCategory("aiter::ck_moe_stage1", ""), "MoE_unfused");
  EXPECT_EQ(TraceLensOpCategory("aiter::fmoe_g1u1", ""), "MoE_fused");
  EXPECT_EQ(TraceLensOpCategory("primus_turbo::grouped_gemm", ""), "GroupedGEMM_fwd");
  // A category-only entry overrides the perf model's (MoE sort rather than quantisation).
  EXPECT_EQ(TraceLensOpCategory("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", ""), "MoE_aux");
}

TEST(TraceLensOpCategoryTest, PatternsThenFirstKernelThenOther) {
  EXPECT_EQ(TraceLensOpCategory("triton_poi_fused_add_0", ""), "triton");
  EXPECT_EQ(TraceLensOpCategory("record_param_comms", ""), "record_param_comms");
  // An unnamed op is filed by its first kernel when ATen wrote it ...
  EXPECT_EQ(TraceLensOpCategory("aten::where",
                                "void at::native::elementwise_kernel<128, 4, ...>(int, ...)"),
            "elementwise");
  EXPECT_EQ(TraceLensOpCategory("aten::all", "void at::native::reduce_kernel<512, 1, ...>(...)"),
            "reduce");
  EXPECT_EQ(
      TraceLensOpCategory("aten::_foreach_add_",
                          "void at::native::(anonymous namespace)::multi_tensor_apply_kernel"),
      "multi_tensor_apply");
  // ... and not otherwise: the kernel must be ATen's own.
  EXPECT_EQ(TraceLensOpCategory("aten::cat", "void at::native::(anonymous)::CatArrayBatchedCopy"),
            "other");
  EXPECT_EQ(TraceLensOpCategory("my::op", "elementwise_kernel"), "other");
  EXPECT_EQ(TraceLensOpCategory("aten::_softmax", ""), "other");
}

// One thread (µs): aten::mm launches a GEMM (10 µs) and a split-K reduce (2 µs); aten::sub
// (not named by the taxonomy) launches an ATen element-wise kernel (4 µs) twice; a NCCL
// kernel (50 µs) under record_param_comms is left out, as are kernels with no op around
// their launch... which count under the runtime call (3 µs, filed "other").
TEST(SummarizeOpCategoriesTest, CountsCallsAndDirectTimePerCategory) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mm", 0, 20)
                        .Launch(1, 1, 1)
                        .Launch(3, 1, 2)
                        .CpuOp("aten::sub", 30, 5)
                        .Launch(31, 1, 3)
                        .CpuOp("aten::sub", 40, 5)
                        .Launch(41, 1, 4)
                        .CpuOp("record_param_comms", 50, 5)
                        .Launch(51, 1, 5)
                        .Launch(60, 1, 6)
                        .Kernel("Cijk_gemm", 10, 10, 1)
                        .Kernel("splitk_reduce", 21, 2, 2)
                        .Kernel("void at::native::elementwise_kernel<128, 4>(int)", 32, 4, 3)
                        .Kernel("void at::native::elementwise_kernel<128, 4>(int)", 42, 4, 4)
                        .Kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)", 52, 50, 5)
                        .Kernel("orphan", 110, 3, 6)
                        .Parse();
  auto rows = SummarizeOpCategories(FindKernelLaunchers(trace, TimelineEvents(trace), {}));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].category, "GEMM");
  EXPECT_EQ(rows[0].count, 1);
  EXPECT_EQ(rows[0].direct_kernel_ns, 12000);
  EXPECT_EQ(rows[1].category, "elementwise");
  EXPECT_EQ(rows[1].count, 2);
  EXPECT_EQ(rows[1].direct_kernel_ns, 8000);
  EXPECT_EQ(rows[2].category, "other");  // cudaLaunchKernel itself
  EXPECT_EQ(rows[2].count, 1);
  EXPECT_EQ(rows[2].direct_kernel_ns, 3000);
  for (const auto& row : rows) EXPECT_FALSE(row.recompute);
}

// ops_unique_args's argument records: an op without a record (recorded without
// record_shapes, or a runtime call that launches kernels itself) leaves the cell empty, as
// TraceLens's reports do.
TEST(SummarizeLauncherArgsTest, AbsentRecordsAreEmptyCells) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mm", 0, 20, R"("Input Dims": [[2, 3], [3, 4]])")
                        .Launch(1, 1, 1)
                        .CpuOp("aten::sub", 30, 5)
                        .Launch(31, 1, 2)
                        .Launch(50, 1, 3)
                        .Kernel("Cijk_gemm", 10, 10, 1)
                        .Kernel("void at::native::elementwise_kernel<128, 4>(int)", 32, 4, 2)
                        .Kernel("orphan", 60, 2, 3)
                        .Parse();
  const auto rows = SummarizeLauncherArgs(
      trace, FindKernelLaunchers(trace, TimelineEvents(trace), {}), ComputeOpKernelTimes(trace));
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) {
    if (r.name == "aten::mm") {
      EXPECT_EQ(r.input_dims, "((2, 3), (3, 4))");
      EXPECT_EQ(r.input_types, "");
    } else {  // aten::sub without records, cudaLaunchKernel with none
      EXPECT_EQ(r.input_dims, "") << r.name;
      EXPECT_EQ(r.concrete_inputs, "") << r.name;
    }
  }
}

// A launcher's direct kernel time is the busy time of its kernels: FlashAttention 3's attention
// kernel starts (programmatic dependent launch) while its scheduling kernel still runs (µs):
// [10, 13.2) and [11.4, 65.5) give 55.5, not 57.3.
TEST(SummarizeOpCategoriesTest, DirectTimeIsTheBusyTimeOfOverlappingKernels) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("flash_attn_3::fwd", 0, 50)
                        .Launch(1, 2, 1)
                        .Launch(4, 2, 2)
                        .Kernel("prepare_varlen_num_blocks_kernel", 10, 3.2, 1)
                        .Kernel("FlashAttnFwdSm90", 11.4, 54.1, 2)
                        .Parse();
  const auto launchers = FindKernelLaunchers(trace, TimelineEvents(trace), {});
  ASSERT_EQ(launchers.size(), 1u);
  EXPECT_EQ(launchers[0].direct_ns, 55'500);
}

// torch.utils.checkpoint reruns the forward under its recompute_fn frame during backward:
// the same op inside that frame is a row of its own, and so is its timeline.
TEST(SummarizeOpCategoriesTest, SplitsRecomputedCallsByTheirPythonFrame) {
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::mm", 0, 10)
          .Launch(1, 1, 1)
          .Event(R"({"ph": "X", "cat": "python_function", "name": "torch/utils/checkpoint.py)"
                 R"((1500): recompute_fn", "pid": 1, "tid": 1, "ts": 20, "dur": 20})")
          .Event(R"({"ph": "X", "cat": "python_function", "name": "torch/nn/modules/)"
                 R"(linear.py(125): forward", "pid": 1, "tid": 1, "ts": 21, "dur": 15})")
          .CpuOp("aten::mm", 22, 10)
          .Launch(23, 1, 2)
          .CpuOp("aten::mm", 50, 10)  // after the frame: backward again
          .Launch(51, 1, 3)
          .Kernel("gemm", 5, 10, 1)
          .Kernel("gemm", 25, 6, 2)
          .Kernel("gemm", 55, 10, 3)
          .Parse();
  ASSERT_EQ(trace.recompute_regions.size(), 1u) << "only the recompute frame is kept";
  const RecomputeFlags flags = MarkRecompute(trace);
  ASSERT_TRUE(flags.any());
  auto rows = SummarizeOpCategories(FindKernelLaunchers(trace, TimelineEvents(trace), flags.cpu));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].recompute);
  EXPECT_EQ(rows[0].count, 2);
  EXPECT_EQ(rows[0].direct_kernel_ns, 20000);
  EXPECT_TRUE(rows[1].recompute);
  EXPECT_EQ(rows[1].count, 1);
  EXPECT_EQ(rows[1].direct_kernel_ns, 6000);
  auto [outside, inside] = SplitByRecompute(flags, TimelineEvents(trace));
  EXPECT_EQ(outside.size(), 2u);
  ASSERT_EQ(inside.size(), 1u);
  EXPECT_EQ(trace.gpu[inside[0]].dur_ns, 6000);
}

TEST(SummarizeOpCategoriesTest, NoRecomputeFrameNoFlags) {
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::mm", 0, 10)
                        .Launch(1, 1, 1)
                        .Kernel("gemm", 5, 10, 1)
                        .Parse();
  EXPECT_FALSE(MarkRecompute(trace).any());
}

}  // namespace
}  // namespace sextant
