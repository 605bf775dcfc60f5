#include "report/json_table.h"

namespace sextant {
namespace {

nlohmann::json CellToJson(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) {
    if (*d != *d) return nullptr;  // NaN has no JSON form
    return *d;
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return nullptr;
}

Cell CellFromJson(const nlohmann::json& json) {
  if (json.is_number_integer()) return json.get<int64_t>();
  if (json.is_number()) return json.get<double>();
  if (json.is_string()) return json.get<std::string>();
  return std::monostate{};
}

}  // namespace

nlohmann::json TableRowToJson(const Table& table, const std::vector<Cell>& row) {
  nlohmann::json object = nlohmann::json::object();
  for (size_t c = 0; c < row.size(); ++c) object[table.columns()[c].key] = CellToJson(row[c]);
  return object;
}

nlohmann::json TableRowsToJson(const Table& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.rows()) rows.push_back(TableRowToJson(table, row));
  return rows;
}

nlohmann::json TableToJson(const Table& table) {
  nlohmann::json out;
  out["name"] = table.name();
  out["title"] = table.title();
  out["columns"] = nlohmann::json::array();
  for (const auto& c : table.columns()) {
    out["columns"].push_back({{"key", c.key}, {"header", c.header}, {"precision", c.precision}});
    if (c.prose) out["columns"].back()["prose"] = true;
  }
  out["rows"] = nlohmann::json::array();
  for (const auto& row : table.rows()) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& cell : row) cells.push_back(CellToJson(cell));
    out["rows"].push_back(std::move(cells));
  }
  out["notes"] = table.notes();
  return out;
}

Table TableFromJson(const nlohmann::json& json) {
  std::vector<Column> columns;
  for (const auto& c : json.at("columns")) {
    columns.push_back({c.at("key").get<std::string>(), c.at("header").get<std::string>(),
                       c.at("precision").get<int>(), c.value("prose", false)});
  }
  Table table(json.at("name").get<std::string>(), json.at("title").get<std::string>(),
              std::move(columns));
  for (const auto& row : json.at("rows")) {
    std::vector<Cell> cells;
    for (const auto& cell : row) cells.push_back(CellFromJson(cell));
    table.AddRow(std::move(cells));
  }
  if (json.contains("notes")) {
    for (const auto& note : json.at("notes")) table.AddNote(note.get<std::string>());
  }
  return table;
}

}  // namespace sextant
