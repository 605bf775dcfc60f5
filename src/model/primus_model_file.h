// Reading Primus model YAML files (primus/configs/models/<framework>/*.yaml): the flat maps of
// Megatron model arguments that model files, and the files they extend, set. Used to check the
// model library against Primus's own transcriptions and to read a model file's dimensions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace sextant {

// Loads `path` and the chain of files named by its `extends:` (or `bases:`) list, relative to
// the including file; later files win, maps merge deeply. Errors (missing file, YAML syntax,
// a cycle, a non-map document) are UserErrors naming the file.
YAML::Node LoadPrimusModelFile(const std::string& path);

// Megatron --moe-layer-freq: an integer N (layer i is MoE when i % N == 0), the same as a
// string, or a Python-style list expression such as "[1,0,1]" or "([0]*3+[1]*58)".
// The result has `num_layers` entries; a malformed or wrong-length pattern is a UserError
// naming `where`.
std::vector<bool> ParseMoeLayerFrequency(const YAML::Node& value, int64_t num_layers,
                                         const std::string& where);

}  // namespace sextant
