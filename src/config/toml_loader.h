// Reads TOML (TorchTitan job configs) into the same ConfigNode tree as YAML, with the
// line and column of every value.
#pragma once

#include <string>
#include <string_view>

#include "config/config_node.h"

namespace sextant {

// Tables become maps, arrays sequences, strings quoted scalars; integers, floats and
// booleans become their text; dates and times their ISO-8601 text. Syntax errors are
// UserErrors naming `file_name`, line and column.
ConfigNode ParseToml(std::string_view text, const std::string& file_name);

}  // namespace sextant
