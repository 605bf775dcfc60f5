// The built-in GPU library and hardware-config files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hardware/gpu_spec.h"

namespace sextant {

const std::vector<GpuSpec>& GpuLibrary();
// Case-insensitive lookup by name or alias ("MI300X", "mi300x", "gfx942", "H100", "h100_sxm").
const GpuSpec* FindGpu(std::string_view name);
// The GPU a profiler trace ran on, from its device name ("NVIDIA H100 80GB HBM3", "AMD
// Instinct MI300X") or any name FindGpu accepts; the longest matching device-name piece wins,
// so "H100 PCIe" is not taken for the SXM part; a PCIe, NVL or MIG device without an entry of
// its own ("NVIDIA H100 NVL", "NVIDIA A100 80GB PCIe") is unknown, not the SXM part. nullptr
// if unknown.
const GpuSpec* FindGpuForDevice(std::string_view device_name);
std::vector<std::string> SimilarGpuNames(std::string_view name, size_t max_results = 3);

// Reads a hardware-config YAML: Primus's `hardware_config:` keys or Sextant's own schema,
// applied on top of `base`. Unknown keys are a UserError naming file, line and key.
ClusterSpec LoadHardwareConfig(const std::string& path, const ClusterSpec& base);
// What a loaded hardware config says against the GPU it was applied to (a node topology other
// than the GPU's fabric), one line each for the user.
std::vector<std::string> HardwareConfigContradictions(const ClusterSpec& base,
                                                      const ClusterSpec& configured,
                                                      const std::string& path);

}  // namespace sextant
