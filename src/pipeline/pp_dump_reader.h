// Reads Primus pipeline dumps. The files are untrusted: every problem is a UserError naming
// the file, the byte offset or key, and what is wrong.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/pp_dump.h"

namespace sextant {

PrimusDumpConfig ParsePrimusDumpConfig(std::string_view text, const std::string& file);
PrimusDumpRank ParsePrimusDumpRank(std::string_view text, const std::string& file, int pp_rank);
// Reads <dir>/config.json and <dir>/pp_rank_0.json .. pp_rank_<pp_size-1>.json.
PrimusDump ReadPrimusDump(const std::string& dir);

}  // namespace sextant
