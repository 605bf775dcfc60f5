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
std::vector<std::string> SimilarGpuNames(std::string_view name, size_t max_results = 3);

// Reads a hardware-config YAML: Primus's `hardware_config:` keys or Sextant's own schema,
// applied on top of `base`. Unknown keys are a UserError naming file, line and key.
ClusterSpec LoadHardwareConfig(const std::string& path, const ClusterSpec& base);

}  // namespace sextant
