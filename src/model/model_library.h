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
// Names closest to `name`, for "did you mean" messages.
std::vector<std::string> SimilarModelNames(std::string_view name, size_t max_results = 3);

}  // namespace sextant
