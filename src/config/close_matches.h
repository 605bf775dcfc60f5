// "Did you mean ...?" suggestions for misspelt configuration keys and names.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/edit_distance.h"

namespace sextant {

// Up to `max_results` candidates within a fifth of the word's length (at least 2 edits),
// closest first, ties in candidate order.
std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results = 3);

}  // namespace sextant
