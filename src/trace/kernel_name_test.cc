#include "trace/kernel_name.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(KernelNameTest, DropsReturnTypeAndParameterList) {
  // Kernel names as CUDA/HIP demangle them (DeepSeek-V3 H800 and MI300X corpus traces).
  EXPECT_EQ(ShortKernelName("void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, "
                            "16>(int4*, float*, int const*, int)"),
            "dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16>");
  EXPECT_EQ(ShortKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<"
                            "4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  // A function-pointer parameter nests parentheses inside the list.
  EXPECT_EQ(ShortKernelName("void at::native::(anonymous namespace)::apply<float>(float*, "
                            "void (*)(float), int)"),
            "at::native::(anonymous namespace)::apply<float>");
}

TEST(KernelNameTest, FunctionNameDropsAnyReturnType) {
  EXPECT_EQ(KernelFunctionName("void (anonymous namespace)::multimem_all_reduce_kernel<"
                               "c10::BFloat16, 16>(c10::BFloat16*, unsigned long)"),
            "(anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>");
  EXPECT_EQ(KernelFunctionName("__global__ unsigned int f<a b>(int)"), "f<a b>");
  EXPECT_EQ(KernelFunctionName("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_Generic");
  // Not a signature: only a leading "void " goes.
  EXPECT_EQ(KernelFunctionName("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(KernelFunctionName("void foo<int>"), "foo<int>");
  EXPECT_EQ(KernelFunctionName("nccl:all_reduce"), "nccl:all_reduce");
  EXPECT_EQ(KernelFunctionName(""), "");
}

TEST(KernelNameTest, LeavesNamesThatAreNotSignatures) {
  EXPECT_EQ(ShortKernelName("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(ShortKernelName("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(ShortKernelName("Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x1"),
            "Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x1");
  EXPECT_EQ(ShortKernelName("(unbalanced"), "(unbalanced");
  EXPECT_EQ(ShortKernelName("unbalanced)"), "unbalanced)");
  EXPECT_EQ(ShortKernelName(""), "");
}

}  // namespace
}  // namespace sextant
