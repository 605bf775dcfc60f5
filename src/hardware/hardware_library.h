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
// so "H100 PCIe" is not taken for the SXM part; a part the library does not hold whose chip
// name matches an entry ("NVIDIA H100 NVL", "NVIDIA A100 80GB PCIe", a MIG slice: UnheldPart)
// is unknown, not that entry. nullptr if unknown.
const GpuSpec* FindGpuForDevice(std::string_view device_name);
// Why a device name is a part the library does not hold although its chip name matches an
// entry ("H100 NVL: 94 GB at 3.9 TB/s, ..."); "" for any other name.
std::string_view UnheldPart(std::string_view device_name);
// "" when measurements recorded on `device_name` (a trace's deviceProperties) hold for `gpu`,
// or when no device was recorded; else what differs, to follow the file name in a message
// ("was recorded on H100 (NVIDIA H100 80GB HBM3), not on the MI300X"). A device the library
// does not hold never matches.
std::string DeviceMismatch(std::string_view device_name, const GpuSpec& gpu);
// Whether measurements recorded on `device_name` may be used for `gpu`, with DeviceMismatch's
// line as a warning: the same entry, a part the library does not hold of `gpu`'s own chip
// (H100 NVL for an H100 job), or a device the library knows nothing of. Another entry, or a
// part of another chip (H100 NVL for an MI300X job), may not.
bool DeviceMayStandFor(std::string_view device_name, const GpuSpec& gpu);
std::vector<std::string> SimilarGpuNames(std::string_view name, size_t max_results = 3);
// When `name` is an architecture code (gfx942, gfx950) rather than a product, the other GPUs
// of the library it also stands for (gfx942: MI325X beside MI300X); empty otherwise.
std::vector<std::string> OtherGpusOfArch(const GpuSpec& gpu, std::string_view name);

// Reads a hardware-config YAML: Primus's `hardware_config:` keys or Sextant's own schema,
// applied on top of `base`. Unknown keys are a UserError naming file, line and key.
ClusterSpec LoadHardwareConfig(const std::string& path, const ClusterSpec& base);
// What a loaded hardware config says against the GPU it was applied to (a node topology other
// than the GPU's fabric), one line each for the user.
std::vector<std::string> HardwareConfigContradictions(const ClusterSpec& base,
                                                      const ClusterSpec& configured,
                                                      const std::string& path);

}  // namespace sextant
