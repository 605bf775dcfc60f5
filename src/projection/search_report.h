// Console tables and JSON of a `projection search` result, and the JSON form of one entry
// that MPI processes exchange.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "projection/design_space_search.h"

namespace sextant {

std::string RenderSearchResult(const SearchResult& result);
nlohmann::json SearchResultJson(const SearchResult& result);

// Lossless round trip of one entry (doubles keep every bit through nlohmann's dump).
nlohmann::json SearchEntryJson(const SearchEntry& entry);
SearchEntry SearchEntryFromJson(const nlohmann::json& j);

}  // namespace sextant
