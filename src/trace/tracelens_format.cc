#include "trace/tracelens_format.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "trace/gpu_timeline.h"
#include "trace/perf_sheets.h"

namespace sextant {
namespace {

struct ColumnName {
  const char* tracelens;  // TraceLens's header
  const char* ours;       // the key of Sextant's column holding the same numbers
  double scale = 1;       // TraceLens's unit per ours (1e-3: its ms from our µs)
};

struct TableName {
  const char* tracelens;  // TraceLens's file / sheet name
  const char* ours;
  std::vector<ColumnName> columns;
  // TraceLens writes no file for it when it has no rows (the op tables of a trace without
  // ops, a perf sheet without such calls).
  bool omit_when_empty = false;
};

// Each of these tables matches TraceLens's row by row on the corpus's golden reports
// (golden_report_test.cc); kernel_summary's "Parent op category" is not given.
// A perf sheet's columns (perf_sheets.h): its parameters keep TraceLens's names behind
// "param: ", the rest are these.
const std::vector<ColumnName>& PerfSheetColumns() {
  static const std::vector<ColumnName> columns = {{"is_recompute", "is_recompute"},
                                                  {"GFLOPS_first", "gflops"},
                                                  {"Data Moved (MB)_first", "mib"},
                                                  {"FLOPS/Byte_first", "flops_per_byte"},
                                                  {"TB/s_mean", "tbps_mean"},
                                                  {"TB/s_median", "tbps_median"},
                                                  {"TB/s_std", "tbps_std"},
                                                  {"TB/s_min", "tbps_min"},
                                                  {"TB/s_max", "tbps_max"},
                                                  {"TFLOPS/s_mean", "tflops_mean"},
                                                  {"TFLOPS/s_median", "tflops_median"},
                                                  {"TFLOPS/s_std", "tflops_std"},
                                                  {"TFLOPS/s_min", "tflops_min"},
                                                  {"TFLOPS/s_max", "tflops_max"},
                                                  {"process_name_first", "process_name"},
                                                  {"process_label_first", "process_label"},
                                                  {"thread_name_first", "thread_name"},
                                                  {"Input Dims_first", "input_dims"},
                                                  {"Input type_first", "input_types"},
                                                  {"Input Strides_first", "input_strides"},
                                                  {"Concrete Inputs_first", "concrete_inputs"},
                                                  {"Kernel Time (µs)_mean", "kernel_us_mean"},
                                                  {"Kernel Time (µs)_median", "kernel_us_median"},
                                                  {"Kernel Time (µs)_std", "kernel_us_std"},
                                                  {"Kernel Time (µs)_min", "kernel_us_min"},
                                                  {"Kernel Time (µs)_max", "kernel_us_max"},
                                                  {"Kernel Time (µs)_sum", "kernel_us_sum"},
                                                  {"name_count", "count"}};
  return columns;
}

// The columns that name a group of op calls by its argument records, as TraceLens groups
// ops_unique_args and unified_perf_summary, followed by the table's own (`rest`).
std::vector<ColumnName> OpRecordColumns(std::initializer_list<ColumnName> rest) {
  std::vector<ColumnName> columns = {{"name", "name"},
                                     {"op category", "category"},
                                     {"process_name", "process_name"},
                                     {"process_label", "process_label"},
                                     {"thread_name", "thread_name"},
                                     {"Input Dims", "input_dims"},
                                     {"Input type", "input_types"},
                                     {"Input Strides", "input_strides"},
                                     {"Concrete Inputs", "concrete_inputs"},
                                     {"is_recompute", "is_recompute"}};
  columns.insert(columns.end(), rest);
  return columns;
}

const std::vector<TableName>& Names() {
  static const std::vector<TableName> names = [] {
    std::vector<TableName> n = {
        {"kernel_summary",
         "kernel_summary",
         {{"Parent cpu_op", "parent_op"},
          {"Kernel name", "name"},
          {"Kernel stream", "stream"},
          {"Kernel duration (µs)_sum", "total_us"},
          {"Kernel duration (µs)_count", "count"},
          {"Kernel duration (µs)_mean", "mean_us"},
          {"Kernel duration (µs)_min", "min_us"},
          {"Kernel duration (µs)_max", "max_us"},
          {"Percent of kernels time (%)", "percent_of_kernels"},
          {"Percent of total time (%)", "percent_of_total"}}},
        {"short_kernel_histogram",
         "short_kernel_histogram",
         {{"bin_start", "bin_start_us"}, {"bin_end", "bin_end_us"}, {"count", "count"}}},
        {"short_kernels_summary",
         "short_kernels_summary",
         {{"Parent cpu_op", "parent_op"},
          {"Input dims", "input_dims"},
          {"Input strides", "input_strides"},
          {"Concrete Inputs", "concrete_inputs"},
          {"Kernel name", "name"},
          {"Short Kernel duration (µs) sum", "total_us"},
          {"Short Kernel count", "count"},
          {"Short Kernel duration (µs) mean", "mean_us"},
          {"Short Kernel duration (µs) percent of total time", "percent_of_total"}}},
        {"ops_summary",
         "launcher_ops",
         {{"name", "name"},
          {"is_recompute", "is_recompute"},
          {"total_direct_kernel_time_sum", "direct_kernel_us"},
          {"total_subtree_kernel_time_sum", "subtree_kernel_us"},
          {"total_direct_kernel_time_ms", "direct_kernel_us", 1e-3},
          {"total_subtree_kernel_time_ms", "subtree_kernel_us", 1e-3},
          {"Count", "count"},
          {"Categories", "categories"},
          {"Percentage (%)", "percent"},
          {"Cumulative Percentage (%)", "cumulative_percent"}},
         true},
        {"ops_unique_args", "launcher_op_args",
         OpRecordColumns({{"operation_count", "count"},
                          {"total_direct_kernel_time_mean", "direct_us_mean"},
                          {"total_subtree_kernel_time_mean", "subtree_us_mean"},
                          {"total_direct_kernel_time_median", "direct_us_median"},
                          {"total_subtree_kernel_time_median", "subtree_us_median"},
                          {"total_direct_kernel_time_std", "direct_us_std"},
                          {"total_subtree_kernel_time_std", "subtree_us_std"},
                          {"total_direct_kernel_time_min", "direct_us_min"},
                          {"total_subtree_kernel_time_min", "subtree_us_min"},
                          {"total_direct_kernel_time_max", "direct_us_max"},
                          {"total_subtree_kernel_time_max", "subtree_us_max"},
                          {"total_direct_kernel_time_sum", "direct_us_sum"},
                          {"total_subtree_kernel_time_sum", "subtree_us_sum"},
                          {"Percentage (%)", "percent"},
                          {"Cumulative Percentage (%)", "cumulative_percent"}}),
         true},
        {"unified_perf_summary", "unified_perf",
         OpRecordColumns({{"operation_count", "count"},
                          {"total_duration_us", "cpu_us_sum"},
                          {"mean_duration_us", "cpu_us_mean"},
                          {"std_duration_us", "cpu_us_std"},
                          {"GFLOPS", "gflops"},
                          {"Data Moved (MB)", "mib"},
                          {"FLOPS/Byte", "flops_per_byte"},
                          {"TB/s_mean", "tbps_mean"},
                          {"TB/s_std", "tbps_std"},
                          {"TFLOPS/s_mean", "tflops_mean"},
                          {"TFLOPS/s_std", "tflops_std"},
                          {"Kernel Time (µs)_mean", "kernel_us_mean"},
                          {"Kernel Time (µs)_std", "kernel_us_std"},
                          {"Kernel Time (µs)_sum", "kernel_us_sum"},
                          {"duration_us_median", "cpu_us_median"},
                          {"duration_us_min", "cpu_us_min"},
                          {"duration_us_max", "cpu_us_max"},
                          {"TB/s_median", "tbps_median"},
                          {"TB/s_min", "tbps_min"},
                          {"TB/s_max", "tbps_max"},
                          {"TFLOPS/s_median", "tflops_median"},
                          {"TFLOPS/s_min", "tflops_min"},
                          {"TFLOPS/s_max", "tflops_max"},
                          {"Kernel Time (µs)_median", "kernel_us_median"},
                          {"Kernel Time (µs)_min", "kernel_us_min"},
                          {"Kernel Time (µs)_max", "kernel_us_max"},
                          {"kernel_details_summary", "kernels"},
                          {"trunc_kernel_details", "kernels_short"},
                          {"perf_params", "perf_params"},
                          {"has_perf_model", "has_perf_model"},
                          {"Percentage (%)", "percent"},
                          {"Cumulative Percentage (%)", "cumulative_percent"}}),
         true},
        {"coll_analysis",
         "collective_calls",
         {{"rank", "rank"},
          {"Process Group Name", "process_group"},
          {"Process Group Ranks", "pg_ranks"},
          {"Collective name", "collective"},
          {"Group size", "group_size"},
          {"dtype", "dtype"},
          {"In msg nelems", "in_nelems"},
          {"Out msg nelems", "out_nelems"},
          {"In split size", "in_split"},
          {"Out split size", "out_split"},
          {"stream", "stream"},
          {"In msg size (MB)_first", "in_mib"},
          {"Out msg size (MB)_first", "out_mib"},
          {"dur_sum", "dur_us_sum"},
          {"dur_mean", "dur_us_mean"},
          {"dur_std", "dur_us_std"},
          {"dur_min", "dur_us_min"},
          {"dur_max", "dur_us_max"},
          {"operation_count", "count"}},
         true},
        {"ops_summary_by_category",
         "ops_by_category",
         {{"op category", "category"},
          {"is_recompute", "is_recompute"},
          {"Count", "count"},
          {"total_direct_kernel_time_ms", "direct_kernel_ms"},
          {"Percentage (%)", "percent"},
          {"Cumulative Percentage (%)", "cumulative_percent"}},
         true},
    };
    // The perf sheets: name, then the parameters (the columns between "name" and
    // "is_recompute" of Sextant's table; filled in per table below), then the rest.
    for (const auto& [table, sheet] : PerfSheetNames()) {
      std::vector<ColumnName> columns = {{"name", "name"}};
      for (const ColumnName& c : PerfSheetColumns()) columns.push_back(c);
      n.push_back({sheet.data(), table.data(), std::move(columns), true});
    }
    return n;
  }();
  return names;
}

const Table* FindTable(const RankReport& rank, std::string_view name) {
  for (const Table& t : rank.tables) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

// TraceLens writes its recompute flag as Python prints a bool.
Cell PythonBool(const Cell& yes_no) {
  return std::string(std::get<std::string>(yes_no) == "yes" ? "True" : "False");
}

}  // namespace

std::vector<Table> TraceLensTables(const RankReport& rank) {
  std::vector<Table> out;
  // With recompute detection TraceLens splits its timeline (and its op tables) by the flag.
  const Table* recompute = FindTable(rank, "recompute_timeline");
  // gpu_timeline: TraceLens's rows in its order, "time ms" and "percent" of total_time.
  Table timeline("gpu_timeline", "GPU timeline",
                 {{"type", "type", 0}, {"time ms", "time ms", 6}, {"percent", "percent", 4}});
  if (recompute != nullptr) {
    timeline = Table("gpu_timeline", "GPU timeline",
                     {{"type", "type", 0},
                      {"time ms", "time ms", 6},
                      {"percent", "percent", 4},
                      {"is_recompute", "is_recompute", 0}});
    const int flag = recompute->ColumnIndex("is_recompute"), type = recompute->ColumnIndex("type"),
              ms = recompute->ColumnIndex("time_ms"), pct = recompute->ColumnIndex("percent");
    for (const auto& row : recompute->rows()) {
      timeline.AddRow({row[static_cast<size_t>(type)], row[static_cast<size_t>(ms)],
                       row[static_cast<size_t>(pct)], PythonBool(row[static_cast<size_t>(flag)])});
    }
  } else {
    const double total = static_cast<double>(rank.timeline.total_ns);
    for (const auto& [type, ns] : TraceLensTimelineRows(rank.timeline)) {
      timeline.AddRow({std::string(type), static_cast<double>(ns) / 1e6,
                       total > 0 ? 100.0 * static_cast<double>(ns) / total : 0.0});
    }
  }
  out.push_back(std::move(timeline));
  for (const TableName& name : Names()) {
    const Table* ours = FindTable(rank, name.ours);
    if (ours == nullptr || (ours->empty() && name.omit_when_empty)) continue;
    bool perf_sheet = false;
    for (const auto& [table, sheet] : PerfSheetNames())
      perf_sheet = perf_sheet || table == name.ours;
    // A perf sheet's parameters sit between its "name" and "is_recompute" columns.
    std::vector<ColumnName> wanted = name.columns;
    std::vector<std::string> param_headers;
    if (perf_sheet) {
      const int first = ours->ColumnIndex("name") + 1, last = ours->ColumnIndex("is_recompute");
      for (int c = first; c < last; ++c)
        param_headers.push_back("param: " + ours->columns()[static_cast<size_t>(c)].key);
      for (int c = first; c < last; ++c) {
        wanted.insert(wanted.begin() + (c - first + 1),
                      ColumnName{param_headers[static_cast<size_t>(c - first)].c_str(),
                                 ours->columns()[static_cast<size_t>(c)].key.c_str()});
      }
    }
    // A trace without CPU ops (no kernel has a launching op): TraceLens's GPU-only report has
    // no op columns.
    const int parent = ours->ColumnIndex("parent_op");
    bool gpu_only = parent >= 0 && !ours->empty();
    for (const auto& row : ours->rows()) {
      gpu_only = gpu_only && std::get<std::string>(row[static_cast<size_t>(parent)]).empty();
    }
    // unified_perf_summary has rate columns only when some op has a perf model (TraceLens
    // adds them from its perf-model rows).
    const int modelled = ours->ColumnIndex("has_perf_model");
    bool any_model = modelled < 0;
    for (const auto& row : ours->rows()) {
      any_model = any_model || std::get<std::string>(row[static_cast<size_t>(modelled)]) == "yes";
    }
    std::vector<Column> columns;
    std::vector<int> from;
    std::vector<double> scale;
    for (const ColumnName& c : wanted) {
      const int index = ours->ColumnIndex(c.ours);
      if (index < 0) continue;
      const std::string key = c.ours;
      if (!any_model && (key == "gflops" || key == "mib" || key == "flops_per_byte" ||
                         key.rfind("tbps_", 0) == 0 || key.rfind("tflops_", 0) == 0)) {
        continue;
      }
      if (gpu_only && (key == "parent_op" || key == "input_dims" || key == "input_strides" ||
                       key == "concrete_inputs")) {
        continue;
      }
      if (key == "is_recompute" && recompute == nullptr) continue;
      from.push_back(index);
      scale.push_back(c.scale);
      Column column = ours->columns()[static_cast<size_t>(index)];
      column.key = c.tracelens;
      column.header = c.tracelens;
      columns.push_back(std::move(column));
    }
    // Process and thread names come from metadata events; TraceLens writes "Unknown" for a
    // thread or process that has none.
    std::vector<bool> unknown_when_empty;
    for (const Column& column : columns) {
      const std::string& k = column.key;
      unknown_when_empty.push_back(k.rfind("process_name", 0) == 0 ||
                                   k.rfind("process_label", 0) == 0 ||
                                   k.rfind("thread_name", 0) == 0);
    }
    Table t(name.tracelens, ours->title(), columns);
    for (const auto& row : ours->rows()) {
      std::vector<Cell> cells;
      cells.reserve(from.size());
      for (size_t c = 0; c < from.size(); ++c) {
        const Cell& cell = row[static_cast<size_t>(from[c])];
        if (columns[c].key == "is_recompute" || columns[c].key == "has_perf_model")
          cells.push_back(PythonBool(cell));
        else if (unknown_when_empty[c] && std::holds_alternative<std::string>(cell) &&
                 std::get<std::string>(cell).empty())
          cells.push_back(std::string("Unknown"));  // no metadata event names it
        else if (scale[c] != 1 && std::holds_alternative<double>(cell))
          cells.push_back(std::get<double>(cell) * scale[c]);
        else
          cells.push_back(cell);
      }
      t.AddRow(std::move(cells));
    }
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

// `ours` with only the `columns` named, under TraceLens's headers, scaled to its units.
Table Renamed(const Table& ours, const char* name, const std::vector<ColumnName>& columns) {
  std::vector<Column> out_columns;
  std::vector<int> from;
  std::vector<double> scale;
  for (const ColumnName& c : columns) {
    const int index = ours.ColumnIndex(c.ours);
    if (index < 0) continue;
    Column column = ours.columns()[static_cast<size_t>(index)];
    column.key = column.header = c.tracelens;
    out_columns.push_back(std::move(column));
    from.push_back(index);
    scale.push_back(c.scale);
  }
  Table t(name, ours.title(), std::move(out_columns));
  for (const auto& row : ours.rows()) {
    std::vector<Cell> cells;
    for (size_t c = 0; c < from.size(); ++c) {
      const Cell& cell = row[static_cast<size_t>(from[c])];
      cells.push_back(scale[c] != 1 && std::holds_alternative<double>(cell)
                          ? Cell(std::get<double>(cell) * scale[c])
                          : cell);
    }
    t.AddRow(std::move(cells));
  }
  return t;
}

}  // namespace

std::vector<Table> TraceLensMultiRankTables(const TraceReport& report) {
  std::vector<Table> out;
  if (report.ranks.size() < 2) return out;
  if (const Table* sync = report.Find("collective_sync"); sync && !sync->empty()) {
    std::vector<ColumnName> columns = {
        {"Collective name", "collective"}, {"dtype", "dtype"},
        {"In msg nelems", "in_nelems"},    {"Process Group Name", "process_group"},
        {"Group size", "group_size"},      {"Full msg size (MB)", "message_mib"}};
    // TraceLens's bandwidths are MiB / 1024 per second: GiB/s under the name GB/s.
    constexpr double kGiBPerGB = 1e9 / (1024.0 * 1024.0 * 1024.0);
    // TraceLens's "<metric>_<stat>" headers and ours ("<key>_<stat>"), kept alive for the
    // ColumnName pointers.
    static const std::vector<std::pair<std::string, std::string>> stats = [] {
      std::vector<std::pair<std::string, std::string>> out;
      for (const auto& [metric, key] :
           {std::pair{"comm_latency", "latency_us"},
            std::pair{"skew in start time", "start_skew_us"},
            std::pair{"skew in end time", "end_skew_us"}, std::pair{"algo bw (GB/s)", "algbw_gbps"},
            std::pair{"bus bw (GB/s)", "busbw_gbps"}}) {
        for (const char* stat : {"mean", "median", "min", "max"}) {
          out.emplace_back(fmt::format("{}_{}", metric, stat), fmt::format("{}_{}", key, stat));
        }
      }
      return out;
    }();
    for (const auto& [header, key] : stats) {
      const bool bandwidth = key.find("bw_") != std::string::npos;
      columns.push_back({header.c_str(), key.c_str(), bandwidth ? kGiBPerGB : 1.0});
    }
    columns.push_back({"count", "count"});
    columns.push_back({"Total comm latency (ms)", "total_latency_ms"});
    out.push_back(Renamed(*sync, "nccl_summary_implicit_sync", columns));
  }
  // Written without rows too where the ranks ran collectives whose kernels carry no metadata,
  // as TraceLens writes it then.
  const bool collectives = std::any_of(report.ranks.begin(), report.ranks.end(),
                                       [](const RankReport& r) { return !r.collectives.empty(); });
  if (const Table* calls = report.Find("collective_calls");
      calls != nullptr && (!calls->empty() || collectives)) {
    for (const TableName& name : Names()) {
      if (std::string_view(name.ours) == "collective_calls") {
        out.push_back(Renamed(*calls, "nccl_summary_long", name.columns));
      }
    }
  }
  if (const Table* stragglers = report.Find("stragglers"); stragglers && !stragglers->empty()) {
    Table t = Renamed(*stragglers, "straggler_summary",
                      {{"rank", "rank"},
                       {"total_wait_time_us", "total_wait_us"},
                       {"mean_wait_time_us", "mean_wait_us"},
                       {"times_arrived_last", "times_last"},
                       {"times_arrived_first", "times_first"},
                       {"pct_arrived_last", "last_percent"},
                       {"num_collectives", "collectives"},
                       {"total_nccl_dur_us", "collective_us"}});
    // TraceLens rounds this sheet's times and percentage to one decimal.
    Table rounded(t.name(), t.title(), t.columns());
    for (std::vector<Cell> row : t.rows()) {
      for (Cell& cell : row) {
        if (std::holds_alternative<double>(cell))
          cell = std::round(std::get<double>(cell) * 10) / 10;
      }
      rounded.AddRow(std::move(row));
    }
    out.push_back(std::move(rounded));
  }
  return out;
}

}  // namespace sextant
