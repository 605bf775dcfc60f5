#include "trace/kernel_category.h"

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

struct NamedKernel {
  const char* name;
  KernelCategory expected;
};

// Kernel names exactly as they appear in the corpus traces (corpus/traces/...). Names cut
// short are marked "..."; the words that decide their category are all in the part kept.
constexpr NamedKernel kCorpusKernels[] = {
    // GEMM. hipBLASLt on MI300X (TraceLens/mi300/Qwen_Qwen1.5-0.5B-Chat...).
    {"Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_"
     "AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_"
     "LBSPPA1024_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT8_4_MO40_NTn1_NTA0_NTB0_"
     "NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK0_"
     "SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB4_WSGRA0_WSGRB0_WS64_WG32_8_1",
     KernelCategory::kGemm},
    // cuBLAS on H100 (TraceLens/h100/Qwen...; llm_training/modded-nanogpt-8xh100).
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     KernelCategory::kGemm},
    {"nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT", KernelCategory::kGemm},
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x64_64x3_nn_align2>("
     "cutlass_80_tensorop_bf16_s16816gemm_bf16_128x64_64x3_nn_align2::Params)",
     KernelCategory::kGemm},
    // cuBLASLt split-K reduction: part of a GEMM although it says "reduce".
    {"void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<"
     "float>, float const*, float const*, float*, float const*, float const*, float const*, float "
     "const*, float*, void*, long, float*, int*)",
     KernelCategory::kGemm},
    // Convolutions: MIOpen and Composable Kernel on MI300X, cuDNN on A100.
    {"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x16x1x1_1x2x4x32_"
     "tb1x8x1x1_1x4x1x64_pta",
     KernelCategory::kGemm},
    {"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_"
     "v3INS_34GridwiseGemmMultiD_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_"
     "11ColumnMajorENS_5TupleIJEEES7_ttftSA_tNS0_12element_wise11PassThroughESC_SC_...",
     KernelCategory::kGemm},
    {"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_"
     "warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
     KernelCategory::kGemm},
    {"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, "
     "int, int, float const*, int, float*, float const*, kernel_conv_params, ...",
     KernelCategory::kGemm},
    // Triton MoE GEMM (TraceLens/inference/vllm_prefilldecode_piecewise).
    {"_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu", KernelCategory::kGemm},

    // Attention: AMD Triton flash, PyTorch flash on H100, FlashAttention-3, Blackwell FMHA,
    // vLLM unified attention, ROCm paged attention (whose "reduce" must not win).
    {"attn_fwd", KernelCategory::kAttention},
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, "
     "4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
     "cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::"
     "Flash_fwd_params)",
     KernelCategory::kAttention},
    {"void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<64>, "
     "cute::C<128> >, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, true> >(flash::"
     "FlashAttnBwdPreprocess<cute::tuple<cute::C<64>, cute::C<128> >, cutlass::bfloat16_t, float, "
     "cutlass::arch::Sm90, true, true>::Params)",
     KernelCategory::kAttention},
    {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
     KernelCategory::kAttention},
    {"kernel_unified_attention_2d", KernelCategory::kAttention},
    {"void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 3, "
     "false>(__hip_bfloat16*, float const*, float const*, __hip_bfloat16 const*, int const*, int "
     "const*, int, int, float const*)",
     KernelCategory::kAttention},

    // Communication: NCCL 2.19+ and older NCCL, RCCL on MI300X (RCCL keeps NCCL's names),
    // whose "Reduce" must not make them reductions.
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     KernelCategory::kCommunication},
    {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     KernelCategory::kCommunication},
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", KernelCategory::kCommunication},
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
     KernelCategory::kCommunication},
    {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", KernelCategory::kCommunication},

    // Reductions and norms.
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
     "at::native::MeanOps<float, "
     "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::"
     "MeanOps<float, float, float, float>, unsigned int, float, 4>)",
     KernelCategory::kReductionNorm},
    {"triton_red_fused__fused_rms_norm__fused_rms_norm_backward_mul_neg_sum_view_3",
     KernelCategory::kReductionNorm},
    {"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_"
     "diiiiiiib",
     KernelCategory::kReductionNorm},
    {"MIOpenBatchNormFwdTrainSpatial", KernelCategory::kReductionNorm},
    {"void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 3, "
     "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
     KernelCategory::kReductionNorm},

    // Elementwise: CUDA and ROCm spellings of ATen's loops, Triton pointwise, concatenation,
    // the fused optimizer step.
    {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>,"
     " std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
     "3ul>)",
     KernelCategory::kElementwise},
    {"void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<"
     "at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::"
     "CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int, bool)#1}>(int, at::native::"
     "gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, "
     "at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int, bool)#1})",
     KernelCategory::kElementwise},
    {"triton_poi_fused__to_copy_t_8", KernelCategory::kElementwise},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
     "namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(...",
     KernelCategory::kElementwise},
    {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, "
     "float, float, float, float, float, float, adamMode_t, float, int, int, int>(...",
     KernelCategory::kElementwise},

    // Nothing recognisable: MIOpen's layout transposes.
    {"batched_transpose_16x32_half", KernelCategory::kOther},
    {"SubTensorOpWithScalar1d", KernelCategory::kOther},
};

TEST(KernelCategoryTest, CorpusKernelNames) {
  for (const NamedKernel& k : kCorpusKernels) {
    EXPECT_EQ(CategoryName(CategorizeKernelName(k.name)), CategoryName(k.expected)) << k.name;
  }
}

TEST(KernelCategoryTest, CudnnConvolutionKernelsOfVolta) {
  // kineto/tb_plugin_samples/resnet50_num_workers_0__worker0.v1 (V100, 2021).
  for (const char* name : {"volta_scudnn_128x128_stridedB_splitK_medium_nn_v1",
                           "volta_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1",
                           "volta_scudnn_128x32_sliced1x4_ldg4_relu_exp_interior_nhwc_tn_v1"}) {
    EXPECT_EQ(CategoryName(CategorizeKernelName(name)), "GEMM") << name;
  }
}

TEST(KernelCategoryTest, TypeConversionInATemplateIsNotAConvolution) {
  // vLLM's RMSNorm on B200 (TraceLens/b200/eager_trace.json.gz): "_typeConvert" in its
  // return type is not "conv".
  EXPECT_EQ(CategoryName(CategorizeKernelName(
                "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, "
                "void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, "
                "long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)")),
            CategoryName(KernelCategory::kReductionNorm));
}

TEST(KernelCategoryTest, MoeAndQuantisedKernelsOfAB200VllmStep) {
  // TraceLens/b200/eager_trace.json.gz (gpt-oss in vLLM): TensorRT-LLM's FP4 MoE GEMMs,
  // PyTorch's symmetric-memory all-reduce, and the routing, finalize, quantisation, KV-cache
  // and rotary kernels around them.
  struct Case {
    const char* name;
    KernelCategory expected;
  };
  for (const Case& c : {
           Case{"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_"
                "16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_"
                "sm100f",
                KernelCategory::kGemm},
           Case{"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_"
                "16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
                KernelCategory::kGemm},
           Case{"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>("
                "c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)",
                KernelCategory::kCommunication},
           Case{"void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<"
                "cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true> >(...",
                KernelCategory::kElementwise},
           Case{"void moe::dev::routing::routingIndicesOffsetsKernel<moe::dev::routing::"
                "routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, "
                "true> >(...",
                KernelCategory::kElementwise},
           Case{"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::"
                "BlockScaleQuantizationType)2, __nv_bfloat16, 32, true>(int, int, int, int, ...",
                KernelCategory::kElementwise},
           Case{"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
                "(vllm::Fp8KVCacheDataType)1>(...",
                KernelCategory::kElementwise},
           Case{"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, ...",
                KernelCategory::kElementwise},
           Case{"void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(...",
                KernelCategory::kElementwise},
       }) {
    EXPECT_EQ(CategoryName(CategorizeKernelName(c.name)), CategoryName(c.expected)) << c.name;
  }
}

TEST(KernelCategoryTest, FbgemmSparseKernelsAreNotGemms) {
  // DLRM's embedding and sparse-feature kernels (param/dlrm_kineto_8rank) live in namespace
  // fbgemm_gpu or take its argument types; "fbgemm" does not make them GEMMs.
  for (const char* name : {
           "void split_embedding_codegen_forward_unweighted_kernel<float, float, float, false, "
           "long, 1ul, 8ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, "
           "long>, at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, "
           "at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>, "
           "at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, "
           "at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, "
           "at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, "
           "fbgemm_gpu::FixedDivisor, at::GenericPackedTensorAccessor<long, 1ul, "
           "at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, "
           "at::RestrictPtrTraits, int>, long, at::GenericPackedTensorAccessor<int, 1ul, "
           "at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<float, 2ul, "
           "at::RestrictPtrTraits, long>)",
           "void bounds_check_indices_kernel<long, false>(at::GenericPackedTensorAccessor<long, "
           "1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, "
           "at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, "
           "at::RestrictPtrTraits, int>, int const*, long, "
           "at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, "
           "fbgemm_gpu::FixedDivisor)",
           "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, "
           "int*)",
       }) {
    EXPECT_NE(CategoryName(CategorizeKernelName(name)), "GEMM") << name;
  }
}

TEST(KernelCategoryTest, OpNames) {
  struct NamedOp {
    const char* name;
    KernelCategory expected;
  };
  constexpr NamedOp kKnown[] = {
      {"aten::mm", KernelCategory::kGemm},
      {"aten::addmm", KernelCategory::kGemm},
      {"aten::_scaled_mm", KernelCategory::kGemm},
      {"aten::convolution_backward", KernelCategory::kGemm},
      // The 2021 ResNet-50 traces (kineto/tb_plugin_samples) launch through cuDNN's own ops.
      {"aten::cudnn_convolution_backward_weight", KernelCategory::kGemm},
      {"aten::cudnn_convolution_backward_input", KernelCategory::kGemm},
      {"aten::miopen_convolution", KernelCategory::kGemm},
      {"aten::conv2d", KernelCategory::kGemm},
      {"aten::conv_transpose2d", KernelCategory::kGemm},
      {"aten::_scaled_dot_product_flash_attention", KernelCategory::kAttention},
      {"flash_attn::_flash_attn_backward", KernelCategory::kAttention},
      {"vllm::unified_attention_with_output", KernelCategory::kAttention},
      {"aten::native_layer_norm", KernelCategory::kReductionNorm},
      {"aten::_softmax", KernelCategory::kReductionNorm},
      {"aten::sum", KernelCategory::kReductionNorm},
      // PyTorch's communication ops (cpu_op record_param_comms around every NCCL call).
      {"record_param_comms", KernelCategory::kCommunication},
      {"c10d::allreduce_", KernelCategory::kCommunication},
      {"nccl:all_reduce", KernelCategory::kCommunication},
  };
  for (const NamedOp& op : kKnown) {
    bool known = false;
    EXPECT_EQ(CategoryName(CategorizeOpName(op.name, &known)), CategoryName(op.expected))
        << op.name;
    EXPECT_TRUE(known) << op.name;
  }
  // An op name that says nothing defers to the kernel name.
  for (const char* op :
       {"aten::add", "aten::copy_", "my_module::forward", "aten::convert_indices"}) {
    bool known = true;
    EXPECT_EQ(CategorizeOpName(op, &known), KernelCategory::kOther) << op;
    EXPECT_FALSE(known) << op;
  }
}

TEST(KernelCategoryTest, GpuEventUsesTheLaunchingOpUnlessTheKernelCommunicates) {
  // aten::mm launches a fill (zeroing its output) and a GEMM: both are GEMM time. aten::add's
  // name says nothing, so its kernel name decides. A NCCL kernel is communication even under a
  // GEMM op. A memcpy is memory, as is ROCm 7.1's copy kernel.
  TraceData t =
      KinetoTraceBuilder()
          .CpuOp("aten::mm", 0, 10)
          .Launch(1, 1, 1)
          .Launch(3, 1, 2)
          .Launch(5, 1, 3)
          .Runtime("cudaMemcpyAsync", 7, 1, 4)
          .CpuOp("aten::add", 20, 10)
          .Launch(21, 1, 5)
          .Kernel(
              "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
              "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, "
              "at::detail::Array<char*, 1>)",
              100, 1, 1)
          .Kernel("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 110, 1, 2)
          .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 120,
                  1, 3)
          .Memcpy(130, 1, 4)
          .Kernel(
              "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<"
              "c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<"
              "c10::BFloat16>, std::array<char*, 3ul>)",
              140, 1, 5)
          .Kernel("__amd_rocclr_copyBuffer", 150, 1, 99)
          .Parse();
  ASSERT_EQ(t.gpu.size(), 6u);
  const KernelCategory expected[] = {KernelCategory::kGemm,          KernelCategory::kGemm,
                                     KernelCategory::kCommunication, KernelCategory::kMemory,
                                     KernelCategory::kElementwise,   KernelCategory::kMemory};
  GpuEventCategorizer cached(t);
  for (size_t i = 0; i < t.gpu.size(); ++i) {
    EXPECT_EQ(CategoryName(CategorizeGpuEvent(t, t.gpu[i])), CategoryName(expected[i])) << i;
    EXPECT_EQ(cached(t.gpu[i]), expected[i]) << i;
    EXPECT_EQ(cached(t.gpu[i]), expected[i]) << i << " (second look-up)";
  }
}

}  // namespace
}  // namespace sextant
