// Reads YAML (yaml-cpp) into a ConfigNode tree that remembers the file:line:col of every
// value, and resolves Primus-style `extends:` chains and ${VAR} interpolation.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_node.h"
#include "config/environment.h"

namespace sextant {

// Parses one YAML document (a leading UTF-8 BOM is skipped). No interpolation, no `extends:`.
// Syntax errors, non-scalar map keys, nesting deeper than 256 levels and alias expansions
// beyond a million nodes or 64 MiB of scalar text are UserErrors naming `file_name` and the line. A
// key repeated in one map keeps its later value (as PyYAML does) and, given `notes`, adds a line
// saying so.
ConfigNode ParseYaml(std::string_view text, const std::string& file_name,
                     std::vector<std::string>* notes = nullptr);

// Reads a configuration file (YAML, or TOML when the name ends in .toml), interpolates
// ${VAR} from `env`, then resolves `extends:` (a path or list of paths relative to the
// file; bases merged in order, later wins, the file itself last). A cycle is a UserError
// listing the chain. The root must be a map (an empty file is an empty map).
// `files_read`, if given, receives every file read, bases before the files extending them;
// `notes`, if given, what ParseYaml says of repeated keys.
ConfigNode LoadConfigFile(const std::string& path, const Environment& env,
                          std::vector<std::string>* files_read = nullptr,
                          std::vector<std::string>* notes = nullptr);

// What is at a path a configuration names (a module config, model file, `extends:` base),
// looked up without throwing: kNone when nothing is there. A path that cannot be looked up at
// all (a name too long for the file system, a directory that cannot be searched) is a
// UserError at `where` naming `key` and `value` as the user wrote it (cut to 80 characters).
enum class ConfigPathKind { kNone, kRegularFile, kDirectory, kOther };
ConfigPathKind LookUpConfigPath(const std::filesystem::path& path, const SourceLocation& where,
                                std::string_view key, std::string_view value);

// Reads a whole file; UserError naming the path when it cannot, when it is not a regular
// file (a FIFO or /dev/zero would hang or never end) or when it is over 64 MiB.
std::string ReadTextFile(const std::string& path);

}  // namespace sextant
