#include "job/config_reader.h"

#include <sstream>

#include <fmt/format.h>

namespace sextant {
namespace {

std::string Trim(std::string text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

bool ConfigReader::IsSet(std::string_view path) const {
  const ConfigNode* node = Find(path);
  return node != nullptr && !node->IsNull();
}

std::optional<int64_t> ConfigReader::Int(std::string_view path) const {
  const ConfigNode* node = Find(path);
  return node ? ReadInt(*node, path) : std::nullopt;
}

int64_t ConfigReader::Int(std::string_view path, int64_t fallback) const {
  return Int(path).value_or(fallback);
}

std::optional<int64_t> ConfigReader::SizeInt(std::string_view path, SizeRange range) const {
  const std::optional<int64_t> value = Int(path);
  if (value && (*value < range.min || *value > range.max)) {
    Fail(path, fmt::format("{} is out of range: must be between {} and {}", *value, range.min,
                           range.max));
  }
  return value;
}

int64_t ConfigReader::SizeInt(std::string_view path, int64_t fallback, SizeRange range) const {
  return SizeInt(path, range).value_or(fallback);
}

std::optional<int64_t> ConfigReader::Size(std::string_view canonical) const {
  const std::optional<SizeRange> range = SizeRangeOf(canonical);
  return range ? SizeInt(canonical, *range) : Int(canonical);
}

int64_t ConfigReader::Size(std::string_view canonical, int64_t fallback) const {
  return Size(canonical).value_or(fallback);
}

std::optional<double> ConfigReader::Double(std::string_view path) const {
  const ConfigNode* node = Find(path);
  return node ? ReadDouble(*node, path) : std::nullopt;
}

double ConfigReader::Double(std::string_view path, double fallback) const {
  return Double(path).value_or(fallback);
}

std::optional<bool> ConfigReader::Bool(std::string_view path) const {
  const ConfigNode* node = Find(path);
  return node ? ReadBool(*node, path) : std::nullopt;
}

bool ConfigReader::Bool(std::string_view path, bool fallback) const {
  return Bool(path).value_or(fallback);
}

std::optional<std::string> ConfigReader::String(std::string_view path) const {
  const ConfigNode* node = Find(path);
  return node ? ReadString(*node, path) : std::nullopt;
}

std::string ConfigReader::String(std::string_view path, std::string_view fallback) const {
  return String(path).value_or(std::string(fallback));
}

std::vector<std::string> ConfigReader::StringList(std::string_view path) const {
  std::vector<std::string> out;
  const ConfigNode* node = Find(path);
  if (node == nullptr || node->IsNull()) return out;
  if (node->IsSequence()) {
    for (const ConfigNode& item : node->items) {
      if (std::optional<std::string> text = ReadString(item, path)) out.push_back(Trim(*text));
    }
    return out;
  }
  // A list given as one text: "a,b", or in YAML's flow style "[a, b]" as a command-line
  // override writes it, items possibly quoted.
  std::string text = Trim(*ReadString(*node, path));
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    part = Trim(part);
    if (part.size() >= 2 && (part.front() == '"' || part.front() == '\'') &&
        part.back() == part.front()) {
      part = Trim(part.substr(1, part.size() - 2));
    }
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

SourceLocation ConfigReader::Where(std::string_view path) const {
  const ConfigNode* node = Find(path);
  return node ? node->where : SourceLocation{};
}

void ConfigReader::Fail(std::string_view path, std::string_view reason) const {
  // A key that is absent ("missing: ...") has no location of its own: the nearest enclosing
  // key that is present, else the top of the configuration, names the file.
  SourceLocation where = Where(path);
  for (std::string_view parent = path; where.file.empty() && !parent.empty();) {
    const size_t dot = parent.rfind('.');
    parent = dot == std::string_view::npos ? std::string_view() : parent.substr(0, dot);
    where = parent.empty() ? root_.where : Where(parent);
  }
  // Reasons quote values the user wrote; keep a 50 MB one from being echoed whole.
  ThrowUserError(where, path, ShortText(reason, 400));
}

void Provenance::Record(std::string canonical, std::string key, SourceLocation where) {
  origins_.insert_or_assign(std::move(canonical), Origin{std::move(key), std::move(where)});
}

std::string Provenance::Describe(std::string_view canonical) const {
  auto it = origins_.find(canonical);
  if (it == origins_.end()) return "";
  const std::string where = it->second.where.ToString();
  if (it->second.key == canonical) return where.empty() ? "" : " (" + where + ")";
  return " (" + it->second.key + (where.empty() ? "" : ", " + where) + ")";
}

std::string Provenance::Location(std::string_view canonical) const {
  auto it = origins_.find(canonical);
  if (it == origins_.end()) return "";
  const std::string where = it->second.where.ToString();
  return where.empty() ? "" : " (" + where + ")";
}

bool Provenance::FromCommandLine(std::string_view canonical) const {
  auto it = origins_.find(canonical);
  return it != origins_.end() && it->second.where.file.starts_with("--");
}

std::string Provenance::KeyOf(std::string_view canonical) const {
  auto it = origins_.find(canonical);
  return it == origins_.end() ? std::string(canonical) : it->second.key;
}

}  // namespace sextant
