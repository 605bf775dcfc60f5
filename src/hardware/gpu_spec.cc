#include "hardware/gpu_spec.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

std::string_view VendorName(Vendor v) { return v == Vendor::kAMD ? "AMD" : "NVIDIA"; }

std::string_view FabricName(FabricKind f) { return f == FabricKind::kMesh ? "mesh" : "switch"; }

double GpuSpec::PeakTflops(DType dtype) const {
  auto it = peak_dense_tflops.find(dtype);
  if (it == peak_dense_tflops.end()) {
    std::string has;
    for (const auto& [d, tflops] : peak_dense_tflops) {
      has += fmt::format("{}{}", has.empty() ? "" : ", ", DTypeName(d));
    }
    ThrowUserError(fmt::format("GPU {} has no {} tensor-core peak (it has {}){}", name,
                               DTypeName(dtype), has.empty() ? "none" : has,
                               dtype == DType::kBF16 && Supports(DType::kFP16)
                                   ? ": train in fp16 (--fp16 true --bf16 false)"
                                   : ""));
  }
  return it->second;
}

double GpuSpec::VectorFp32Tflops() const {
  if (vector_fp32_tflops > 0) return vector_fp32_tflops;
  auto it = peak_dense_tflops.find(DType::kFP32);
  return it == peak_dense_tflops.end() ? 0 : it->second;
}

double GpuSpec::MaxAchievableFraction(DType dtype) const {
  const auto maf = max_achievable_tflops.find(dtype);
  const auto peak = peak_dense_tflops.find(dtype);
  if (maf == max_achievable_tflops.end() || peak == peak_dense_tflops.end() || peak->second <= 0) {
    return 0;
  }
  return std::min(1.0, maf->second / peak->second);
}

void GpuSpec::SetClockMhz(double mhz) {
  if (!(mhz > 0)) ThrowUserError(fmt::format("GPU clock must be positive, got {} MHz", mhz));
  // Peak FLOP/s = units x FLOP/clock x clock, so every dtype scales linearly with the clock.
  if (max_clock_mhz > 0) {
    const double scale = mhz / max_clock_mhz;
    for (auto& [dtype, tflops] : peak_dense_tflops) tflops *= scale;
    for (auto& [dtype, tflops] : max_achievable_tflops) tflops *= scale;
    vector_fp32_tflops *= scale;
  }
  max_clock_mhz = mhz;
}

ClusterSpec MakeCluster(const GpuSpec& gpu, int num_nodes) {
  ClusterSpec cluster;
  cluster.gpu = gpu;
  cluster.gpus_per_node = gpu.gpus_per_node;
  cluster.num_nodes = num_nodes;
  cluster.collective_preset = "auto";
  return cluster;
}

}  // namespace sextant
