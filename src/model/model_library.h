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
  std::string source;           // where the dimensions and the count come from
  std::vector<std::string> aliases;  // other names, e.g. Primus model YAML stems
};

const std::vector<ModelEntry>& ModelLibrary();
// Case-insensitive lookup by name or alias ("llama3.1_8B", "Llama-3.1-8B", ...);
// nullptr if unknown.
const ModelEntry* FindModel(std::string_view name);
// Names closest to `name`, for "did you mean" messages.
std::vector<std::string> SimilarModelNames(std::string_view name, size_t max_results = 3);

}  // namespace sextant
