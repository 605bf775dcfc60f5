#include "config/interpolation.h"

#include <cctype>

#include <fmt/format.h>

namespace sextant {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string_view Unquote(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
      text.back() == text.front()) {
    return text.substr(1, text.size() - 2);
  }
  return text;
}

void InterpolateNode(ConfigNode& node, const Environment& env, const std::string& path) {
  switch (node.kind) {
    case ConfigNode::Kind::kScalar:
      if (node.scalar.find("${") != std::string::npos) {
        std::vector<std::string> from_environment;
        node.scalar = Interpolate(node.scalar, env, node.where, path, &from_environment);
        if (!from_environment.empty()) {
          std::string names;
          for (const std::string& name : from_environment)
            names += (names.empty() ? "$" : ", $") + name;
          node.where = SourceLocation{fmt::format("{} via {}", names, node.where.ToString())};
        }
      }
      break;
    case ConfigNode::Kind::kSequence:
      for (size_t i = 0; i < node.items.size(); ++i) {
        InterpolateNode(node.items[i], env, fmt::format("{}[{}]", path, i));
      }
      break;
    case ConfigNode::Kind::kMap:
      for (auto& [key, child] : node.fields) {
        InterpolateNode(child, env, path.empty() ? key : path + "." + key);
      }
      break;
    case ConfigNode::Kind::kNull: break;
  }
}

}  // namespace

std::string Interpolate(std::string_view text, const Environment& env, const SourceLocation& where,
                        std::string_view key, std::vector<std::string>* from_environment) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("${", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    const size_t close = text.find('}', open + 2);
    if (close == std::string_view::npos) {
      ThrowUserError(where, key, fmt::format("unterminated '${{' in \"{}\"", text));
    }
    const std::string_view body = text.substr(open + 2, close - open - 2);
    const size_t colon = body.find(':');
    const std::string_view name = body.substr(0, colon);
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) {
      ThrowUserError(where, key, fmt::format("invalid variable name in \"${{{}}}\"", body));
    }
    for (char c : name) {
      if (!IsNameChar(c)) {
        ThrowUserError(where, key, fmt::format("invalid variable name in \"${{{}}}\"", body));
      }
    }
    if (std::optional<std::string> value = env.Get(name)) {
      out.append(*value);
      if (from_environment != nullptr) from_environment->emplace_back(name);
    } else if (colon != std::string_view::npos) {
      out.append(Unquote(body.substr(colon + 1)));
    } else {
      ThrowUserError(where, key,
                     fmt::format("environment variable {} is not set and \"${{{}}}\" has no "
                                 "default (write ${{{}:value}} or set it)",
                                 name, name, name));
    }
    pos = close + 1;
  }
  return out;
}

void InterpolateTree(ConfigNode& root, const Environment& env) { InterpolateNode(root, env, ""); }

}  // namespace sextant
