// Typed, located reads of the final configuration tree (all layers merged), for the
// framework adapters. Every read records which configuration key fed which canonical
// (Megatron-named) setting, so that validation errors can name the key the user wrote
// and the file:line where it was set.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_node.h"
#include "job/size_limits.h"

namespace sextant {

class ConfigReader {
 public:
  explicit ConfigReader(const ConfigNode& root) : root_(root) {}

  const ConfigNode& Root() const { return root_; }
  // nullptr when the key is absent; a null value is returned (check IsNull()).
  const ConfigNode* Find(std::string_view path) const { return root_.FindPath(path); }
  bool IsSet(std::string_view path) const;  // present and not null

  std::optional<int64_t> Int(std::string_view path) const;
  int64_t Int(std::string_view path, int64_t fallback) const;
  // An integer that must lie in `range` (a size or count): UserError naming the key, the
  // value (cut to 80 characters), the range and the file:line when it does not.
  std::optional<int64_t> SizeInt(std::string_view path, SizeRange range) const;
  int64_t SizeInt(std::string_view path, int64_t fallback, SizeRange range) const;
  // A canonical size read with its SizeRangeOf range ("seq_length"); a plain Int otherwise.
  std::optional<int64_t> Size(std::string_view canonical) const;
  int64_t Size(std::string_view canonical, int64_t fallback) const;
  std::optional<double> Double(std::string_view path) const;
  double Double(std::string_view path, double fallback) const;
  std::optional<bool> Bool(std::string_view path) const;
  bool Bool(std::string_view path, bool fallback) const;
  std::optional<std::string> String(std::string_view path) const;
  std::string String(std::string_view path, std::string_view fallback) const;
  // A list of strings written as a YAML list or as one comma-separated string.
  std::vector<std::string> StringList(std::string_view path) const;

  SourceLocation Where(std::string_view path) const;
  // UserError "<file:line:col>: <path>: <reason>", the reason flattened to one line and cut;
  // for an absent key, the location of its nearest present parent (or of the whole file).
  [[noreturn]] void Fail(std::string_view path, std::string_view reason) const;

 private:
  const ConfigNode& root_;
};

// Which configuration key (and where) each canonical setting came from.
class Provenance {
 public:
  void Record(std::string canonical, std::string key, SourceLocation where);
  // " (tensor_parallel_degree, exp.yaml:12)" / " (--micro-batch-size)" / "" if unknown.
  std::string Describe(std::string_view canonical) const;
  // " (exp.yaml:12)" / " (--micro-batch-size)" / "": where alone, for text that names the key.
  std::string Location(std::string_view canonical) const;
  // The configuration key the user wrote for a canonical setting (the canonical name if
  // unknown).
  std::string KeyOf(std::string_view canonical) const;
  // Whether the setting was given on the command line (a flag or a --key override).
  bool FromCommandLine(std::string_view canonical) const;

 private:
  struct Origin {
    std::string key;
    SourceLocation where;
  };
  std::map<std::string, Origin, std::less<>> origins_;
};

}  // namespace sextant
