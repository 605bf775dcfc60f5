// libFuzzer target: arbitrary YAML as a moe_layer_freq value must give a pattern or a
// UserError, never a crash, a hang or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/yaml_loader.h"
#include "job/moe_layer_frequency.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const sextant::ConfigNode root = sextant::ParseYaml("moe_layer_freq: " + text, "fuzz.yaml");
    sextant::MoeLayerPattern(root.Find("moe_layer_freq"), 61);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
