// Peak dense throughput and memory bandwidth of the GPUs Sextant knows, for rooflines.
// Figures are the vendors' datasheet numbers (dense, no sparsity); matched from the trace's
// deviceProperties name or chosen with --gpu-arch.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

struct GpuPeak {
  std::string name;               // canonical name ("H100 SXM")
  double matrix_bf16_tflops = 0;  // also FP16
  double matrix_fp8_tflops = 0;   // 0 if the GPU has no FP8 matrix units
  double matrix_fp32_tflops = 0;  // FP32 matmul as PyTorch runs it by default (no TF32)
  double vector_fp32_tflops = 0;
  double memory_tbps = 0;  // HBM bandwidth, TB/s (1e12 B/s)
};

// Finds a GPU by a name as it appears in traces ("NVIDIA H100 80GB HBM3", "AMD Instinct
// MI300X") or a short key ("h100", "mi300x", "gfx942"); nullopt if unknown.
std::optional<GpuPeak> FindGpuPeak(std::string_view name);
const std::vector<GpuPeak>& KnownGpuPeaks();

}  // namespace sextant
