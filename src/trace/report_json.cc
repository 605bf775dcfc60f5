#include "trace/report_json.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "report/json_table.h"

namespace sextant {
namespace {

// The rows of each per-rank table by the rank in their "rank" cell, found once for all ranks
// (a row whose rank is not a whole number belongs to none).
class RowsByRank {
 public:
  const std::vector<size_t>& Of(const Table* table, int64_t rank) {
    static const std::vector<size_t> kNone;
    if (table == nullptr) return kNone;
    auto [it, added] = index_.try_emplace(table);
    if (added) {
      const int column = table->ColumnIndex("rank");
      for (size_t i = 0; column >= 0 && i < table->size(); ++i) {
        const Cell& cell = table->rows()[i][static_cast<size_t>(column)];
        if (const auto* n = std::get_if<int64_t>(&cell)) {
          it->second[*n].push_back(i);
        } else if (const auto* d = std::get_if<double>(&cell);
                   d && std::abs(*d) < 0x1p62 && *d == std::trunc(*d)) {
          it->second[static_cast<int64_t>(*d)].push_back(i);
        }
      }
    }
    auto rows = it->second.find(rank);
    return rows == it->second.end() ? kNone : rows->second;
  }

 private:
  std::unordered_map<const Table*, std::unordered_map<int64_t, std::vector<size_t>>> index_;
};

// What goes under one key of a rank's object: a value, the rank's rows of a table, or its
// first row (an object, {} without one).
struct RankRows {
  const Table* table;
};
struct FirstRankRow {
  const Table* table;
};
using RankEntry = std::variant<nlohmann::json, RankRows, FirstRankRow>;

void WriteRank(const TraceReport& report, const RankReport& r, RowsByRank& by_rank,
               JsonStream& out) {
  // Sorted, as nlohmann prints an object's keys.
  std::map<std::string, RankEntry> entries;
  entries["rank"] = r.rank;
  entries["file"] = r.file;
  entries["gpu"] = r.gpu;
  entries["iterations"] = r.iterations;
  entries["world_size"] = r.world_size;
  entries["events"] = r.events;
  entries["input_bytes"] = r.input_bytes;
  entries["truncated"] = r.truncated;
  entries["warnings"] = r.warnings;
  const GpuTimeline& t = r.timeline;
  entries["timeline_us"] =
      nlohmann::json{{"total", t.total_ns / 1e3},
                     {"computation", t.computation_ns / 1e3},
                     {"communication", t.communication_ns / 1e3},
                     {"exposed_communication", t.exposed_communication_ns / 1e3},
                     {"memcpy", t.memcpy_ns / 1e3},
                     {"exposed_memcpy", t.exposed_memcpy_ns / 1e3},
                     {"memset", t.memset_ns / 1e3},
                     {"busy", t.busy_ns / 1e3},
                     {"idle", t.idle_ns / 1e3}};
  for (const char* name : {"kernels", "kernel_categories", "ops", "ops_by_name", "op_tree",
                           "roofline", "collectives", "idle"}) {
    entries[name] = RankRows{report.Find(name)};
  }
  entries["launch"] = FirstRankRow{report.Find("launch")};
  entries["iteration_times"] = RankRows{report.Find("iterations")};
  entries["iteration_stats"] = FirstRankRow{report.Find("iteration_stats")};
  // Every other per-rank table under its own name, so that the JSON holds all of them.
  const std::set<std::string> written = {"iterations", "iteration_stats", "launch"};
  for (const Table& table : report.tables) {
    if (table.ColumnIndex("rank") < 0 || RowsAreRanks(table.name()) || written.count(table.name()))
      continue;
    entries.try_emplace(table.name(), RankRows{&table});
  }
  out.BeginObject();
  for (const auto& [key, entry] : entries) {
    out.Key(key);
    if (const auto* value = std::get_if<nlohmann::json>(&entry)) {
      out.Value(*value);
    } else if (const auto* rows = std::get_if<RankRows>(&entry)) {
      out.BeginArray();
      for (size_t i : by_rank.Of(rows->table, r.rank))
        out.Value(TableRowToJson(*rows->table, rows->table->rows()[i]));
      out.End();
    } else {
      const Table* table = std::get<FirstRankRow>(entry).table;
      const std::vector<size_t>& first = by_rank.Of(table, r.rank);
      out.Value(first.empty() ? nlohmann::json::object()
                              : TableRowToJson(*table, table->rows()[first.front()]));
    }
  }
  out.End();
}

}  // namespace

void WriteReportJson(const TraceReport& report, JsonStream& out) {
  // "ranks", then the tables over all ranks (cross-rank collectives and their summaries,
  // stragglers, the spread over ranks), each under its own name; sorted, as nlohmann prints
  // an object's keys.
  std::map<std::string, const Table*> keys = {{"ranks", nullptr}};
  for (const Table& table : report.tables) {
    if (table.ColumnIndex("rank") >= 0 && !RowsAreRanks(table.name())) continue;
    keys.try_emplace(table.name(), &table);
  }
  RowsByRank by_rank;
  out.BeginObject();
  for (const auto& [key, table] : keys) {
    out.Key(key);
    out.BeginArray();
    if (table == nullptr) {
      for (const RankReport& r : report.ranks) WriteRank(report, r, by_rank, out);
    } else {
      for (const auto& row : table->rows()) out.Value(TableRowToJson(*table, row));
    }
    out.End();
  }
  out.End();
  out.Flush();
}

nlohmann::json ReportToJson(const TraceReport& report) {
  std::string text;
  JsonStream out([&](std::string_view piece) { text += piece; });
  WriteReportJson(report, out);
  return nlohmann::json::parse(text);
}

}  // namespace sextant
