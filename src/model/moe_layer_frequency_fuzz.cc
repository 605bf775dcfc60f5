// libFuzzer target: arbitrary YAML as a moe_layer_freq value must give a pattern or a
// UserError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "model/primus_model_file.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return 0;
  }
  try {
    sextant::ParseMoeLayerFrequency(node, 61, "fuzz.yaml");
  } catch (const sextant::UserError&) {
  }
  return 0;
}
