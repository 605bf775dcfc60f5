// Console tables and JSON of a `projection search` result, and the JSON form of one entry
// that MPI processes exchange.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "projection/design_space_search.h"
#include "report/table.h"

namespace sextant {

std::string RenderSearchResult(const SearchResult& result);
nlohmann::json SearchResultJson(const SearchResult& result);

// The entry as Primus experiment overrides in the framework's own keys (Megatron argument
// names, torchtitan's dotted job-config keys, MaxText's ici_* mesh axes), as the module's
// `overrides:` and the `--key value` command line take them, in order, and what they cannot
// express. `framework` "" is Megatron. `layers` and `global_batch` size torchtitan's stages
// and batch keys.
struct PrimusOverrides {
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> notes;
};
// `gpus_per_node` splits MaxText's mesh into ici_* (inside a node) and dcn_* (across nodes)
// axes; 0 puts every axis on ici_*.
PrimusOverrides ToPrimusOverrides(const SearchEntry& entry, bool moe,
                                  const std::string& framework = "", int64_t layers = 0,
                                  int64_t global_batch = 0, int gpus_per_node = 0);

// The ranked list and the Pareto front as tables (for --csv-dir and --xlsx).
std::vector<Table> SearchResultTables(const SearchResult& result);

// Lossless round trip of one entry (doubles keep every bit through nlohmann's dump).
nlohmann::json SearchEntryJson(const SearchEntry& entry);
SearchEntry SearchEntryFromJson(const nlohmann::json& j);

}  // namespace sextant
