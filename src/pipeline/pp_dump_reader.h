// Reads Primus pipeline dumps. The files are untrusted: every problem is a UserError naming
// the file, the byte offset or key, and what is wrong.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "pipeline/pp_dump.h"

namespace sextant {

PrimusDumpConfig ParsePrimusDumpConfig(std::string_view text, const std::string& file);
PrimusDumpRank ParsePrimusDumpRank(std::string_view text, const std::string& file, int pp_rank);
// Reads <dir>/config.json and <dir>/pp_rank_0.json .. pp_rank_<pp_size-1>.json.
PrimusDump ReadPrimusDump(const std::string& dir);

// Whether `dir` holds a dump: config.json and pp_rank_0.json.
bool IsPipelineDump(const std::filesystem::path& dir);
// The dump directory that `path` is one file of (its config.json or a pp_rank_N.json), or ""
// when it is not such a file. Those files are JSON but not traces: a dump is read whole.
std::string PipelineDumpOfFile(const std::string& path);

}  // namespace sextant
