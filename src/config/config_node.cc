#include "config/config_node.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace sextant {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

[[noreturn]] void FailType(const ConfigNode& node, std::string_view key, std::string_view wanted) {
  // On the command line a --KEY followed by another flag (or by nothing) reads as true, as in
  // Primus; where a number was wanted the value was most likely forgotten.
  const bool bare_flag = node.where.file.starts_with("--") && node.scalar == "true" && !node.quoted;
  ThrowUserError(
      node.where, key,
      fmt::format(
          "expected {}, found {}{}", wanted, RenderValue(node),
          bare_flag ? " (a " + node.where.file + " with no value after it reads as true)" : ""));
}

void CollectLeaves(const ConfigNode& node, const std::string& prefix,
                   std::vector<std::string>& out) {
  for (const auto& [key, child] : node.fields) {
    std::string path = prefix.empty() ? key : prefix + "." + key;
    if (child.IsMap() && !child.fields.empty()) {
      CollectLeaves(child, path, out);
    } else {
      out.push_back(std::move(path));
    }
  }
}

}  // namespace

ConfigNode ConfigNode::Scalar(std::string text, SourceLocation where, bool quoted) {
  ConfigNode node;
  node.kind = Kind::kScalar;
  node.scalar = std::move(text);
  node.quoted = quoted;
  node.where = std::move(where);
  return node;
}

ConfigNode ConfigNode::Map(SourceLocation where) {
  ConfigNode node;
  node.kind = Kind::kMap;
  node.where = std::move(where);
  return node;
}

bool ConfigNode::IsNull() const {
  if (kind == Kind::kNull) return true;
  if (kind != Kind::kScalar || quoted) return false;
  const std::string_view text = Trim(scalar);
  return text == "~" || text == "null" || text == "Null" || text == "NULL" || text == "None";
}

// Small maps are scanned: cheaper than hashing, and no index to copy with the node.
constexpr size_t kIndexedSize = 16;

bool ConfigNode::IndexValid() const {
  return fields.size() > kIndexedSize && index_.size() == fields.size();
}

void ConfigNode::Reindex() {
  index_.clear();
  if (fields.size() <= kIndexedSize) return;
  index_.reserve(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) index_.emplace(fields[i].first, i);
  // A repeated key (fields appended directly) would leave the index short: scan instead.
  if (index_.size() != fields.size()) index_.clear();
}

const ConfigNode* ConfigNode::Find(std::string_view key) const {
  if (kind != Kind::kMap) return nullptr;
  if (IndexValid()) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    if (it->second < fields.size() && fields[it->second].first == key) {
      return &fields[it->second].second;
    }
  }
  for (const auto& [name, value] : fields) {
    if (name == key) return &value;
  }
  return nullptr;
}

ConfigNode* ConfigNode::Find(std::string_view key) {
  if (kind == Kind::kMap && fields.size() > kIndexedSize && !IndexValid()) Reindex();
  return const_cast<ConfigNode*>(static_cast<const ConfigNode*>(this)->Find(key));
}

void ConfigNode::Set(std::string_view key, ConfigNode value) {
  if (kind != Kind::kMap) {
    kind = Kind::kMap;
    scalar.clear();
    items.clear();
  }
  if (ConfigNode* existing = Find(key)) {
    *existing = std::move(value);
    return;
  }
  const bool was_valid = IndexValid();
  fields.push_back(ConfigField{std::string(key), std::move(value)});
  if (was_valid) {
    index_.emplace(fields.back().first, fields.size() - 1);
  } else if (fields.size() > kIndexedSize) {
    Reindex();
  }
}

bool ConfigNode::Erase(std::string_view key) {
  auto it = std::find_if(fields.begin(), fields.end(),
                         [&](const auto& field) { return field.first == key; });
  if (it == fields.end()) return false;
  fields.erase(it);
  Reindex();
  return true;
}

const ConfigNode* ConfigNode::FindPath(std::string_view path) const {
  const ConfigNode* node = this;
  while (node != nullptr) {
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) return node->Find(path);
    node = node->Find(path.substr(0, dot));
    path.remove_prefix(dot + 1);
  }
  return nullptr;
}

void ConfigNode::SetPath(std::string_view path, ConfigNode value) {
  ConfigNode* node = this;
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    const std::string_view head = path.substr(0, dot);
    ConfigNode* child = node->Find(head);
    if (child == nullptr || !child->IsMap()) {
      node->Set(head, Map(value.where));
      child = node->Find(head);
    }
    node = child;
    path.remove_prefix(dot + 1);
  }
  node->Set(path, std::move(value));
}

int64_t ConfigNode::CountNodes() const {
  int64_t count = 1;
  for (const ConfigNode& item : items) count += item.CountNodes();
  for (const auto& field : fields) count += field.second.CountNodes();
  return count;
}

void MergeInto(ConfigNode& base, const ConfigNode& over) {
  if (base.IsMap() && over.IsMap()) {
    for (const auto& [key, value] : over.fields) {
      ConfigNode* existing = base.Find(key);
      if (existing != nullptr) {
        MergeInto(*existing, value);
      } else {
        base.Set(key, value);
      }
    }
    return;
  }
  base = over;
}

std::vector<std::string> LeafPaths(const ConfigNode& root) {
  std::vector<std::string> out;
  CollectLeaves(root, "", out);
  return out;
}

std::optional<int64_t> ReadInt(const ConfigNode& node, std::string_view key) {
  if (node.IsNull()) return std::nullopt;
  if (!node.IsScalar()) FailType(node, key, "an integer");
  // YAML 1.1 allows digit separators ("1_000_000"), as MaxText configs use.
  std::string digits;
  for (char c : Trim(node.scalar)) {
    if (c != '_') digits.push_back(c);
  }
  if (!digits.empty() && digits.front() == '+') digits.erase(0, 1);
  int64_t value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || ec != std::errc() || ptr != end) FailType(node, key, "an integer");
  return value;
}

std::optional<double> ReadDouble(const ConfigNode& node, std::string_view key) {
  if (node.IsNull()) return std::nullopt;
  if (!node.IsScalar()) FailType(node, key, "a number");
  std::string text;
  for (char c : Trim(node.scalar)) {
    if (c != '_') text.push_back(c);
  }
  if (!text.empty() && text.front() == '+') text.erase(0, 1);
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) FailType(node, key, "a number");
  return value;
}

std::optional<bool> ReadBool(const ConfigNode& node, std::string_view key) {
  if (node.IsNull()) return std::nullopt;
  if (!node.IsScalar()) FailType(node, key, "true or false");
  const std::string text = Lower(Trim(node.scalar));
  if (text == "true" || text == "yes" || text == "on" || text == "1") return true;
  if (text == "false" || text == "no" || text == "off" || text == "0") return false;
  FailType(node, key, "true or false");
}

std::optional<std::string> ReadString(const ConfigNode& node, std::string_view key) {
  if (node.IsNull()) return std::nullopt;
  if (!node.IsScalar()) FailType(node, key, "a string");
  return node.scalar;
}

std::string RenderValue(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::kNull: return "null";
    case ConfigNode::Kind::kScalar:
      return node.quoted ? "\"" + ShortText(node.scalar) + "\"" : ShortText(node.scalar);
    case ConfigNode::Kind::kSequence: {
      std::string out = "[";
      for (size_t i = 0; i < node.items.size(); ++i) {
        if (i > 0) out += ", ";
        if (i == 8 || out.size() > 80) {
          out += "...";
          break;
        }
        out += RenderValue(node.items[i]);
      }
      return out + "]";
    }
    case ConfigNode::Kind::kMap: return "{...}";
  }
  return "";
}

}  // namespace sextant
