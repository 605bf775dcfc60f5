// Per-GPU memory used/total and utilisation, read from whichever source the machine has:
// NVML (NVIDIA), the amdsmi library or the amdgpu sysfs files (AMD). The libraries are loaded
// with dlopen at run time, so the program builds and runs without either installed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sextant {

struct GpuSample {
  int gpu = 0;
  int64_t memory_used_bytes = 0;
  int64_t memory_total_bytes = 0;
  double utilization_percent = -1;  // -1 when the source does not report it
};

class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  virtual std::string Name() const = 0;  // "nvml", "amdsmi", "sysfs:/sys/class/drm"
  virtual std::vector<GpuSample> Sample() = 0;
};

// Each returns nullptr when its source is absent or reports no GPU.
std::unique_ptr<GpuSampler> OpenNvmlSampler();
std::unique_ptr<GpuSampler> OpenAmdSmiSampler();
// Reads <drm_root>/card<N>/device/{mem_info_vram_used,mem_info_vram_total,gpu_busy_percent}.
std::unique_ptr<GpuSampler> OpenSysfsSampler(const std::string& drm_root);

// NVML, then amdsmi, then sysfs; nullptr when none finds a GPU.
std::unique_ptr<GpuSampler> OpenGpuSampler(const std::string& drm_root = "/sys/class/drm");

}  // namespace sextant
