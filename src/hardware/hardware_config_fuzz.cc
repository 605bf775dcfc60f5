// libFuzzer target: any bytes given to the hardware-config parser must end in a ClusterSpec
// or a UserError -- never a crash, hang or other exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hardware/hardware_config.h"
#include "hardware/hardware_library.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const sextant::ClusterSpec base = sextant::MakeCluster(*sextant::FindGpu("MI300X"));
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const sextant::ClusterSpec cluster = sextant::ParseHardwareConfig(text, "fuzz.yaml", base);
    // Whatever was accepted must be usable.
    if (cluster.gpus_per_node < 1 || cluster.num_nodes < 1) __builtin_trap();
  } catch (const sextant::UserError&) {
  }
  return 0;
}
