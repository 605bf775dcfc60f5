// Sorts GPU activities into the categories of SPEC §4.1 (GEMM, attention, elementwise,
// reduction/norm, communication, memory, other), from the launching op's name when it is
// known and otherwise from the kernel's name.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

enum class KernelCategory {
  kGemm,
  kAttention,
  kElementwise,
  kReductionNorm,
  kCommunication,
  kMemory,
  kOther
};
constexpr size_t kKernelCategories = static_cast<size_t>(KernelCategory::kOther) + 1;

std::string_view CategoryName(KernelCategory category);
KernelCategory CategorizeKernelName(std::string_view kernel_name);
// A matrix kernel that multiplies FP32 operands on tensor/matrix cores at reduced precision:
// cuBLAS's and cuDNN's "tf32" kernels (sm80_xmma_gemm_f32f32_tf32f32_f32_...), CUTLASS's
// Ampere single-precision tensor-op GEMMs ("tensorop_s1688gemm", the m16n8k8 TF32 MMA; the
// same tile name with an "_f16" suffix is a half-precision kernel, which an FP32 op does not
// run). An FP32 op that ran one is rated against the TF32 peak.
bool IsTensorFloat32KernelName(std::string_view kernel_name);
// kNone when the op name says nothing (the caller then uses the kernel name).
KernelCategory CategorizeOpName(std::string_view op_name, bool* known);
KernelCategory CategorizeGpuEvent(const TraceData& trace, const GpuEvent& event);

// CategorizeGpuEvent with each kernel and op name categorised once: a trace repeats a few
// hundred names over up to millions of activities, and the name tests are substring searches.
class GpuEventCategorizer {
 public:
  explicit GpuEventCategorizer(const TraceData& trace);
  KernelCategory operator()(const GpuEvent& event);

 private:
  static constexpr int8_t kUnset = -1, kOpSaysNothing = -2;
  const TraceData& trace_;
  std::vector<int8_t> by_kernel_;  // per string id: KernelCategory, or kUnset
  std::vector<int8_t> by_op_;      // per string id: KernelCategory, kOpSaysNothing or kUnset
};

}  // namespace sextant
