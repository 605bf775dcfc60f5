// libFuzzer target: any bytes given to the YAML reader must give a tree or a UserError,
// never a crash, a hang or an unbounded allocation. Also runs ${VAR} interpolation and
// the typed reads over the result, as configuration loading does.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/int_list_expression.h"
#include "config/interpolation.h"
#include "config/yaml_loader.h"

namespace {

void Visit(const sextant::ConfigNode& node) {
  if (node.IsScalar()) {
    try {
      (void)sextant::ReadInt(node, "k");
    } catch (const sextant::UserError&) {
    }
    try {
      (void)sextant::ReadBool(node, "k");
    } catch (const sextant::UserError&) {
    }
    try {
      (void)sextant::EvaluateIntListExpression(node.scalar, "k");
    } catch (const sextant::UserError&) {
    }
  }
  for (const auto& item : node.items) Visit(item);
  for (const auto& field : node.fields) Visit(field.second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    sextant::ConfigNode root = sextant::ParseYaml(text, "fuzz.yaml");
    sextant::InterpolateTree(root, sextant::Environment::FromMap({{"A", "1"}}));
    Visit(root);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
