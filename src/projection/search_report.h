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

// The entry as Primus experiment overrides (Megatron argument names, as
// `modules.pre_trainer.overrides` and the `--key value` command line take them), in order, and
// what they cannot express.
struct PrimusOverrides {
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> notes;
};
PrimusOverrides ToPrimusOverrides(const SearchEntry& entry, bool moe);

// The ranked list and the Pareto front as tables (for --csv-dir and --xlsx).
std::vector<Table> SearchResultTables(const SearchResult& result);

// Lossless round trip of one entry (doubles keep every bit through nlohmann's dump).
nlohmann::json SearchEntryJson(const SearchEntry& entry);
SearchEntry SearchEntryFromJson(const nlohmann::json& j);

}  // namespace sextant
