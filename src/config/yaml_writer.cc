#include "config/yaml_writer.h"

#include <yaml-cpp/yaml.h>

namespace sextant {
namespace {

void Emit(YAML::Emitter& out, const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::kNull: out << YAML::Null; return;
    case ConfigNode::Kind::kScalar:
      // A quoted scalar stays a string when read back ("1", "true", "null").
      if (node.quoted) {
        out << YAML::DoubleQuoted << node.scalar;
      } else {
        out << node.scalar;
      }
      return;
    case ConfigNode::Kind::kSequence:
      out << YAML::BeginSeq;
      for (const ConfigNode& item : node.items) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case ConfigNode::Kind::kMap:
      out << YAML::BeginMap;
      for (const auto& [key, value] : node.fields) {
        out << YAML::Key << key << YAML::Value;
        Emit(out, value);
      }
      out << YAML::EndMap;
      return;
  }
}

}  // namespace

std::string ToYaml(const ConfigNode& node) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, node);
  std::string text = out.c_str();
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

}  // namespace sextant
