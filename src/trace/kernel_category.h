// Sorts GPU activities into the categories of SPEC §4.1 (GEMM, attention, elementwise,
// reduction/norm, communication, memory, other), from the launching op's name when it is
// known and otherwise from the kernel's name.
#pragma once

#include <string_view>

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

std::string_view CategoryName(KernelCategory category);
KernelCategory CategorizeKernelName(std::string_view kernel_name);
// kNone when the op name says nothing (the caller then uses the kernel name).
KernelCategory CategorizeOpName(std::string_view op_name, bool* known);
KernelCategory CategorizeGpuEvent(const TraceData& trace, const GpuEvent& event);

}  // namespace sextant
