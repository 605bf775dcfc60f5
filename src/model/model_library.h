// The built-in library of published architectures (facts from papers and model cards).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace sextant {

struct ModelEntry {
  ModelSpec spec;
  double published_params = 0;  // total parameters as published (model card / paper)
  // Significant digits the source states the count with ("7.61B" = 3); 0 = an exact count.
  // A figure like "2.7B" only claims 2.65B..2.75B, so agreement is judged to that precision.
  int published_digits = 0;
  double published_active_params = 0;  // MoE: parameters per token as published; 0 = not given
  std::string source;                  // where the dimensions and the count come from
  std::vector<std::string> aliases;    // other names, e.g. Primus model YAML stems

  // Half the unit of the last published digit (0 for an exact count).
  double PublishedRounding() const;
};

const std::vector<ModelEntry>& ModelLibrary();
// Case-insensitive lookup by name or alias ("llama3.1_8B", "Llama-3.1-8B", ...);
// nullptr if unknown.
const ModelEntry* FindModel(std::string_view name);
// What a description of a model states about its shape; 0 = not stated.
struct ModelDims {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t experts = 0;         // routed experts; 0 = dense (or not stated)
  int64_t ffn_hidden = 0;      // dense MLP width
  int64_t moe_ffn_hidden = 0;  // per routed expert
};
struct ModelMatch {
  const ModelEntry* entry = nullptr;  // nullptr: nothing matched
  std::string how;                    // "by name", "by name without '671B'", "by dimensions"
};
// The library model a name written by someone else means ("Qwen3-30B-A3B", "DeepSeek-V3-671B",
// "Mixtral 8x22B v0.1", "Llama-4-Maverick-400B (17B-128E)"): first by name or alias, then by
// the name without its parenthesised remarks, parameter count or version suffix, then by the
// stated dimensions alone (layers and hidden size must be stated and equal; heads and expert
// count too where stated), preferring the entry whose name shares the longest prefix. A name
// match whose entry contradicts the stated hidden size or expert count, or is dense for an MoE
// description (or the reverse), is not taken.
ModelMatch MatchModel(std::string_view name, const ModelDims& dims);
// Names closest to `name`, for "did you mean" messages.
std::vector<std::string> SimilarModelNames(std::string_view name, size_t max_results = 3);

}  // namespace sextant
