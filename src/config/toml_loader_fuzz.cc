// libFuzzer target: any bytes given to the TOML reader must give a tree or a UserError, never
// a crash, a stack overflow (deep headers, arrays, inline tables), a hang or an unbounded
// allocation. Also merges the result into itself and runs the typed reads, as configuration
// loading does.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config_node.h"
#include "config/toml_loader.h"

namespace {

void Visit(const sextant::ConfigNode& node) {
  if (node.IsScalar()) {
    try {
      (void)sextant::ReadInt(node, "k");
    } catch (const sextant::UserError&) {
    }
    try {
      (void)sextant::ReadDouble(node, "k");
    } catch (const sextant::UserError&) {
    }
    (void)sextant::RenderValue(node);
  }
  for (const auto& item : node.items) Visit(item);
  for (const auto& field : node.fields) Visit(field.second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    sextant::ConfigNode root = sextant::ParseToml(text, "fuzz.toml");
    Visit(root);
    const sextant::ConfigNode copy = root;
    sextant::MergeInto(root, copy);
    (void)sextant::LeafPaths(root);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
