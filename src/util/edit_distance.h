// Levenshtein distance, for "did you mean ...?" suggestions everywhere a name is typed
// (configuration keys, model and GPU names).
#pragma once

#include <cstddef>
#include <string_view>

namespace sextant {

// Insertions, deletions and substitutions each cost 1.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace sextant
