// A configuration tree read from YAML or TOML. Every value keeps the place it was
// written (file:line:col) so that an error found much later can still point at it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/error.h"

namespace sextant {

struct ConfigField;

// Hashes std::string and std::string_view alike, so a map keyed by std::string can be
// searched with a string_view without building a string.
struct ConfigKeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
};

struct ConfigNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };

  Kind kind = Kind::kNull;
  std::string scalar;             // text of a scalar, after ${VAR} interpolation
  bool quoted = false;            // a quoted YAML scalar or a TOML string: never read as null
  std::vector<ConfigNode> items;  // kSequence
  // kMap, in file order. Add and remove keys with Set / Erase (a field appended directly is
  // still found, by a slower scan, until the next Set).
  std::vector<ConfigField> fields;
  SourceLocation where;
  // For a value of a map read from a file: where its key was written (a map's or a list's own
  // `where` is its first entry's).
  SourceLocation key_where;

  static ConfigNode Scalar(std::string text, SourceLocation where, bool quoted = false);
  static ConfigNode Map(SourceLocation where = {});

  bool IsMap() const { return kind == Kind::kMap; }
  bool IsSequence() const { return kind == Kind::kSequence; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  // YAML null, or an unquoted scalar spelled null / ~ / None (as interpolation can
  // produce, e.g. "${X:null}"). An empty string from "${X:}" is a string, not null.
  bool IsNull() const;

  // Map access by one key (no dots). Find on a non-map returns nullptr.
  const ConfigNode* Find(std::string_view key) const;
  ConfigNode* Find(std::string_view key);
  // Replaces the value of `key` (keeping its position) or appends it. Requires a map.
  void Set(std::string_view key, ConfigNode value);
  bool Erase(std::string_view key);

  // Dotted-path access into nested maps: "parallelism.tensor_parallel_degree".
  const ConfigNode* FindPath(std::string_view path) const;
  // Creates intermediate maps as needed; an intermediate that is not a map is replaced.
  void SetPath(std::string_view path, ConfigNode value);

  // Number of nodes in this tree (this one included).
  int64_t CountNodes() const;

 private:
  // Position of each key in `fields`, kept for maps of more than a few keys so that merging
  // and overriding n keys costs O(n), not O(n^2). Valid while its size equals fields.size().
  std::unordered_map<std::string, size_t, ConfigKeyHash, std::equal_to<>> index_;
  bool IndexValid() const;
  void Reindex();
};

// One key of a map. Named like std::pair's members so that structured bindings and
// `.first` / `.second` read naturally.
struct ConfigField {
  std::string first;
  ConfigNode second;
};

// Deep merge: maps merge key by key, recursively; anything else in `over` replaces
// what is in `base` (later wins). Used for `extends:` and for configuration layers.
void MergeInto(ConfigNode& base, const ConfigNode& over);

// Every dotted path to a leaf (non-map) value, in order: "a", "b.c", ...
std::vector<std::string> LeafPaths(const ConfigNode& root);

// Typed reads of a scalar. Each throws UserError naming `key` and the node's location
// when the text does not have the required form. A null node gives nullopt.
std::optional<int64_t> ReadInt(const ConfigNode& node, std::string_view key);
std::optional<double> ReadDouble(const ConfigNode& node, std::string_view key);
std::optional<bool> ReadBool(const ConfigNode& node, std::string_view key);
std::optional<std::string> ReadString(const ConfigNode& node, std::string_view key);

// Short rendering of a value for messages: the scalar text, "[a, b]" or "{...}", one line and
// at most about 80 characters (ShortText).
std::string RenderValue(const ConfigNode& node);

// ShortText (cutting a value for a message) is in util/error.h.

}  // namespace sextant
