// GPU work per user annotation: the ranges a program marks with record_function / NVTX-style
// annotations (Megatron's and DualPipe's "attn(F)", "mlp(B)", "dispatch(F)", an optimizer's
// "Optimizer.step#AdamW.step", "nccl:all_reduce"). Each GPU activity counts for every annotation
// around its launch, so nested ranges (a "1F1B" range holding per-layer ranges) each get their
// whole content. ProfilerStep#N ranges are iterations and are left to the iteration tables.
// Work launched from a thread with no range of its own (autograd's backward thread) belongs
// to the ranges open at that moment on the process's thread that holds the most ranges (the
// training loop's), so a loop's "attn(B)" range gets the backward kernels it waited for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

struct AnnotationStats {
  std::string name;
  int64_t count = 0;        // instances of the range
  int64_t cpu_ns = 0;       // summed duration of the ranges on their CPU thread
  int64_t kernels = 0;      // GPU activities launched inside
  int64_t kernel_ns = 0;    // their summed duration
  int64_t gpu_span_ns = 0;  // per instance, first start to last end of its activities; summed
};

// Over the GPU activities `gpu_indices` (normally TimelineEvents); largest kernel time first.
std::vector<AnnotationStats> SummarizeAnnotations(const TraceData& trace,
                                                  const std::vector<uint32_t>& gpu_indices);

}  // namespace sextant
