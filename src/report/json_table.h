// JSON form of a Table: an array of row objects keyed by column key, so consumers read
// fields by name. Round-trips (used to gather results across MPI ranks).
#pragma once

#include <nlohmann/json.hpp>

#include "report/table.h"

namespace sextant {

// [{"<key>": value, ...}, ...]; empty cells become null.
nlohmann::json TableRowsToJson(const Table& table);
// One row of `table` as such an object.
nlohmann::json TableRowToJson(const Table& table, const std::vector<Cell>& row);
// {"name", "title", "columns": [{"key","header","precision"[,"prose": true]}], "rows": [[...]],
// "notes"}: the complete table, for serialisation.
nlohmann::json TableToJson(const Table& table);
Table TableFromJson(const nlohmann::json& json);

}  // namespace sextant
