// A scan of TOML text for nesting depth and size, run before toml++ parses it: toml++ (and the
// tree conversion after it) recurse once per level, so a header like [a.a.a...] 100,000 keys
// deep would overflow the stack instead of giving an error; and toml++ builds the whole tree
// before it can be counted, so `[{},{},...]` of 5 million tables would take gigabytes.
#pragma once

#include <cstdint>
#include <string_view>

#include "util/error.h"

namespace sextant {

// Throws UserError naming `file_name`:line:column of the first place where tables, dotted
// keys, inline tables and arrays nest deeper than `max_depth` levels, or where the document
// passes `max_values` values (key = value pairs, table headers and array elements), naming
// the top-level key being read.
void CheckTomlNesting(std::string_view text, const std::string& file_name, int max_depth,
                      int64_t max_values = INT64_MAX);

}  // namespace sextant
