#include "config/yaml_loader.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "config/interpolation.h"
#include "config/toml_loader.h"
#include "util/file_io.h"

namespace sextant {
namespace {

constexpr int kMaxDepth = 256;
// Anchors and aliases let a few lines describe an exponential tree ("billion laughs").
constexpr int64_t kMaxNodes = 1'000'000;
// Primus experiment and model files are a few KB; 16 MiB leaves room for generated ones while
// keeping a parse within a second or two (yaml-cpp reads a 50 MB scalar in ~10 s). A larger
// file is a mistake (or /dev/zero's cousin).
constexpr int64_t kMaxConfigFileBytes = int64_t{16} << 20;
// An alias is expanded by copying what its anchor names, so a 4 MB scalar aliased 500 times
// would become 2 GB of text. The converted tree's scalars and keys together may hold at most
// four times the largest file: every real document is far below it.
constexpr int64_t kMaxScalarBytes = 4 * kMaxConfigFileBytes;

struct Converter {
  const std::string& file;
  std::string_view text;  // the document, to check what yaml-cpp lets through
  std::vector<std::string>* notes = nullptr;
  int64_t nodes = 0;
  int64_t scalar_bytes = 0;
  // The keys (and sequence indices) leading to the value being converted, to name it in an
  // error.
  std::vector<std::string> path = {};

  std::string PathText() const {
    std::string text;
    for (const std::string& part : path) {
      if (!text.empty() && part.front() != '[') text += '.';
      text += part;
    }
    return ShortText(text);
  }

  // Counts `size` more bytes of converted text against kMaxScalarBytes.
  void ChargeText(size_t size, const SourceLocation& where) {
    scalar_bytes += static_cast<int64_t>(size);
    if (scalar_bytes > kMaxScalarBytes) {
      ThrowUserError(where, PathText(),
                     fmt::format("document expands to more than {} MiB of text (aliases of a "
                                 "large value are copied each time they are used)",
                                 kMaxScalarBytes >> 20));
    }
  }

  // yaml-cpp reads a line holding a bare word inside a block map ("a: 1\nb\n") as the key
  // `b` with a null value; PyYAML, which Primus loads experiments with, stops at it ("could
  // not find expected ':'"). A block-map key written without its colon is such a line.
  void RequireColonAfterKey(const YAML::Node& key) const {
    const YAML::Mark mark = key.Mark();
    if (mark.pos < 0 || key.Tag() != "?") return;  // quoted keys: their raw length differs
    size_t at = static_cast<size_t>(mark.pos) + key.Scalar().size();
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    if (at < text.size() && text[at] == ':') return;
    ThrowUserError(Where(mark), key.Scalar(),
                   "expected ':' after this key (a line with a bare word inside a map; PyYAML "
                   "and Primus reject it)");
  }

  SourceLocation Where(const YAML::Mark& mark) const {
    SourceLocation where;
    where.file = file;
    if (mark.line >= 0) where.line = mark.line + 1;
    if (mark.column >= 0) where.column = mark.column + 1;
    if (mark.pos >= 0) where.byte_offset = mark.pos;
    return where;
  }

  ConfigNode Convert(const YAML::Node& node, int depth) {
    const SourceLocation where = Where(node.Mark());
    if (++nodes > kMaxNodes) {
      ThrowUserError(where, PathText(),
                     fmt::format("document expands to more than {} values", kMaxNodes));
    }
    if (depth > kMaxDepth) {
      ThrowUserError(
          where, "",
          fmt::format("nesting deeper than {} levels at line {}", kMaxDepth, where.line));
    }
    ConfigNode out;
    out.where = where;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: out.kind = ConfigNode::Kind::kNull; break;
      case YAML::NodeType::Scalar:
        out.kind = ConfigNode::Kind::kScalar;
        ChargeText(node.Scalar().size(), where);
        out.scalar = node.Scalar();
        // yaml-cpp tags plain scalars "?" and quoted / literal ones "!".
        out.quoted = node.Tag() == "!";
        break;
      case YAML::NodeType::Sequence:
        out.kind = ConfigNode::Kind::kSequence;
        for (const YAML::Node& item : node) {
          path.push_back(fmt::format("[{}]", out.items.size()));
          out.items.push_back(Convert(item, depth + 1));
          path.pop_back();
        }
        break;
      case YAML::NodeType::Map: {
        out.kind = ConfigNode::Kind::kMap;
        for (const auto& entry : node) {
          if (!entry.first.IsScalar()) {
            ThrowUserError(Where(entry.first.Mark()), "", "map keys must be plain strings");
          }
          if (node.Style() == YAML::EmitterStyle::Block && entry.second.IsNull()) {
            RequireColonAfterKey(entry.first);
          }
          // A repeated key: the later value wins (in the first one's place), as in Python's
          // yaml.safe_load; said, since one of the two values is silently dropped.
          const std::string& key = entry.first.Scalar();
          ChargeText(key.size(), Where(entry.first.Mark()));
          path.push_back(key.empty() ? std::string("''") : key.substr(0, 100));
          ConfigNode value = Convert(entry.second, depth + 1);
          path.pop_back();
          value.key_where = Where(entry.first.Mark());
          if (const ConfigNode* first = out.Find(entry.first.Scalar());
              first != nullptr && notes != nullptr) {
            notes->push_back(fmt::format(
                "{}: key '{}' repeated (first at line {}): the later value {} is used, as "
                "Python's yaml.safe_load does",
                value.key_where.ToString(), entry.first.Scalar(), first->key_where.line,
                RenderValue(value)));
          }
          out.Set(entry.first.Scalar(), std::move(value));
        }
        break;
      }
    }
    return out;
  }
};

std::string DisplayPath(const std::filesystem::path& path) {
  return path.lexically_normal().string();
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Files already resolved in this load, by identity: a base reached along several paths (a
// diamond, or a file extending the same base twice) is read and merged once, so a chain of n
// such files costs n loads, not 2^n.
using LoadedFiles = std::map<std::string, ConfigNode>;

ConfigNode LoadRecursive(const std::filesystem::path& path, const Environment& env,
                         std::vector<std::string>& stack, LoadedFiles& loaded,
                         std::vector<std::string>* files_read, std::vector<std::string>* notes) {
  const std::string shown = DisplayPath(path);
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  const std::string identity = ec ? shown : canonical.string();
  if (std::find(stack.begin(), stack.end(), identity) != stack.end()) {
    std::string chain;
    for (const std::string& file : stack) chain += file + " -> ";
    ThrowUserError(SourceLocation{shown}, "extends", "inheritance cycle: " + chain + identity);
  }
  if (stack.size() >= 64) {
    ThrowUserError(SourceLocation{shown}, "extends", "inheritance chain deeper than 64 files");
  }
  if (auto it = loaded.find(identity); it != loaded.end()) return it->second;

  const std::string text = ReadTextFile(shown);
  ConfigNode root =
      EndsWith(shown, ".toml") ? ParseToml(text, shown) : ParseYaml(text, shown, notes);
  if (root.kind == ConfigNode::Kind::kNull) root = ConfigNode::Map(SourceLocation{shown, 1, 1});
  if (!root.IsMap()) {
    ThrowUserError(root.where, "", "the top level of a configuration file must be a map of keys");
  }
  InterpolateTree(root, env);

  // Primus experiment files say `extends:`, its model files `bases:`; both name base files.
  std::vector<const ConfigNode*> bases;
  for (const char* key : {"bases", "extends"}) {
    const ConfigNode* list = root.Find(key);
    if (list == nullptr || list->IsNull()) continue;
    if (list->IsScalar()) {
      bases.push_back(list);
    } else if (list->IsSequence()) {
      for (const ConfigNode& item : list->items) bases.push_back(&item);
    } else {
      ThrowUserError(list->where, key, "expected a file name or a list of file names");
    }
  }

  stack.push_back(identity);
  ConfigNode merged = ConfigNode::Map(root.where);
  for (const ConfigNode* base : bases) {
    if (!base->IsScalar() || base->IsNull()) {
      ThrowUserError(base->where, "extends", "expected a file name, found " + RenderValue(*base));
    }
    std::filesystem::path base_path(base->scalar);
    if (base_path.is_relative()) base_path = path.parent_path() / base_path;
    if (LookUpConfigPath(base_path, base->where, "extends", base->scalar) ==
        ConfigPathKind::kNone) {
      ThrowUserError(base->where, "extends",
                     fmt::format("no such file: {} (looked for {})", ShortText(base->scalar),
                                 ShortText(DisplayPath(base_path), 200)));
    }
    MergeInto(merged, LoadRecursive(base_path, env, stack, loaded, files_read, notes));
  }
  stack.pop_back();

  root.Erase("bases");
  root.Erase("extends");
  MergeInto(merged, root);
  if (files_read != nullptr) files_read->push_back(shown);
  return loaded.emplace(identity, std::move(merged)).first->second;
}

}  // namespace

ConfigPathKind LookUpConfigPath(const std::filesystem::path& path, const SourceLocation& where,
                                std::string_view key, std::string_view value) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    ThrowUserError(where, key,
                   fmt::format("cannot look up \"{}\": {}", ShortText(value), ec.message()));
  }
  switch (status.type()) {
    case std::filesystem::file_type::not_found:
    case std::filesystem::file_type::none: return ConfigPathKind::kNone;
    case std::filesystem::file_type::regular: return ConfigPathKind::kRegularFile;
    case std::filesystem::file_type::directory: return ConfigPathKind::kDirectory;
    default: return ConfigPathKind::kOther;
  }
}

std::string ReadTextFile(const std::string& path) {
  // util's reader refuses directories, FIFOs and devices (/dev/zero would never end) and
  // stops at the size limit.
  return ReadFile(path, kMaxConfigFileBytes);
}

ConfigNode ParseYaml(std::string_view text, const std::string& file_name,
                     std::vector<std::string>* notes) {
  // A UTF-8 byte-order mark, as Windows editors write it: PyYAML skips it; yaml-cpp would
  // read it as part of the first key.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  YAML::Node document;
  try {
    document = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own recursion guard, reached before the tree is converted.
    SourceLocation where{file_name};
    if (e.mark.line >= 0) where.line = e.mark.line + 1;
    if (e.mark.column >= 0) where.column = e.mark.column + 1;
    ThrowUserError(where, "",
                   fmt::format("nesting deeper than {} levels at line {}", kMaxDepth, where.line));
  } catch (const YAML::Exception& e) {
    SourceLocation where{file_name};
    if (e.mark.line >= 0) where.line = e.mark.line + 1;
    if (e.mark.column >= 0) where.column = e.mark.column + 1;
    ThrowUserError(where, "", "YAML syntax error: " + e.msg);
  }
  Converter converter{file_name, text, notes};
  try {
    return converter.Convert(document, 0);
  } catch (const YAML::Exception& e) {
    SourceLocation where{file_name};
    if (e.mark.line >= 0) where.line = e.mark.line + 1;
    ThrowUserError(where, "", "YAML error: " + e.msg);
  }
}

ConfigNode LoadConfigFile(const std::string& path, const Environment& env,
                          std::vector<std::string>* files_read, std::vector<std::string>* notes) {
  std::vector<std::string> stack;
  LoadedFiles loaded;
  return LoadRecursive(std::filesystem::path(path), env, stack, loaded, files_read, notes);
}

}  // namespace sextant
