#include "config/toml_loader.h"

#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config/config_node.h"
#include "config/toml_nesting.h"

namespace sextant {
namespace {

constexpr int kMaxTomlDepth = 256;
// As many values as a YAML document may expand to (yaml_loader.cc's kMaxNodes); counted from
// the text before toml++ builds its tree.
constexpr int64_t kMaxTomlValues = 1'000'000;

SourceLocation Where(const toml::source_region& region, const std::string& file) {
  SourceLocation where{file};
  if (region.begin.line > 0) where.line = region.begin.line;
  if (region.begin.column > 0) where.column = region.begin.column;
  return where;
}

ConfigNode Convert(const toml::node& node, const std::string& file) {
  const SourceLocation where = Where(node.source(), file);
  if (const toml::table* table = node.as_table()) {
    ConfigNode out = ConfigNode::Map(where);
    for (const auto& [key, value] : *table) out.Set(key.str(), Convert(value, file));
    return out;
  }
  if (const toml::array* array = node.as_array()) {
    ConfigNode out;
    out.kind = ConfigNode::Kind::kSequence;
    out.where = where;
    for (const toml::node& item : *array) out.items.push_back(Convert(item, file));
    return out;
  }
  if (const auto* text = node.as_string()) return ConfigNode::Scalar(text->get(), where, true);
  if (const auto* integer = node.as_integer()) {
    return ConfigNode::Scalar(std::to_string(integer->get()), where);
  }
  if (const auto* real = node.as_floating_point()) {
    return ConfigNode::Scalar(fmt::format("{}", real->get()), where);
  }
  if (const auto* boolean = node.as_boolean()) {
    return ConfigNode::Scalar(boolean->get() ? "true" : "false", where);
  }
  // Dates and times: TOML's own text form.
  std::ostringstream text;
  if (const auto* date = node.as_date()) text << *date;
  if (const auto* time = node.as_time()) text << *time;
  if (const auto* date_time = node.as_date_time()) text << *date_time;
  return ConfigNode::Scalar(text.str(), where, true);
}

}  // namespace

ConfigNode ParseToml(std::string_view text, const std::string& file_name) {
  // A UTF-8 byte-order mark, as some Windows editors write, is not part of the document.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  CheckTomlNesting(text, file_name, kMaxTomlDepth, kMaxTomlValues);
  try {
    toml::table table = toml::parse(text, file_name);
    ConfigNode root = Convert(table, file_name);
    root.where = SourceLocation{file_name, 1, 1};
    return root;
  } catch (const toml::parse_error& e) {
    ThrowUserError(Where(e.source(), file_name), "",
                   fmt::format("TOML syntax error: {}", ShortText(e.description())));
  }
}

}  // namespace sextant
