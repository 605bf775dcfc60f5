#include "trace/roofline.h"

#include <string>

#include <gtest/gtest.h>

#include "hardware/hardware_library.h"
#include "trace/kernel_category.h"
#include "trace/op_breakdown.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// Hand-checked against TraceLens's golden GEMM sheet for torch_compile_triton/trace.json.gz:
// aten::mm (32768x2048)·(2048x8192) has GFLOPS_first 1099.511627776 and Data Moved 672 MiB.
TEST(RooflineTest, MatmulMatchesTraceLensGolden) {
  auto cost = ModelOpCost("aten::mm", "[[32768, 2048], [2048, 8192], [32768, 8192]]",
                          "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]", "");
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->family, "GEMM");
  EXPECT_DOUBLE_EQ(cost->flops, 2.0 * 32768 * 8192 * 2048);  // 1.099511627776e12
  EXPECT_DOUBLE_EQ(cost->bytes / (1 << 20), 672.0);
}

TEST(RooflineTest, AddmmCountsBiasAndLinearFoldsBatch) {
  // addmm(C[M,N], A[M,K], B[K,N]): 2MNK + MN FLOPs, bias read as N elements.
  auto addmm = ModelOpCost("aten::addmm", "[[64], [8, 32], [32, 64]]",
                           "[\"float\", \"float\", \"float\"]", "");
  ASSERT_TRUE(addmm);
  EXPECT_DOUBLE_EQ(addmm->flops, 2.0 * 8 * 64 * 32 + 8 * 64);
  EXPECT_DOUBLE_EQ(addmm->bytes, (8 * 32 + 32 * 64 + 8 * 64 + 64) * 4.0);
  // linear(x[2, 5, 32], W[64, 32], b[64]) is a GEMM with M = 10.
  auto linear = ModelOpCost("aten::linear", "[[2, 5, 32], [64, 32], [64]]",
                            "[\"c10::Half\", \"c10::Half\", \"c10::Half\"]", "");
  ASSERT_TRUE(linear);
  EXPECT_DOUBLE_EQ(linear->flops, 2.0 * 10 * 64 * 32 + 10 * 64);
  auto bmm =
      ModelOpCost("aten::bmm", "[[4, 8, 16], [4, 16, 2]]", "[\"c10::Half\", \"c10::Half\"]", "");
  ASSERT_TRUE(bmm);
  EXPECT_DOUBLE_EQ(bmm->flops, 4 * 2.0 * 8 * 2 * 16);
  EXPECT_FALSE(ModelOpCost("aten::mm", "[[2, 3], [4, 5, 6]]", "[\"float\", \"float\"]", ""));
  EXPECT_FALSE(ModelOpCost("aten::mm", "", "", ""));
}

// Records whose shapes cannot be the GEMM the op names: the inner dimensions disagree, or the
// op has more inputs than its signature. HTA's sampled_rank-0 test trace has both, e.g.
// aten::matmul [[2048,606,20],[2048,45,160],[2048,160,20]] (K 20 against 45) and an
// aten::linear with six inputs; priced as GEMMs they ran at 105 and 264 TFLOP/s of FP32 on an
// A100. Their FLOPs are unknown, so they are left off the roofline.
TEST(RooflineTest, ShapesThatCannotMultiplyAreNotPriced) {
  const std::string f2 = R"(["float", "float"])", f3 = R"(["float", "float", "float"])";
  EXPECT_FALSE(ModelOpCost("aten::mm", "[[8, 32], [16, 64]]", f2, ""));
  EXPECT_FALSE(ModelOpCost("aten::addmm", "[[64], [8, 32], [16, 64]]", f3, ""));
  EXPECT_FALSE(ModelOpCost("aten::bmm", "[[4, 8, 16], [2, 16, 2]]", f2, ""));  // batch 4 vs 2
  EXPECT_FALSE(ModelOpCost("aten::bmm", "[[4, 8, 16], [4, 8, 2]]", f2, ""));   // K 16 vs 8
  EXPECT_FALSE(
      ModelOpCost("aten::matmul", "[[2048, 606, 20], [2048, 45, 160], [2048, 160, 20]]", f3, ""));
  EXPECT_FALSE(ModelOpCost("aten::linear",
                           "[[2048, 1953], [2048, 1953], [2048, 1953], [2048, 1024], [541, 1024], "
                           "[541]]",
                           R"(["float", "float", "float", "float", "float", "float"])", ""));
  // The same ops with shapes that multiply: matmul [2, 8, 16] x [16, 4] is 2·(2·8·4·16).
  auto matmul = ModelOpCost("aten::matmul", "[[2, 8, 16], [16, 4]]", f2, "");
  ASSERT_TRUE(matmul);
  EXPECT_DOUBLE_EQ(matmul->flops, 2 * 2.0 * 8 * 4 * 16);
  EXPECT_TRUE(ModelOpCost("aten::bmm", "[[4, 8, 16], [4, 16, 2]]", f2, ""));
}

// An FP32 GEMM whose kernel ran on TF32 tensor cores is rated against the TF32 peak. HTA's
// trace_diff control trace (A100) runs aten::mm [[2048,1024],[1024,4864]] in float through
// cutlass_80_tensorop_s1688gemm kernels at 111 TFLOP/s: 569% of the FP32 peak (19.5), 71% of
// TF32's (156). The same op on an FP32 SIMT kernel (ampere_sgemm_*) keeps the FP32 peak.
TEST(RooflineTest, Fp32GemmsOnTf32KernelsUseTheTf32Peak) {
  const std::string dims =
      R"("Input Dims": [[2048, 1024], [1024, 4864]], "Input type": ["float", "float"])";
  TraceData trace =
      KinetoTraceBuilder()
          .CpuOp("aten::mm", 0, 20, dims)
          .Launch(2, 5, 1)
          .Kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4>", 10,
                  184, 1)
          .CpuOp("aten::mm", 400, 20,
                 R"("Input Dims": [[64, 1024], [1024, 4864]], "Input type": ["float", "float"])")
          .Launch(402, 5, 2)
          .Kernel("ampere_sgemm_128x64_nn", 410, 100, 2)
          .Parse();
  const GpuSpec* a100 = FindGpu("A100-40GB");
  ASSERT_TRUE(a100);
  const std::vector<RooflineRow> rows = ComputeRoofline(trace, ComputeOpKernelTimes(trace), a100);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].tensor_float32);
  EXPECT_DOUBLE_EQ(rows[0].peak_tflops, 156);  // A100 data sheet: TF32 156, FP32 19.5
  // 2·2048·1024·4864 FLOPs in 184 us: 111 TFLOP/s, 71% of the TF32 roof.
  EXPECT_NEAR(rows[0].achieved_tflops, 2.0 * 2048 * 1024 * 4864 / 184e-6 / 1e12, 1e-9);
  EXPECT_NEAR(rows[0].roofline_fraction, rows[0].achieved_tflops / 156, 1e-9);
  EXPECT_NE(rows[0].note.find("TF32"), std::string::npos);
  EXPECT_FALSE(rows[1].tensor_float32);
  EXPECT_DOUBLE_EQ(rows[1].peak_tflops, 19.5);
  EXPECT_TRUE(IsTensorFloat32KernelName(
      "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1"));
  EXPECT_FALSE(IsTensorFloat32KernelName("ampere_sgemm_32x32_sliced1x4_tn"));
  EXPECT_FALSE(IsTensorFloat32KernelName(
      "void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_f16_128x128_32x3_nn_align8>"));
}

// torch._scaled_mm of FP8 operands writes a wider product. The modded-nanogpt H100 trace's LM
// head records the `.out` overload: A[16384, 768] and B[768, 50304] in e4m3 (1 B), the out
// tensor [16384, 50304] in bf16: 12.6 + 38.6 + 1648.4 MB = 1620.84 MiB (TraceLens, run on the
// same trace, reports 1620.84375). Its weight-gradient GEMM writes fp32: 4 B per output.
// Without an out tensor the product is taken as 16-bit, as TraceLens assumes.
TEST(RooflineTest, ScaledMmWritesItsOutputInTheOutTensorsDtype) {
  const std::string types8 =
      R"(["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", "", "Scalar", )"
      R"("Scalar", )";
  auto head = ModelOpCost("aten::_scaled_mm",
                          "[[16384, 768], [768, 50304], [], [], [], [], [], [], [16384, 50304]]",
                          types8 + R"("c10::BFloat16"])", "");
  ASSERT_TRUE(head);
  EXPECT_DOUBLE_EQ(head->bytes, 16384.0 * 768 + 768.0 * 50304 + 16384.0 * 50304 * 2);
  EXPECT_NEAR(head->bytes / (1 << 20), 1620.84375, 1e-9);
  auto wgrad = ModelOpCost("aten::_scaled_mm",
                           "[[768, 16384], [16384, 50304], [], [], [], [], [], [], [768, 50304]]",
                           types8 + R"("float"])", "");
  ASSERT_TRUE(wgrad);
  EXPECT_DOUBLE_EQ(wgrad->bytes, 768.0 * 16384 + 16384.0 * 50304 + 768.0 * 50304 * 4);
  auto plain = ModelOpCost("aten::_scaled_mm", "[[64, 32], [32, 16], [], []]",
                           R"(["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"])", "");
  ASSERT_TRUE(plain);
  EXPECT_DOUBLE_EQ(plain->bytes, 64.0 * 32 + 32.0 * 16 + 64.0 * 16 * 2);
}

// ROCm inference GEMMs take the weight as [N, K]: vLLM's x[8192, 2880] · w[5120, 2880]ᵀ +
// bias[5120] is 2·M·N·K + M·N FLOPs over bf16 x, w, output and bias; TraceLens's vLLM report
// prints 241.63385344 GFLOP and 153.134765625 MB for this call.
TEST(RooflineTest, VendorGemmsTakeTheWeightTransposed) {
  auto vllm = ModelOpCost("vllm::rocm_unquantized_gemm", "[[8192, 2880], [5120, 2880], [5120]]",
                          R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])", "");
  ASSERT_TRUE(vllm);
  EXPECT_DOUBLE_EQ(vllm->flops, 2.0 * 8192 * 5120 * 2880 + 8192.0 * 5120);
  EXPECT_DOUBLE_EQ(vllm->bytes, (8192.0 * 2880 + 2880.0 * 5120 + 8192.0 * 5120 + 5120) * 2);
  EXPECT_NEAR(vllm->flops / 1e9, 241.63385344, 1e-8);
  EXPECT_NEAR(vllm->bytes / (1 << 20), 153.134765625, 1e-9);
  // aiter's gemm_a16w16(x, w, bias=None, dtype, ...): no bias.
  auto aiter = ModelOpCost("aiter::gemm_a16w16", "[[32, 4096], [24576, 4096], [], [], []]",
                           R"(["c10::BFloat16", "c10::BFloat16", "", "Scalar", ""])", "");
  ASSERT_TRUE(aiter);
  EXPECT_DOUBLE_EQ(aiter->flops, 2.0 * 32 * 24576 * 4096);
  // Inner dimensions that disagree are not a GEMM.
  EXPECT_FALSE(ModelOpCost("aiter::gemm_a16w16", "[[32, 4096], [24576, 2048]]",
                           R"(["c10::BFloat16", "c10::BFloat16"])", ""));
}

// Golden SDPA_fwd sheet (same trace): B 8, N 4096, H 16, d 128, not causal ->
// GFLOPS_first 1099.511627776, Data Moved 512 MiB.
TEST(RooflineTest, FlashAttentionMatchesTraceLensGoldenAndHalvesCausal) {
  const char* dims = "[[8, 16, 4096, 128], [8, 16, 4096, 128], [8, 16, 4096, 128], [], [], [], []]";
  const char* types =
      "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\", "
      "\"Scalar\", \"Scalar\"]";
  auto full = ModelOpCost("aten::_scaled_dot_product_flash_attention", dims, types,
                          "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"0.0883\"]");
  ASSERT_TRUE(full);
  EXPECT_DOUBLE_EQ(full->flops, 1099511627776.0);
  EXPECT_DOUBLE_EQ(full->bytes / (1 << 20), 512.0);
  EXPECT_TRUE(full->note.empty());
  auto causal = ModelOpCost("aten::_scaled_dot_product_flash_attention", dims, types,
                            "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"0.0883\"]");
  ASSERT_TRUE(causal);
  EXPECT_DOUBLE_EQ(causal->flops, full->flops / 2);
  EXPECT_EQ(causal->note, "causal: FLOPs halved");
  // flash_attn layout is [B, N, H, D]; backward is 2.5x the forward FLOPs (flop_counter.py).
  auto bwd = ModelOpCost(
      "flash_attn::_flash_attn_backward",
      "[[8, 4096, 16, 128], [8, 4096, 16, 128], [8, 4096, 16, 128], [8, 4096, 16, 128]]", types,
      "");
  ASSERT_TRUE(bwd);
  EXPECT_DOUBLE_EQ(bwd->flops, 2.5 * 1099511627776.0);
}

TEST(RooflineTest, ElementwiseAndNormModels) {
  auto add =
      ModelOpCost("aten::add", "[[4, 1024], [1024], []]", "[\"float\", \"float\", \"Scalar\"]", "");
  ASSERT_TRUE(add);
  EXPECT_DOUBLE_EQ(add->flops, 4096);
  EXPECT_DOUBLE_EQ(add->bytes, (4096 + 1024 + 4096) * 4.0);
  auto relu = ModelOpCost("aten::relu", "[[10, 10]]", "[\"c10::BFloat16\"]", "");
  ASSERT_TRUE(relu);
  EXPECT_DOUBLE_EQ(relu->bytes, 2 * 100 * 2.0);
  auto ln = ModelOpCost("aten::layer_norm", "[[8, 512], [], [512], [512], []]",
                        "[\"c10::BFloat16\"]", "");
  ASSERT_TRUE(ln);
  EXPECT_DOUBLE_EQ(ln->flops, 8.0 * 4096);
  EXPECT_DOUBLE_EQ(ln->bytes, (2 * 4096 + 2 * 512) * 2.0);
  // RMSNorm (TraceLens): (N/C)(2C + 2) + 2N with affine weight.
  auto rms = ModelOpCost("aten::rms_norm", "[[8, 512], [], [512], []]", "[\"float\"]", "");
  ASSERT_TRUE(rms);
  EXPECT_DOUBLE_EQ(rms->flops, 8.0 * (2 * 512 + 2) + 2 * 4096);
}

// A copy_ that uploads a host tensor runs at the host link's speed (PCIe: ~0.02 TB/s for a
// pageable copy in the 2021 ResNet-50 trace); rating it against HBM would put a transfer at
// the top of the device's roofline. The same op copying on the device stays.
TEST(RooflineTest, HostDeviceCopiesAreLeftOut) {
  const std::string dims =
      R"("Input Dims": [[1024], [1024], []], "Input type": ["float", "float", "Scalar"])";
  TraceData trace = KinetoTraceBuilder()
                        .CpuOp("aten::copy_", 0, 20, dims)
                        .Runtime("cudaMemcpyAsync", 2, 5, 1)
                        .Memcpy(10, 100, 1)
                        .CpuOp("aten::copy_", 200, 20, dims)
                        .Launch(202, 5, 2)
                        .Kernel("void at::native::elementwise_kernel<copy>", 210, 3, 2)
                        .Parse();
  const std::vector<RooflineRow> rows =
      ComputeRoofline(trace, ComputeOpKernelTimes(trace), FindGpu("H100"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "aten::copy_");
  EXPECT_EQ(rows[0].count, 1);
  EXPECT_DOUBLE_EQ(rows[0].kernel_ns, 3000);
  EXPECT_TRUE(IsHostDeviceCopyName("Memcpy DtoH (Device -> Pageable)"));
  EXPECT_TRUE(IsHostDeviceCopyName("CopyHostToDevice"));
  EXPECT_FALSE(IsHostDeviceCopyName("Memcpy DtoD (Device -> Device)"));
}

// copy_(self int64, src int32) reads 4 bytes and writes 8 per element.
TEST(RooflineTest, ACopyReadsItsSourceInTheSourcesDtype) {
  auto widen =
      ModelOpCost("aten::copy_", "[[1000], [1000], []]", R"(["long", "int", "Scalar"])", "");
  ASSERT_TRUE(widen);
  EXPECT_DOUBLE_EQ(widen->bytes, 1000.0 * (8 + 4));
  auto same =
      ModelOpCost("aten::copy_", "[[1000], [1000], []]", R"(["float", "float", "Scalar"])", "");
  ASSERT_TRUE(same);
  EXPECT_DOUBLE_EQ(same->bytes, 1000.0 * 8);
}

TEST(RooflinePeakTest, PicksTheUnitOfTheElementWidth) {
  const GpuSpec* mi300x = FindGpu("MI300X");
  const GpuSpec* v100 = FindGpu("V100");
  const GpuSpec* mi250x = FindGpu("MI250X");
  ASSERT_TRUE(mi300x && v100 && mi250x);
  // MI300X data sheet: 1307.4 BF16, 2614.9 FP8, 163.4 FP32 (matrix and vector alike).
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*mi300x, true, 2), 1307.4);
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*mi300x, true, 1), 2614.9);
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*mi300x, true, 4), 163.4);
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*mi300x, false, 2), 163.4);
  // V100 has FP16 tensor cores only (125 TFLOP/s) and no FP8: a 1-byte op falls back to them.
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*v100, true, 2), 125);
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*v100, true, 1), 125);
  // One MI250X GCD: FP32 matrix 95.7/2, vector 47.9/2.
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*mi250x, true, 4), 47.85);
  EXPECT_DOUBLE_EQ(RooflinePeakTflops(*mi250x, false, 4), 23.95);
}

}  // namespace
}  // namespace sextant
