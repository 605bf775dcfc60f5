#include "trace/trace_report.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "hardware/hardware_library.h"
#include "report/console_table.h"
#include "report/html_writer.h"
#include "report/json_table.h"
#include "trace/annotation_summary.h"
#include "trace/category_colors.h"
#include "trace/kernel_name.h"
#include "trace/kernel_summary.h"
#include "trace/launch_stats.h"
#include "trace/op_arguments.h"
#include "trace/op_breakdown.h"
#include "trace/op_category.h"
#include "trace/perf_sheets.h"
#include "trace/rank_notes.h"
#include "trace/recompute.h"
#include "trace/report_page.h"
#include "trace/report_tables.h"
#include "trace/roofline.h"
#include "trace/short_kernels.h"
#include "trace/tracelens_jax.h"
#include "trace/unified_perf.h"
#include "util/close_matches.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double Us(double ns) { return ns / 1e3; }
double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

Column RankColumn() { return {"rank", "rank", 0}; }

std::string YesNo(bool b) { return b ? "yes" : "no"; }

// Each row's percent of the weights' total, and the running total of those percents (the
// rows in table order, largest first).
std::vector<std::pair<double, double>> Shares(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w;
  std::vector<std::pair<double, double>> shares;
  double cumulative = 0;
  for (double w : weights) {
    cumulative += Pct(w, total);
    shares.emplace_back(Pct(w, total), cumulative);
  }
  return shares;
}

Table TimelineTable(int64_t rank, const GpuTimeline& t) {
  // Row names and order follow TraceLens's gpu_timeline sheet, plus memset_time.
  Table table("gpu_timeline", "GPU timeline (TraceLens definitions)",
              {RankColumn(),
               {"type", "type", 0},
               {"time_ms", "time (ms)", 3},
               {"percent", "% of total", 2}});
  auto rows = TraceLensTimelineRows(t);
  rows.emplace_back("memset_time", t.memset_ns);
  for (const auto& [name, ns] : rows) {
    table.AddRow({rank, std::string(name), Ms(ns),
                  Pct(static_cast<double>(ns), static_cast<double>(t.total_ns))});
  }
  return table;
}

// TraceLens's timeline with recompute detection: the activities outside activation
// recomputation and those inside, each as a timeline of its own (the second's idle time is
// everything it does not cover).
Table RecomputeTimelineTable(int64_t rank, const GpuTimeline& outside, const GpuTimeline& inside) {
  Table table("recompute_timeline",
              "GPU timeline split by activation recomputation (TraceLens definitions)",
              {RankColumn(),
               {"is_recompute", "recompute", 0},
               {"type", "type", 0},
               {"time_ms", "time (ms)", 3},
               {"percent", "% of total", 2}});
  for (const auto* t : {&outside, &inside}) {
    if (t->total_ns == 0) continue;
    const std::string recompute = YesNo(t == &inside);
    for (const auto& [name, ns] : TraceLensTimelineRows(*t)) {
      table.AddRow({rank, recompute, std::string(name), Ms(ns),
                    Pct(static_cast<double>(ns), static_cast<double>(t->total_ns))});
    }
  }
  return table;
}

// A number, or an empty cell where there is none (NaN: a rate without kernel time, the
// spread of one call), as TraceLens's CSV files leave it.
Cell Number(double v) { return std::isfinite(v) ? Cell(v) : Cell(); }

Table PerfSheetTable(int64_t rank, const TraceData& trace, const PerfSheet& sheet) {
  std::vector<Column> columns = {RankColumn(), {"name", "op", 0}};
  // The family's parameters keep TraceLens's names ("M", "shape_in1", ...).
  for (std::string_view param : sheet.params)
    columns.push_back({std::string(param), std::string(param), 0});
  for (Column c : std::vector<Column>{{"is_recompute", "recompute", 0},
                                      {"gflops", "GFLOP/call", 3},
                                      {"mib", "MiB/call", 3},
                                      {"flops_per_byte", "FLOP/B", 1}})
    columns.push_back(std::move(c));
  for (const char* stat : {"mean", "median", "std", "min", "max"})
    columns.push_back({fmt::format("tbps_{}", stat), fmt::format("TB/s {}", stat), 3});
  for (const char* stat : {"mean", "median", "std", "min", "max"})
    columns.push_back({fmt::format("tflops_{}", stat), fmt::format("TFLOP/s {}", stat), 2});
  // The first call's thread, where TraceLens puts it (before the argument records).
  for (const char* key : {"process_name", "process_label", "thread_name"})
    columns.push_back({key, key, 0});
  for (const char* key : {"input_dims", "input_types", "input_strides", "concrete_inputs"})
    columns.push_back({key, key, 0});
  for (const char* stat : {"mean", "median", "std", "min", "max", "sum"})
    columns.push_back({fmt::format("kernel_us_{}", stat), fmt::format("kernel us {}", stat), 2});
  columns.push_back({"count", "calls", 0});
  Table table(std::string(sheet.table), std::string(sheet.title), std::move(columns));
  for (const auto& g : sheet.groups) {
    std::vector<Cell> row = {rank, g.name};
    for (const std::string& p : g.params) row.push_back(p);
    row.push_back(YesNo(g.recompute));
    row.push_back(g.gflops);
    row.push_back(Number(g.bytes / (1024.0 * 1024.0)));
    row.push_back(Number(g.bytes > 0 ? g.gflops * 1e9 / g.bytes : NAN));
    for (const CallStats* s : {&g.tbps, &g.tflops})
      for (double v : {s->mean, s->median, s->std, s->min, s->max}) row.push_back(Number(v));
    row.push_back(std::string(trace.ProcessName(g.thread)));
    row.push_back(std::string(trace.ProcessLabel(g.thread)));
    row.push_back(std::string(trace.ThreadName(g.thread)));
    for (const std::string* a :
         {&g.input_dims, &g.input_types, &g.input_strides, &g.concrete_inputs})
      row.push_back(*a);
    const CallStats& t = g.kernel_us;
    for (double v : {t.mean, t.median, t.std, t.min, t.max, t.sum}) row.push_back(Number(v));
    row.push_back(t.n);
    table.AddRow(std::move(row));
  }
  return table;
}

// The first `n` characters (UTF-8 code points, as Python counts them) of `text`.
std::string_view FirstCharacters(std::string_view text, size_t n) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    // A byte that does not continue a multi-byte character starts the next one.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && chars++ == n) {
      return text.substr(0, i);
    }
  }
  return text;
}

// TraceLens's kernel_details_summary of a row: per kernel and stream, the count and the
// statistics of its durations (its trunc_kernel_details: name cut to 64 characters, the mean).
std::pair<std::string, std::string> KernelDetails(const UnifiedPerfRow& row) {
  std::string full = "[", short_form = "[";
  for (size_t i = 0; i < row.kernels.size(); ++i) {
    const UnifiedPerfKernel& k = row.kernels[i];
    const std::string sep = i > 0 ? ", " : "";
    full += fmt::format(
        "{}{{'name': {}, 'stream': {}, 'count': {}, 'total_duration_us': {}, "
        "'mean_duration_us': {}, 'median_duration_us': {}, 'std_dev_duration_us': {}, "
        "'min_duration_us': {}, 'max_duration_us': {}}}",
        sep, PyString(k.name), k.stream, k.us.n, PyNumber(k.us.sum), PyNumber(k.us.mean),
        PyNumber(k.us.median), PyNumber(k.us.std), PyNumber(k.us.min), PyNumber(k.us.max));
    const std::string_view cut = FirstCharacters(k.name, 64);
    const std::string name = cut.size() < k.name.size() ? std::string(cut) + "..." : k.name;
    // numpy's round: half to even.
    short_form +=
        fmt::format("{}{{'name': {}, 'stream': {}, 'mean_duration_us': {}}}", sep, PyString(name),
                    k.stream, PyNumber(std::nearbyint(k.us.mean * 100) / 100));
  }
  return {full + "]", short_form + "]"};
}

// The leading columns of a table of op-call groups keyed by their argument records
// (launcher_op_args, unified_perf), and one group's cells for them.
std::vector<Column> OpRecordColumns() {
  return {RankColumn(),
          {"name", "op", 0},
          {"category", "op category", 0},
          {"thread", "thread", 0},
          {"process_name", "process", 0},
          {"process_label", "process label", 0},
          {"thread_name", "thread name", 0},
          {"input_dims", "input dims", 0},
          {"input_types", "input types", 0},
          {"input_strides", "input strides", 0},
          {"concrete_inputs", "concrete inputs", 0},
          {"is_recompute", "recompute", 0}};
}
template <typename Group>
std::vector<Cell> OpRecordCells(int64_t rank, const TraceData& trace, const Group& o) {
  return {rank,
          o.name,
          o.category,
          trace.threads[o.thread].tid,
          std::string(trace.ProcessName(o.thread)),
          std::string(trace.ProcessLabel(o.thread)),
          std::string(trace.ThreadName(o.thread)),
          o.input_dims,
          o.input_types,
          o.input_strides,
          o.concrete_inputs,
          YesNo(o.recompute)};
}

Table UnifiedPerfTable(int64_t rank, const TraceData& trace, const std::vector<uint32_t>& events,
                       const std::vector<uint8_t>& recompute_cpu) {
  std::vector<Column> columns = OpRecordColumns();
  columns.insert(columns.end(), {{"count", "calls", 0},
                                 {"has_perf_model", "perf model", 0},
                                 {"gflops", "GFLOP per call", 4},
                                 {"mib", "MiB per call", 3},
                                 {"flops_per_byte", "FLOP/byte", 2}});
  for (const char* stat : {"sum", "mean", "median", "std", "min", "max"})
    columns.push_back({fmt::format("cpu_us_{}", stat), fmt::format("CPU us {}", stat), 2});
  for (const char* stat : {"sum", "mean", "median", "std", "min", "max"}) {
    columns.push_back({fmt::format("kernel_us_{}", stat), fmt::format("kernel us {}", stat), 2});
  }
  for (const char* stat : {"mean", "median", "std", "min", "max"})
    columns.push_back({fmt::format("tflops_{}", stat), fmt::format("TFLOP/s {}", stat), 2});
  for (const char* stat : {"mean", "median", "std", "min", "max"})
    columns.push_back({fmt::format("tbps_{}", stat), fmt::format("TB/s {}", stat), 3});
  columns.push_back({"percent", "% of kernel time", 2});
  columns.push_back({"cumulative_percent", "cumulative %", 2});
  columns.push_back({"perf_params", "perf-model parameters", 0});
  columns.push_back({"kernels", "kernels", 0});
  columns.push_back({"kernels_short", "kernels (short)", 0});
  Table t("unified_perf",
          "Every op with a perf model or launching kernels itself, by argument records "
          "(TraceLens's unified_perf_summary)",
          std::move(columns));
  const std::vector<UnifiedPerfRow> rows = SummarizeUnifiedPerf(trace, events, recompute_cpu);
  std::vector<double> weights;
  for (const auto& row : rows) weights.push_back(row.kernel_us.sum);
  const auto shares = Shares(weights);
  for (size_t i = 0; i < rows.size(); ++i) {
    const UnifiedPerfRow& o = rows[i];
    std::vector<Cell> row = OpRecordCells(rank, trace, o);
    row.insert(row.end(), {o.kernel_us.n, YesNo(o.has_perf_model), Number(o.gflops), Number(o.mib),
                           Number(o.flops_per_byte)});
    for (const CallStats* stats : {&o.duration_us, &o.kernel_us}) {
      for (auto stat : {&CallStats::sum, &CallStats::mean, &CallStats::median, &CallStats::std,
                        &CallStats::min, &CallStats::max}) {
        row.push_back(Number(stats->*stat));
      }
    }
    for (const CallStats* stats : {&o.tflops, &o.tbps}) {
      for (auto stat : {&CallStats::mean, &CallStats::median, &CallStats::std, &CallStats::min,
                        &CallStats::max}) {
        row.push_back(Number(stats->*stat));
      }
    }
    row.push_back(shares[i].first);
    row.push_back(shares[i].second);
    row.push_back(o.perf_params);
    auto [full, short_form] = KernelDetails(o);
    row.push_back(std::move(full));
    row.push_back(std::move(short_form));
    t.AddRow(std::move(row));
  }
  return t;
}

Table IterationTable(int64_t rank, const TraceData& trace) {
  Table table("iterations", "Iterations (ProfilerStep#N)",
              {RankColumn(),
               {"step", "step", 0},
               {"cpu_ms", "CPU step (ms)", 3},
               {"gpu_span_ms", "GPU span (ms)", 3},
               {"computation_ms", "compute (ms)", 3},
               {"exposed_comm_ms", "exposed comm (ms)", 3},
               {"exposed_memcpy_ms", "exposed memcpy (ms)", 3},
               {"idle_ms", "GPU idle (ms)", 3}});
  const std::vector<GpuTimeline> timelines = IterationTimelines(trace);
  for (size_t i = 0; i < trace.iterations.size(); ++i) {
    const GpuTimeline& t = timelines[i];
    table.AddRow({rank, trace.iterations[i].step, Ms(trace.iterations[i].dur_ns), Ms(t.total_ns),
                  Ms(t.computation_ns), Ms(t.exposed_communication_ns), Ms(t.exposed_memcpy_ns),
                  Ms(t.idle_ns)});
  }
  return table;
}

Table IterationStatsTable(int64_t rank, const TraceData& trace) {
  Table table("iteration_stats", "Iteration time statistics (CPU ProfilerStep durations)",
              {RankColumn(),
               {"iterations", "iterations", 0},
               {"mean_ms", "mean (ms)", 3},
               {"std_ms", "std (ms)", 3},
               {"min_ms", "min (ms)", 3},
               {"max_ms", "max (ms)", 3},
               {"cv_percent", "CV (%)", 2}});
  const auto& it = trace.iterations;
  if (it.empty()) return table;
  double sum = 0, mn = 1e300, mx = 0;
  for (const auto& s : it) {
    double ms = Ms(s.dur_ns);
    sum += ms;
    mn = std::min(mn, ms);
    mx = std::max(mx, ms);
  }
  double mean = sum / static_cast<double>(it.size());
  double var = 0;
  for (const auto& s : it) var += (Ms(s.dur_ns) - mean) * (Ms(s.dur_ns) - mean);
  // Sample standard deviation (n − 1), as pandas reports it.
  double sd = it.size() > 1 ? std::sqrt(var / static_cast<double>(it.size() - 1)) : 0.0;
  table.AddRow({rank, static_cast<int64_t>(it.size()), mean, sd, mn, mx, Pct(sd, mean)});
  return table;
}

// Per timeline metric over the ranks: min, median, max and who they are. The slowest rank by
// GPU span leads a straggler ranking: in a synchronous job everyone waits for it.
Table RankSpreadTable(const std::vector<RankReport>& ranks) {
  Table t("rank_spread", "Spread over ranks (min / median / max) and the ranks at the ends",
          {{"metric", "metric", 0},
           {"min_ms", "min (ms)", 3},
           {"median_ms", "median (ms)", 3},
           {"max_ms", "max (ms)", 3},
           {"spread_percent", "(max - min) / median (%)", 1},
           {"min_rank", "min rank", 0},
           {"max_rank", "max rank", 0}});
  const std::pair<const char*, int64_t GpuTimeline::*> metrics[] = {
      {"GPU span", &GpuTimeline::total_ns},
      {"GPU busy", &GpuTimeline::busy_ns},
      {"computation", &GpuTimeline::computation_ns},
      {"exposed communication", &GpuTimeline::exposed_communication_ns},
      {"idle", &GpuTimeline::idle_ns}};
  for (const auto& [name, field] : metrics) {
    std::vector<std::pair<int64_t, int64_t>> values;  // (ns, rank)
    for (const auto& r : ranks) values.push_back({r.timeline.*field, r.rank});
    std::sort(values.begin(), values.end());
    const double median = values.size() % 2 == 1
                              ? static_cast<double>(values[values.size() / 2].first)
                              : 0.5 * static_cast<double>(values[values.size() / 2 - 1].first +
                                                          values[values.size() / 2].first);
    // Relative to a median of 0 (most ranks without exposed communication, say) a spread has
    // no percentage: left empty, unless every rank reads 0.
    const int64_t range = values.back().first - values.front().first;
    const Cell spread =
        median > 0 || range == 0 ? Cell{Pct(static_cast<double>(range), median)} : Cell{};
    t.AddRow({std::string(name), Ms(values.front().first), median / 1e6, Ms(values.back().first),
              spread, values.front().second, values.back().second});
  }
  return t;
}

// Columns "<key>_mean", "_median", "_min", "_max" of one statistic, in `unit`.
void AddStatColumns(std::vector<Column>& columns, const std::string& key, const std::string& what,
                    const std::string& unit, int precision) {
  for (const char* stat : {"mean", "median", "min", "max"}) {
    columns.push_back(
        {fmt::format("{}_{}", key, stat), fmt::format("{} {} ({})", what, stat, unit), precision});
  }
}

void AddStatCells(std::vector<Cell>& row, const CallStats& s) {
  if (s.n == 0) {
    row.insert(row.end(), 4, Cell{});
    return;
  }
  row.insert(row.end(), {s.mean, s.median, s.min, s.max});
}

// How far the first rank's end of a synchronising collective may precede the last rank's
// start before the ranks' clocks are taken to disagree: GPU timestamps are converted to the
// host clock per device, which keeps GPUs of one node within a few microseconds.
constexpr int64_t kClockToleranceNs = 10'000;

// TraceLens's nccl_summary_implicit_sync, in Sextant's units (GB = 1e9 bytes).
Table CollectiveSyncTable(const std::vector<CrossRankCollective>& matched) {
  std::vector<Column> columns = {
      {"collective", "collective", 0}, {"dtype", "dtype", 0},
      {"in_nelems", "in elements", 0}, {"process_group", "process group", 0},
      {"group_size", "group size", 0}, {"message_mib", "message (MiB)", 3}};
  AddStatColumns(columns, "latency_us", "latency", "us", 1);
  AddStatColumns(columns, "start_skew_us", "start skew", "us", 1);
  AddStatColumns(columns, "end_skew_us", "end skew", "us", 1);
  AddStatColumns(columns, "algbw_gbps", "algbw", "GB/s", 2);
  AddStatColumns(columns, "busbw_gbps", "busbw", "GB/s", 2);
  columns.push_back({"count", "count", 0});
  columns.push_back({"total_latency_ms", "total latency (ms)", 3});
  Table t("collective_sync",
          "Collectives across ranks by name, dtype and size: latency once all ranks arrived, "
          "start and end skew",
          std::move(columns));
  // Instances found in fewer ranks than their group holds: the latency (the shortest duration
  // over the ranks given) then includes the wait for ranks that are not in the input.
  int64_t partial = 0, instances = 0, group = 0, found = 0;
  int64_t clock_conflicts = 0, worst_conflict_ns = 0;
  bool metadata = false;
  for (const CrossRankCollective& x : matched) {
    if (!IsImplicitSyncCollective(x.type)) continue;
    ++instances;
    if (x.ended_before_last_start_ns > kClockToleranceNs) {
      ++clock_conflicts;
      worst_conflict_ns = std::max(worst_conflict_ns, x.ended_before_last_start_ns);
    }
    metadata = metadata || x.in_nelems >= 0;
    if (x.group_size > x.ranks && partial++ == 0) {
      group = x.group_size;
      found = x.ranks;
    }
  }
  for (const CollectiveSyncSummary& c : SummarizeImplicitSyncCollectives(matched)) {
    std::vector<Cell> row = {
        c.name,
        c.dtype,
        c.in_nelems >= 0 ? Cell(c.in_nelems) : Cell(),
        c.process_group,
        c.group_size > 0 ? Cell(c.group_size) : Cell(),
        c.bytes >= 0 ? Cell(static_cast<double>(c.bytes) / (1 << 20)) : Cell()};
    for (const CallStats* s :
         {&c.latency_us, &c.start_skew_us, &c.end_skew_us, &c.algbw_gbps, &c.busbw_gbps}) {
      AddStatCells(row, *s);
    }
    row.push_back(c.latency_us.n);
    row.push_back(c.latency_us.sum / 1e3);
    t.AddRow(std::move(row));
  }
  t.AddNote(
      "latency: the shortest duration over ranks; skews: latest minus earliest start / end; "
      "all-reduce, reduce-scatter, all-gather and all-to-all only (every rank must enter them)");
  if (partial > 0) {
    t.AddNote(fmt::format(
        "{} of {} instances were found in fewer ranks than their group holds ({} of {} at the "
        "first): their latency includes the wait for the ranks not given, and their skews "
        "cover only those given",
        partial, instances, found, group));
  }
  if (clock_conflicts > 0) {
    t.AddNote(fmt::format(
        "the ranks' clocks disagree: at {} of {} instances one rank finished before another "
        "had started (by up to {:.1f} us), which a collective every rank must enter cannot do; "
        "skews and waits here carry that offset",
        clock_conflicts, instances, static_cast<double>(worst_conflict_ns) / 1e3));
  }
  if (instances > 0 && !metadata) {
    t.AddNote(
        "no collective metadata in these traces (PyTorch records it from 2.1 on): instances "
        "are matched by their order per collective type, without dtype, size or bandwidth");
  }
  return t;
}

// TraceLens's straggler_summary: the rank that waits least is the one the others wait for.
Table StragglerTable(const std::vector<CrossRankCollective>& matched,
                     const std::vector<RankReport>& ranks) {
  Table t("stragglers",
          "Waiting at collectives per rank: the rank that waits least is the one others wait for",
          {{"rank", "rank", 0},
           {"total_wait_us", "total wait for the last (us)", 1},
           {"mean_wait_us", "mean wait for the last (us)", 1},
           {"times_last", "arrived last", 0},
           {"times_first", "arrived first", 0},
           {"last_percent", "arrived last (%)", 1},
           {"collectives", "collectives", 0},
           {"collective_us", "all collective kernels (us)", 1}});
  std::map<int64_t, double> collective_us;
  for (const RankReport& r : ranks) {
    collective_us[r.rank] += static_cast<double>(r.collective_kernel_ns) / 1e3;
  }
  for (const RankStraggling& r : SummarizeStragglers(matched, collective_us)) {
    t.AddRow({r.rank, r.total_wait_us, r.mean_wait_us, r.times_last, r.times_first,
              Pct(static_cast<double>(r.times_last), static_cast<double>(r.collectives)),
              r.collectives, r.collective_us});
  }
  t.AddNote(
      "wait for the last: latest start of a collective minus this rank's start (the "
      "by-type table's wait is a rank's kernel time beyond the transfer); all collective "
      "kernels: every one in the trace, also those queued before the profiled window");
  return t;
}

// Distinct "rank R: " prefixes among the process names `trace merge` writes.
size_t MergedRanks(const TraceData& trace) {
  std::set<std::string_view> ranks;
  for (const auto& [pid, name_id] : trace.process_names) {
    const std::string_view name = trace.Name(name_id);
    // "rank 3: python3 (pid 7)", or "rank 3 (capture.json): ..." where files share a rank.
    if (!name.starts_with("rank ") || name.find(": ") == std::string_view::npos) continue;
    size_t end = 5;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == 5 || end == name.size() || (name[end] != ':' && name[end] != ' ')) continue;
    ranks.insert(name.substr(5, end - 5));
  }
  return ranks.size();
}

}  // namespace

bool ReportOptions::Writes(std::string_view name) const {
  if (every_table) return true;
  const TablePresentation* p = FindTablePresentation(name);
  return p == nullptr || p->console_rows != TablePresentation::kNone ||
         (page && (!p->html_section.empty() || p->html_chart));
}

RankReport AnalyzeTrace(const TraceData& trace, const ReportOptions& options,
                        int64_t fallback_rank) {
  RankReport r;
  r.file = trace.path;
  r.rank = trace.rank >= 0 ? trace.rank : fallback_rank;
  r.gpu = trace.device_name;
  r.xplane = trace.xla_pid >= 0;
  r.world_size = trace.world_size;
  r.iterations = static_cast<int64_t>(trace.iterations.size());
  r.events = trace.total_events;
  r.input_bytes = trace.input_bytes;
  r.truncated = trace.truncated;
  r.warnings = trace.warnings;
  r.first_event_ns = FirstEventClockNs(trace);
  if (trace.gpu.empty()) {
    // A CPU-only profile, an inference trace's side file, another accelerator's activity, or
    // not a profiler trace at all: the tables below would all read 0 without saying why.
    std::string unread;
    for (const auto& [category, count] : trace.unread_categories) {
      unread += fmt::format("{}{} {}", unread.empty() ? "" : ", ", category, count);
    }
    r.warnings.push_back(fmt::format(
        "no GPU activity in {} {}: every GPU figure below is 0 ({})", trace.total_events,
        trace.total_events == 1 ? "event" : "events",
        trace.truncated   ? "the file is cut short: its GPU events, which Kineto writes after the "
                            "CPU ones, are likely in the missing part"
        : !unread.empty() ? "the device events it holds are of kinds not analysed: " + unread
                          : "a CPU-only profile, or not a PyTorch profiler trace"));
  }
  if (const size_t merged = MergedRanks(trace); merged > 1) {
    // `trace merge` names each process "rank R: ..."; one report over them unions different
    // GPUs' busy time into one timeline.
    r.warnings.push_back(fmt::format(
        "this file holds {} ranks merged by `sextant trace merge` (processes named \"rank R: "
        "...\"): it is analysed as one rank, so the GPU timeline mixes their GPUs; give the "
        "rank files themselves for per-rank tables and the cross-rank summary",
        merged));
  }
  const int64_t rank = r.rank;
  const TimelineSelection selection = SelectTimelineEvents(trace);
  for (std::string& w : TimelineExclusionWarnings(selection)) r.warnings.push_back(std::move(w));
  r.timeline = ComputeGpuTimeline(trace, selection.events);
  r.tables.push_back(TimelineTable(rank, r.timeline));
  const RecomputeFlags recompute = MarkRecompute(trace);
  if (recompute.any()) {
    auto [outside, inside] = SplitByRecompute(recompute, selection.events);
    r.tables.push_back(RecomputeTimelineTable(rank, ComputeGpuTimeline(trace, outside),
                                              ComputeGpuTimeline(trace, inside)));
  }
  r.tables.push_back(IterationTable(rank, trace));
  r.tables.push_back(IterationStatsTable(rank, trace));
  Table annotations("annotations", "GPU work inside user annotations (record_function ranges)",
                    {RankColumn(),
                     {"name", "annotation", 0},
                     {"count", "count", 0},
                     {"cpu_ms", "CPU (ms)", 3},
                     {"kernels", "GPU activities", 0},
                     {"kernel_ms", "kernels summed (ms)", 3},
                     {"gpu_span_ms", "GPU span (ms)", 3},
                     {"mean_gpu_span_ms", "mean span (ms)", 3}});
  for (const auto& a : SummarizeAnnotations(trace, selection.events)) {
    if (a.kernels == 0) continue;  // a range with no GPU work says nothing about the GPU
    annotations.AddRow({rank, a.name, a.count, Ms(a.cpu_ns), a.kernels, Ms(a.kernel_ns),
                        Ms(a.gpu_span_ns), Ms(a.gpu_span_ns) / static_cast<double>(a.count)});
  }
  r.tables.push_back(std::move(annotations));

  // Kernels and categories.
  std::vector<KernelStats> kernels = SummarizeKernels(trace);
  int64_t all_kernel_ns = 0;
  for (const auto& k : kernels) all_kernel_ns += k.total_ns;
  Table categories("kernel_categories", "GPU time by kernel category",
                   {RankColumn(),
                    {"category", "category", 0},
                    {"count", "count", 0},
                    {"time_ms", "time (ms)", 3},
                    {"percent", "% of GPU time", 2}});
  for (const auto& c : SummarizeCategories(kernels)) {
    categories.AddRow({rank, std::string(CategoryName(c.category)), c.count, Ms(c.total_ns),
                       Pct(static_cast<double>(c.total_ns), static_cast<double>(all_kernel_ns))});
  }
  r.tables.push_back(std::move(categories));
  Table kernel_table("kernels", "Top GPU kernels and memory operations by total time",
                     {RankColumn(),
                      {"name", "kernel", 0},
                      {"category", "category", 0},
                      {"parent_op", "launched by", 0},
                      {"count", "count", 0},
                      {"total_us", "total (us)", 1},
                      {"mean_us", "mean (us)", 2},
                      {"median_us", "median (us)", 2},
                      {"min_us", "min (us)", 2},
                      {"max_us", "max (us)", 2},
                      {"percent", "% of GPU time", 2}});
  for (const auto& k : kernels) {
    kernel_table.AddRow({rank, k.name, std::string(CategoryName(k.category)), k.parent_op, k.count,
                         Us(static_cast<double>(k.total_ns)), Us(k.mean_ns), Us(k.median_ns),
                         Us(static_cast<double>(k.min_ns)), Us(static_cast<double>(k.max_ns)),
                         Pct(static_cast<double>(k.total_ns), static_cast<double>(all_kernel_ns))});
  }
  r.tables.push_back(std::move(kernel_table));
  Table by_parent("kernel_summary",
                  "Kernels by launching op and stream (TraceLens's kernel_summary rows)",
                  {RankColumn(),
                   {"parent_op", "parent op", 0},
                   {"name", "kernel", 0},
                   {"stream", "stream", 0},
                   {"count", "count", 0},
                   {"total_us", "total (us)", 3},
                   {"mean_us", "mean (us)", 3},
                   {"min_us", "min (us)", 3},
                   {"max_us", "max (us)", 3},
                   {"percent_of_kernels", "% of kernel time", 3},
                   {"percent_of_total", "% of total time", 3}});
  if (options.Writes(by_parent.name())) {
    int64_t kernel_ns = 0;
    const std::vector<KernelLaunchStats> launches = SummarizeKernelsByParent(trace);
    for (const auto& k : launches) kernel_ns += k.total_ns;
    for (const auto& k : launches) {
      by_parent.AddRow(
          {rank, k.parent_op, k.name, k.stream, k.count, Us(static_cast<double>(k.total_ns)),
           Us(static_cast<double>(k.total_ns) / static_cast<double>(k.count)),
           Us(static_cast<double>(k.min_ns)), Us(static_cast<double>(k.max_ns)),
           Pct(static_cast<double>(k.total_ns), static_cast<double>(kernel_ns)),
           Pct(static_cast<double>(k.total_ns), static_cast<double>(r.timeline.total_ns))});
    }
    // TraceLens divides by the GPU timeline's span: kernels that overlap on streams, and those
    // the timeline leaves out (from before the profiled window, or without a launch flow) but
    // this table keeps, can take its shares past 100% of that span.
    if (kernel_ns > r.timeline.total_ns) {
      std::vector<char> in_timeline(trace.gpu.size(), 0);
      for (uint32_t i : selection.events) in_timeline[i] = 1;
      int64_t left_out_ns = 0;
      for (size_t i = 0; i < trace.gpu.size(); ++i) {
        const GpuEvent& g = trace.gpu[i];
        if (g.kind == GpuKind::kKernel && !in_timeline[i]) left_out_ns += g.dur_ns;
      }
      by_parent.AddNote(fmt::format(
          "these kernels ran {:.3f} ms, more than the GPU timeline's {:.3f} ms span that "
          "percent_of_total divides by (TraceLens's definition): {}",
          Ms(kernel_ns), Ms(r.timeline.total_ns),
          left_out_ns > 0 ? fmt::format("{:.3f} ms of them are left out of the timeline (the "
                                        "warnings say why), and kernels on several streams "
                                        "overlap",
                                        Ms(left_out_ns))
                          : std::string("kernels on several streams overlap")));
    }
    r.tables.push_back(std::move(by_parent));
  }

  // Short kernels, as TraceLens's short kernel study tabulates them (short_kernels.h).
  const ShortKernelStudy short_kernels = StudyShortKernels(trace);
  Table short_hist("short_kernel_histogram",
                   fmt::format("Kernels shorter than {:g} us: durations in {} equal bins",
                               short_kernels.threshold_us, short_kernels.bins),
                   {RankColumn(),
                    {"bin_start_us", "from (us)", 4},
                    {"bin_end_us", "to (us)", 4},
                    {"count", "kernels", 0}});
  for (const auto& b : short_kernels.histogram) {
    short_hist.AddRow({rank, b.start_us, b.end_us, b.count});
  }
  if (options.Writes(short_hist.name())) r.tables.push_back(std::move(short_hist));
  Table short_summary(
      "short_kernels_summary",
      fmt::format("Kernels shorter than {:g} us by launching op, arguments and kernel",
                  short_kernels.threshold_us),
      {RankColumn(),
       {"parent_op", "parent op", 0},
       {"input_dims", "input dims", 0},
       {"input_strides", "input strides", 0},
       {"concrete_inputs", "concrete inputs", 0},
       {"name", "kernel", 0},
       {"total_us", "total (us)", 3},
       {"count", "count", 0},
       {"mean_us", "mean (us)", 3},
       {"percent_of_total", "% of total time", 3}});
  for (const auto& k : short_kernels.groups) {
    short_summary.AddRow(
        {rank, k.parent_op, k.input_dims, k.input_strides, k.concrete_inputs, k.name,
         Us(static_cast<double>(k.total_ns)), k.count,
         Us(static_cast<double>(k.total_ns) / static_cast<double>(k.count)),
         Pct(static_cast<double>(k.total_ns), static_cast<double>(r.timeline.total_ns))});
  }
  if (short_kernels.kernels > 0) {
    short_summary.AddNote(fmt::format(
        "{} short kernels, {:.3f} ms ({:.2f}% of total time); those whose op recorded no "
        "shapes, strides or concrete inputs are in the histogram only, as in TraceLens",
        short_kernels.kernels, Ms(short_kernels.total_ns),
        Pct(static_cast<double>(short_kernels.total_ns),
            static_cast<double>(r.timeline.total_ns))));
  }
  r.tables.push_back(std::move(short_summary));

  // Operators.
  OpKernelTimes times = ComputeOpKernelTimes(trace, selection.events);
  std::string ops_by_name_note;
  // An XLA profile's ops are the XLA ops (HLO instructions) that ran its kernels.
  const std::string op_kind = trace.xla_pid >= 0 ? "XLA ops" : "CPU ops";
  Table ops("ops", op_kind + " by name and input shapes, with the GPU time of their kernels",
            {RankColumn(),
             {"name", "op", 0},
             {"input_dims", "input dims", 0},
             {"input_types", "input types", 0},
             {"parent", "called from", 0},
             {"count", "count", 0},
             {"cpu_ms", "CPU (ms)", 3},
             {"direct_kernel_us", "direct kernels (us)", 1},
             {"subtree_kernel_us", "subtree kernels (us)", 1},
             {"percent", "% of op kernel time", 2}});
  OpSummaries op_summaries = SummarizeOpsByShapeAndName(trace, times);
  const std::vector<OpStats>& op_rows = op_summaries.by_shape;
  // XLA ops in an XPlane profile have device time only: their CPU column is left empty.
  const bool cpu_timed =
      std::any_of(op_rows.begin(), op_rows.end(), [](const auto& o) { return o.cpu_ns > 0; });
  auto cpu_ms = [&](int64_t ns) { return cpu_timed ? Cell{Ms(ns)} : Cell{}; };
  // TraceLens's ops_summary percentage: of the kernel time that ops launched (kernels left
  // out of the timeline, with no launching op, are not in it).
  int64_t op_kernel_ns = 0;
  for (const auto& o : op_rows) op_kernel_ns += o.direct_kernel_ns;
  const bool write_ops = options.Writes(ops.name());
  for (const auto& o : op_rows) {
    if (!write_ops) break;
    ops.AddRow({rank, o.name, o.input_dims, o.input_types, o.parent, o.count, cpu_ms(o.cpu_ns),
                Us(static_cast<double>(o.direct_kernel_ns)),
                Us(static_cast<double>(o.subtree_kernel_ns)),
                Pct(static_cast<double>(o.direct_kernel_ns), static_cast<double>(op_kernel_ns))});
  }
  if (selection.graph_replayed > 0) {
    std::string note =
        trace.graph_kernels_attributed > 0
            ? fmt::format(
                  "{} kernels were replayed by graph launches; {} of them carry the op "
                  "that captured them (--capture)",
                  selection.graph_replayed, trace.graph_kernels_attributed)
        : options.capture_traces.empty()
            ? fmt::format(
                  "{} kernels were replayed by graph launches and count under the op "
                  "around the launch; --capture with the graph-capture trace gives them "
                  "the ops (and shapes) that recorded them",
                  selection.graph_replayed)
            : fmt::format(
                  "{} kernels were replayed by graph launches and count under the op "
                  "around the launch: no graph of the --capture traces matched them (are "
                  "they this run's capture?)",
                  selection.graph_replayed);
    ops.AddNote(note);
    ops_by_name_note = note;
  }
  if (write_ops) r.tables.push_back(std::move(ops));
  Table ops_by_name("ops_by_name", op_kind + " by name",
                    {RankColumn(),
                     {"name", "op", 0},
                     {"count", "count", 0},
                     {"cpu_ms", "CPU (ms)", 3},
                     {"direct_kernel_us", "direct kernels (us)", 1},
                     {"subtree_kernel_us", "subtree kernels (us)", 1},
                     {"percent", "% of op kernel time", 2}});
  const std::vector<OpStats>& name_rows = op_summaries.by_name;
  for (const auto& o : name_rows) {
    ops_by_name.AddRow(
        {rank, o.name, o.count, cpu_ms(o.cpu_ns), Us(static_cast<double>(o.direct_kernel_ns)),
         Us(static_cast<double>(o.subtree_kernel_ns)),
         Pct(static_cast<double>(o.direct_kernel_ns), static_cast<double>(op_kernel_ns))});
  }
  if (!ops_by_name_note.empty()) ops_by_name.AddNote(ops_by_name_note);
  r.tables.push_back(std::move(ops_by_name));
  Table op_categories("ops_by_category",
                      "GPU time of ops by TraceLens op category (ops that launch kernels)",
                      {RankColumn(),
                       {"category", "op category", 0},
                       {"is_recompute", "recompute", 0},
                       {"count", "calls", 0},
                       {"direct_kernel_ms", "direct kernels (ms)", 3},
                       {"percent", "% of op kernel time", 2},
                       {"cumulative_percent", "cumulative %", 2}});
  const std::vector<KernelLauncher> launchers =
      FindKernelLaunchers(trace, selection.events, recompute.cpu);
  {
    auto rows = SummarizeOpCategories(launchers);
    std::vector<double> weights;
    for (const auto& c : rows) weights.push_back(static_cast<double>(c.direct_kernel_ns));
    const auto shares = Shares(weights);
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& c = rows[i];
      op_categories.AddRow({rank, c.category, YesNo(c.recompute), c.count, Ms(c.direct_kernel_ns),
                            shares[i].first, shares[i].second});
    }
  }
  r.tables.push_back(std::move(op_categories));
  Table launcher_ops("launcher_ops",
                     "Ops that launch GPU work themselves, by name (TraceLens's ops_summary)",
                     {RankColumn(),
                      {"name", "op", 0},
                      {"is_recompute", "recompute", 0},
                      {"count", "calls", 0},
                      {"direct_kernel_us", "direct kernels (us)", 1},
                      {"subtree_kernel_us", "subtree kernels (us)", 1},
                      {"categories", "op categories", 0},
                      {"percent", "% of op kernel time", 2},
                      {"cumulative_percent", "cumulative %", 2}});
  if (options.Writes(launcher_ops.name())) {
    auto rows = SummarizeLauncherOps(trace, launchers, times);
    std::vector<double> weights;
    for (const auto& o : rows) weights.push_back(static_cast<double>(o.direct_kernel_ns));
    const auto shares = Shares(weights);
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& o = rows[i];
      // The categories as TraceLens prints its sorted list: ['CONV_bwd'].
      std::string categories = "[";
      for (size_t c = 0; c < o.categories.size(); ++c)
        categories += (c ? ", '" : "'") + o.categories[c] + "'";
      categories += "]";
      launcher_ops.AddRow({rank, o.name, YesNo(o.recompute), o.count,
                           Us(static_cast<double>(o.direct_kernel_ns)),
                           Us(static_cast<double>(o.subtree_kernel_ns)), categories,
                           shares[i].first, shares[i].second});
    }
    r.tables.push_back(std::move(launcher_ops));
  }
  if (options.Writes("launcher_op_args")) {
    std::vector<Column> columns = OpRecordColumns();
    columns.push_back({"count", "calls", 0});
    // Direct and subtree statistics in pairs, as TraceLens orders them.
    for (const char* stat : {"mean", "median", "std", "min", "max", "sum"}) {
      columns.push_back({fmt::format("direct_us_{}", stat), fmt::format("direct us {}", stat), 2});
      columns.push_back(
          {fmt::format("subtree_us_{}", stat), fmt::format("subtree us {}", stat), 2});
    }
    columns.push_back({"percent", "% of op kernel time", 2});
    columns.push_back({"cumulative_percent", "cumulative %", 2});
    Table launcher_args("launcher_op_args",
                        "Ops that launch GPU work, by argument records (TraceLens's "
                        "ops_unique_args)",
                        std::move(columns));
    auto rows = SummarizeLauncherArgs(trace, launchers, times);
    std::vector<double> weights;
    for (const auto& o : rows) weights.push_back(o.direct_us.sum);
    const auto shares = Shares(weights);
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& o = rows[i];
      std::vector<Cell> row = OpRecordCells(rank, trace, o);
      row.push_back(o.direct_us.n);
      for (auto stat : {&CallStats::mean, &CallStats::median, &CallStats::std, &CallStats::min,
                        &CallStats::max, &CallStats::sum}) {
        row.push_back(Number(o.direct_us.*stat));
        row.push_back(Number(o.subtree_us.*stat));
      }
      row.push_back(shares[i].first);
      row.push_back(shares[i].second);
      launcher_args.AddRow(std::move(row));
    }
    r.tables.push_back(std::move(launcher_args));
  }
  if (options.Writes("unified_perf"))
    r.tables.push_back(UnifiedPerfTable(rank, trace, selection.events, recompute.cpu));
  const auto sheet_names = PerfSheetNames();
  if (std::any_of(sheet_names.begin(), sheet_names.end(),
                  [&](const auto& names) { return options.Writes(names.first); })) {
    for (const PerfSheet& sheet :
         SummarizePerfSheets(trace, selection.events, times, recompute.cpu))
      r.tables.push_back(PerfSheetTable(rank, trace, sheet));
  }
  Table tree("op_tree", "Op hierarchy (parent > child) with GPU kernel time",
             {RankColumn(),
              {"path", "op path", 0},
              {"depth", "depth", 0},
              {"count", "count", 0},
              {"subtree_kernel_us", "subtree kernels (us)", 1},
              {"direct_kernel_us", "direct kernels (us)", 1}});
  if (options.Writes(tree.name())) {
    for (const auto& p : SummarizeOpTree(trace, times)) {
      tree.AddRow({rank, p.path, static_cast<int64_t>(p.depth), p.count,
                   Us(static_cast<double>(p.subtree_kernel_ns)),
                   Us(static_cast<double>(p.direct_kernel_ns))});
    }
    r.tables.push_back(std::move(tree));
  }

  // Roofline.
  // A name the user typed must be a library name; a trace's device name is matched by pieces.
  const GpuSpec* gpu =
      options.gpu_arch.empty() ? FindGpuForDevice(trace.device_name) : FindGpu(options.gpu_arch);
  if (gpu == nullptr && !options.gpu_arch.empty()) {
    ThrowUserError(SourceLocation{"--gpu-arch"}, "",
                   fmt::format("unknown GPU '{}'{} ('sextant hardware list' shows all)",
                               options.gpu_arch, DidYouMean(SimilarGpuNames(options.gpu_arch))));
  }
  if (!options.gpu_arch.empty() && gpu != nullptr) {
    // A GPU chosen on the command line that is not the one the trace ran on: every roofline
    // percentage is then against another GPU's peaks, which is a what-if, and says so.
    const GpuSpec* ran_on = FindGpuForDevice(trace.device_name);
    if (ran_on != nullptr && ran_on->arch != gpu->arch) {
      r.warnings.push_back(fmt::format(
          "--gpu-arch {}: the trace ran on {} ({}), so the roofline compares its kernel times "
          "with another GPU's peaks",
          gpu->name, trace.device_name, ran_on->name));
    }
  }
  Table roof("roofline", "Roofline of GEMM, attention, elementwise and norm ops",
             {RankColumn(),
              {"name", "op", 0},
              {"family", "family", 0},
              {"input_dims", "input dims", 0},
              {"input_types", "input types", 0},
              {"count", "count", 0},
              {"gflops_per_call", "GFLOP/call", 3},
              {"mb_per_call", "MB/call", 3},
              {"kernel_us", "kernel time (us)", 1},
              {"tflops", "TFLOP/s", 2},
              {"tbps", "TB/s", 3},
              {"flops_per_byte", "FLOP/B", 1},
              {"peak_tflops", "peak TFLOP/s", 1},
              {"bound", "bound", 0},
              {"pct_of_roofline", "% of roofline", 1},
              {"note", "note", 0, true}});
  int above_roof = 0;
  for (const auto& row : ComputeRoofline(trace, times, gpu)) {
    if (!row.bound.empty() && row.roofline_fraction > 1.0) ++above_roof;
    Cell peak_cell = row.peak_tflops > 0 ? Cell(row.peak_tflops) : Cell();
    Cell pct = row.bound.empty() ? Cell() : Cell(100.0 * row.roofline_fraction);
    roof.AddRow({rank, row.name, row.family, row.input_dims, row.input_types, row.count,
                 row.flops_per_call / 1e9, row.bytes_per_call / 1e6,
                 Us(static_cast<double>(row.kernel_ns)), row.achieved_tflops, row.achieved_tbps,
                 row.intensity, peak_cell, row.bound, pct, row.note});
  }
  if (gpu) {
    // The ceilings RooflinePeakTflops gives an op of each kind, labelled by what runs there:
    // a unit the GPU lacks (peak 0) adds none, and equal peaks share one roof.
    RooflinePeaks& peaks = r.roofline_peaks;
    peaks.gpu = gpu->name;
    peaks.hbm_tbps = gpu->HbmTbps();
    const std::pair<std::string, double> ceilings[] = {
        {"FP8 matrix", gpu->Supports(DType::kFP8) ? RooflinePeakTflops(*gpu, true, 1) : 0.0},
        {gpu->Supports(DType::kBF16) ? "BF16 matrix" : "FP16 matrix",
         RooflinePeakTflops(*gpu, true, 2)},
        {"FP32 matrix", RooflinePeakTflops(*gpu, true, 4)},
        {"FP32 vector", RooflinePeakTflops(*gpu, false, 4)}};
    for (const auto& ceiling : ceilings) {
      const double tflops = ceiling.second;  // a plain variable: lambdas capture it in C++20
      if (!(tflops > 0)) continue;
      auto same = std::find_if(peaks.ceilings.begin(), peaks.ceilings.end(),
                               [&](const auto& c) { return c.second == tflops; });
      if (same == peaks.ceilings.end()) {
        peaks.ceilings.emplace_back(ceiling.first, tflops);
      } else {
        same->first += ", " + ceiling.first;  // one roof, two kinds of op
      }
    }
  }
  roof.AddNote(gpu ? fmt::format("peaks: {} ({} TFLOP/s 16-bit matrix, {} TB/s; `sextant "
                                 "hardware show {}`)",
                                 gpu->name, RooflinePeakTflops(*gpu, true, 2), gpu->HbmTbps(),
                                 gpu->name)
                   : std::string("GPU not in the hardware library: pass --gpu-arch for roofline "
                                 "bounds"));
  if (above_roof > 0) {
    // The byte model reads every operand from HBM once; a kernel that finds some in the L2
    // cache, or runs above the clock the peak is quoted at, beats that roof.
    roof.AddNote(fmt::format(
        "{} row{} above 100% of the roof: operands partly served from the L2 cache (the bytes "
        "assume each is read from HBM once) or a clock above the one the peak is quoted at",
        above_roof, above_roof == 1 ? "" : "s"));
  }
  r.tables.push_back(std::move(roof));

  // Communication.
  r.collectives = ExtractCollectives(trace, rank, selection.events);
  r.collective_kernel_ns = CollectiveKernelNs(trace);
  Table coll("collectives", "Collectives per type, process group and message size",
             {RankColumn(),
              {"type", "collective", 0},
              {"process_group", "process group", 0},
              {"group_size", "ranks", 0},
              {"bytes", "message (B)", 0},
              {"count", "count", 0},
              {"total_us", "total (us)", 1},
              {"mean_us", "mean (us)", 1},
              {"min_us", "min (us)", 1},
              {"max_us", "max (us)", 1},
              {"algbw_gbps", "algbw (GB/s)", 2},
              {"busbw_gbps", "busbw (GB/s)", 2}});
  for (const auto& s : SummarizeCollectives(r.collectives)) {
    coll.AddRow({rank, s.type, s.process_group, s.group_size > 0 ? Cell(s.group_size) : Cell(),
                 s.bytes >= 0 ? Cell(s.bytes) : Cell(), s.count,
                 Us(static_cast<double>(s.total_ns)),
                 Us(static_cast<double>(s.total_ns) / static_cast<double>(s.count)),
                 Us(static_cast<double>(s.min_ns)), Us(static_cast<double>(s.max_ns)),
                 s.algbw_gbps > 0 ? Cell(s.algbw_gbps) : Cell(),
                 s.busbw_gbps > 0 ? Cell(s.busbw_gbps) : Cell()});
  }
  {
    // The kernel categories count every communication kernel of the trace; this table only
    // those of the timeline's window that belong to a collective it can name.
    int64_t in_table = 0;
    for (const auto& s : SummarizeCollectives(r.collectives)) in_table += s.count;
    int64_t all = 0;
    NameTest is_comm(trace, IsCommunicationKernelName);
    for (const GpuEvent& g : trace.gpu) all += g.kind == GpuKind::kKernel && is_comm(g.name);
    if (all > in_table) {
      coll.AddNote(fmt::format(
          "{} of the trace's {} communication kernels are not in this table: launched before "
          "the profiled window (left out of the GPU timeline, as the warnings say) or without "
          "a collective the trace names; the kernel categories count every one",
          all - in_table, all));
    }
  }
  r.tables.push_back(std::move(coll));
  Table calls("collective_calls",
              "Collective kernels per process group, message and stream (TraceLens's "
              "coll_analysis)",
              {RankColumn(),
               {"process_group", "process group", 0},
               {"pg_ranks", "group ranks", 0},
               {"collective", "collective", 0},
               {"group_size", "ranks", 0},
               {"dtype", "dtype", 0},
               {"in_nelems", "in elements", 0},
               {"out_nelems", "out elements", 0},
               {"in_split", "in splits", 0},
               {"out_split", "out splits", 0},
               {"stream", "stream", 0},
               {"in_mib", "in (MiB)", 3},
               {"out_mib", "out (MiB)", 3},
               {"dur_us_sum", "total (us)", 1},
               {"dur_us_mean", "mean (us)", 1},
               {"dur_us_std", "std (us)", 1},
               {"dur_us_min", "min (us)", 1},
               {"dur_us_max", "max (us)", 1},
               {"count", "count", 0}});
  auto number = [](double v) { return std::isnan(v) ? Cell() : Cell(v); };
  if (options.Writes(calls.name())) {
    for (const CollectiveCallGroup& c : GroupCollectiveCalls(trace)) {
      calls.AddRow({rank, c.process_group, c.pg_ranks, c.name, c.group_size, c.dtype, c.in_nelems,
                    c.out_nelems, c.in_split, c.out_split, c.stream, number(c.in_mib),
                    number(c.out_mib), c.dur_us.sum, c.dur_us.mean, number(c.dur_us.std),
                    c.dur_us.min, c.dur_us.max, c.dur_us.n});
    }
    r.tables.push_back(std::move(calls));
  }

  // Idle time and launches.
  Table idle("idle", "Idle time per stream by cause",
             {RankColumn(),
              {"device", "device", 0},
              {"stream", "stream", 0},
              {"activities", "activities", 0},
              {"busy_ms", "busy (ms)", 3},
              {"idle_ms", "idle (ms)", 3},
              {"host_bound_ms", "host-bound (ms)", 3},
              {"launch_overhead_ms", "launch overhead (ms)", 3},
              {"dependency_wait_ms", "dependency wait (ms)", 3},
              {"other_ms", "other (ms)", 3}});
  // An XLA profile's kernels have no host op to blame a gap on: their causes are not known,
  // so those cells stay empty rather than read 0.
  const bool causes = trace.xla_pid < 0;
  auto if_causes = [&](Cell value) { return causes ? value : Cell{}; };
  for (const auto& s : BreakDownIdleTime(trace, selection.events)) {
    idle.AddRow({rank, static_cast<int64_t>(s.device), s.stream, s.activities, Ms(s.busy_ns),
                 Ms(s.idle_ns()), if_causes(Ms(s.host_bound_ns)),
                 if_causes(Ms(s.launch_overhead_ns)), if_causes(Ms(s.dependency_wait_ns)),
                 if_causes(Ms(s.other_ns))});
  }
  if (!causes) {
    idle.AddNote("XLA profile: idle time is not split by cause (no host op to attribute a gap to)");
  }
  r.tables.push_back(std::move(idle));
  LaunchStats ls = ComputeLaunchStats(trace);
  Table launch("launch", "Kernel launch statistics",
               {RankColumn(),
                {"kernels", "kernels", 0},
                {"linked", "with launch call", 0},
                {"mean_delay_us", "mean delay (us)", 2},
                {"median_delay_us", "median delay (us)", 2},
                {"p95_delay_us", "p95 delay (us)", 2},
                {"max_delay_us", "max delay (us)", 2},
                {"mean_launch_call_us", "mean launch call (us)", 2},
                {"short_kernels", "short kernels (<10us)", 0},
                {"short_kernel_time_pct", "short-kernel % of kernel time", 2},
                {"shorter_than_launch", "GPU time < launch call", 0}});
  // Without a launch call linked to any kernel (XPlane, GPU-only traces) there is no delay
  // or call time to state: empty cells, not zeros.
  const bool linked = ls.linked_kernels > 0;
  auto if_linked = [&](Cell value) { return linked ? value : Cell{}; };
  launch.AddRow({rank, ls.kernels, ls.linked_kernels, if_linked(Us(ls.mean_launch_delay_ns)),
                 if_linked(Us(ls.median_launch_delay_ns)),
                 if_linked(Us(static_cast<double>(ls.p95_launch_delay_ns))),
                 if_linked(Us(static_cast<double>(ls.max_launch_delay_ns))),
                 if_linked(Us(ls.mean_launch_call_ns)), ls.short_kernels,
                 Pct(static_cast<double>(ls.short_kernel_ns), static_cast<double>(ls.kernel_ns)),
                 if_linked(ls.kernels_shorter_than_launch)});
  r.tables.push_back(std::move(launch));
  if (r.xplane && options.Writes("xla_activities"))
    r.tables.push_back(XlaActivitiesTable(rank, trace));
  return r;
}

nlohmann::json RankReport::Serialize() const {
  nlohmann::json j;
  j["file"] = file;
  j["rank"] = rank;
  j["argument"] = argument;
  j["gpu"] = gpu;
  j["xplane"] = xplane;
  j["world_size"] = world_size;
  j["iterations"] = iterations;
  j["events"] = events;
  j["input_bytes"] = input_bytes;
  j["truncated"] = truncated;
  j["first_event_ns"] = first_event_ns;
  j["collective_kernel_ns"] = collective_kernel_ns;
  j["warnings"] = warnings;
  j["timeline_ns"] = {timeline.total_ns,         timeline.computation_ns,
                      timeline.communication_ns, timeline.exposed_communication_ns,
                      timeline.memcpy_ns,        timeline.exposed_memcpy_ns,
                      timeline.memset_ns,        timeline.busy_ns,
                      timeline.idle_ns,          timeline.first_start_ns,
                      timeline.last_end_ns};
  j["roofline_peaks"] = {{"gpu", roofline_peaks.gpu},
                         {"hbm_tbps", roofline_peaks.hbm_tbps},
                         {"ceilings", roofline_peaks.ceilings}};
  j["tables"] = nlohmann::json::array();
  for (const auto& t : tables) j["tables"].push_back(TableToJson(t));
  j["collectives"] = nlohmann::json::array();
  for (const auto& c : collectives) {
    j["collectives"].push_back({c.rank, c.type, c.process_group, c.seq, c.bytes, c.group_size,
                                c.ts_ns, c.dur_ns, c.kernel, c.name, c.dtype, c.in_nelems});
  }
  return j;
}

RankReport RankReport::Deserialize(const nlohmann::json& j) {
  RankReport r;
  r.file = j.at("file");
  r.argument = j.at("argument");
  r.rank = j.at("rank");
  r.gpu = j.at("gpu");
  r.xplane = j.at("xplane");
  r.world_size = j.at("world_size");
  r.iterations = j.at("iterations");
  r.events = j.at("events");
  r.input_bytes = j.at("input_bytes");
  r.truncated = j.at("truncated");
  r.first_event_ns = j.at("first_event_ns");
  r.collective_kernel_ns = j.at("collective_kernel_ns");
  r.warnings = j.at("warnings").get<std::vector<std::string>>();
  const auto& t = j.at("timeline_ns");
  GpuTimeline& tl = r.timeline;
  int64_t* fields[] = {
      &tl.total_ns,  &tl.computation_ns,    &tl.communication_ns, &tl.exposed_communication_ns,
      &tl.memcpy_ns, &tl.exposed_memcpy_ns, &tl.memset_ns,        &tl.busy_ns,
      &tl.idle_ns,   &tl.first_start_ns,    &tl.last_end_ns};
  for (size_t i = 0; i < std::size(fields); ++i) *fields[i] = t.at(i).get<int64_t>();
  if (const auto peaks = j.find("roofline_peaks"); peaks != j.end()) {
    r.roofline_peaks.gpu = peaks->at("gpu");
    r.roofline_peaks.hbm_tbps = peaks->at("hbm_tbps");
    r.roofline_peaks.ceilings =
        peaks->at("ceilings").get<std::vector<std::pair<std::string, double>>>();
  }
  for (const auto& table : j.at("tables")) r.tables.push_back(TableFromJson(table));
  for (const auto& c : j.at("collectives")) {
    r.collectives.push_back({c.at(0), c.at(1), c.at(2), c.at(3), c.at(4), c.at(5), c.at(6), c.at(7),
                             c.at(8), c.at(9), c.at(10), c.at(11)});
  }
  return r;
}

const Table* TraceReport::Find(const std::string& name) const {
  for (const auto& t : tables) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

TraceReport CombineReports(std::vector<RankReport> ranks, bool keep_rank_tables,
                           const std::function<void(std::vector<RankReport>&)>& read_rank_tables) {
  TraceReport report;
  std::sort(ranks.begin(), ranks.end(), [](const RankReport& a, const RankReport& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.file < b.file;
  });
  // Two files of one rank (a re-run, or a file given twice) would share every per-rank row
  // and the collective matching; say so rather than merge them silently.
  bool repeated_rank = false;
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].rank == ranks[i - 1].rank) {
      repeated_rank = true;
      ranks[i].warnings.push_back(fmt::format(
          "{} and {} are both rank {}; their rows share that rank label, and the cross-rank "
          "collective tables are left out (they need one trace per rank)",
          ranks[i - 1].file, ranks[i].file, ranks[i].rank));
    }
  }
  // Traces of different runs (first events over kOneRunStartSpreadNs apart): their cross-rank
  // tables compare unrelated work (trace merge says the same).
  {
    const RankReport* earliest = nullptr;
    for (const RankReport& r : ranks) {
      if (r.first_event_ns == INT64_MIN) continue;
      if (!earliest || r.first_event_ns < earliest->first_event_ns) earliest = &r;
    }
    for (RankReport& r : ranks) {
      if (!earliest || &r == earliest || r.first_event_ns == INT64_MIN) continue;
      const int64_t apart = r.first_event_ns - earliest->first_event_ns;
      if (apart > kOneRunStartSpreadNs) {
        r.warnings.push_back(fmt::format(
            "its first event is {:.1f} hours after {}'s: not ranks of one run? The spread and "
            "cross-rank tables then compare unrelated work",
            static_cast<double>(apart) / 3.6e12, earliest->file));  // ns per hour
      }
    }
  }
  // One file given twice (directly, through ./ or a link) without a rank of its own would be
  // counted as two ranks. An XPlane file's GPUs share one position on the command line; the
  // same file at two positions with the same ranks is already said above.
  std::vector<std::string> canonical(ranks.size());
  std::map<std::string, std::set<std::pair<int64_t, int64_t>>> positions;  // (argument, rank)
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::error_code ec;
    canonical[i] =
        std::filesystem::weakly_canonical(std::filesystem::absolute(ranks[i].file, ec), ec)
            .string();
    if (ec || ranks[i].file.empty()) {
      canonical[i].clear();
      continue;
    }
    positions[canonical[i]].insert({ranks[i].argument, ranks[i].rank});
  }
  std::set<std::pair<std::string, int64_t>> warned;  // (file, argument)
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (canonical[i].empty()) continue;
    const auto& here = positions[canonical[i]];
    const int64_t argument = ranks[i].argument;
    // The earliest other position of this file, and whether it holds this rank too.
    int64_t other_argument = -1, other_rank = -1;
    bool same_rank = false;
    for (const auto& [arg, rank] : here) {
      if (arg == argument) continue;
      same_rank = same_rank || rank == ranks[i].rank;
      if (other_argument < 0 || arg < other_argument) other_argument = arg, other_rank = rank;
    }
    if (other_argument < 0 || same_rank || other_argument > argument) continue;
    if (!warned.insert({canonical[i], argument}).second) continue;
    ranks[i].warnings.push_back(fmt::format("{} is given twice: it is counted as ranks {} and {}",
                                            ranks[i].file, other_rank, ranks[i].rank));
  }
  Table summary("ranks", "Traces",
                {RankColumn(),
                 {"file", "file", 0},
                 {"gpu", "GPU", 0},
                 {"world_size", "world size", 0},
                 {"events", "events", 0},
                 {"mb", "data (MB)", 1},
                 {"iterations", "iterations", 0},
                 {"gpu_busy_ms", "GPU busy (ms)", 3},
                 {"gpu_total_ms", "GPU span (ms)", 3},
                 {"exposed_comm_ms", "exposed comm (ms)", 3},
                 {"truncated", "truncated", 0}});
  for (const auto& r : ranks) {
    summary.AddRow({r.rank, std::filesystem::path(r.file).filename().string(), r.gpu,
                    r.world_size >= 0 ? Cell(r.world_size) : Cell(), static_cast<int64_t>(r.events),
                    static_cast<double>(r.input_bytes) / 1e6, r.iterations, Ms(r.timeline.busy_ns),
                    Ms(r.timeline.total_ns), Ms(r.timeline.exposed_communication_ns),
                    YesNo(r.truncated)});
  }
  report.tables.push_back(std::move(summary));
  if (ranks.size() >= 2) report.tables.push_back(RankSpreadTable(ranks));
  // A note every rank's table makes alike stays once, unlabelled. Notes that differ in their
  // numbers only ("1311 short kernels, 6.246 ms") become one line over the ranks that make
  // them, numbers as ranges (rank_notes.h); a note of one rank alone is labelled with it.
  if (ranks.size() >= 2) {
    std::map<std::string, std::map<std::string, size_t>> holders;  // table -> note -> ranks
    std::map<std::string, size_t> tables_held;                     // table -> ranks with it
    // table -> shape -> the notes of that shape, one per rank unless a rank repeats it
    std::map<std::string, std::map<std::string, std::vector<RankNote>>> shaped;
    for (const auto& r : ranks) {
      for (const Table& t : r.tables) {
        ++tables_held[t.name()];
        for (const std::string& note : t.notes()) ++holders[t.name()][note];
      }
    }
    for (const auto& r : ranks) {
      for (const Table& t : r.tables) {
        for (const std::string& note : t.notes()) {
          if (holders[t.name()][note] == tables_held[t.name()]) continue;
          shaped[t.name()][NoteShape(note)].push_back({r.rank, note});
        }
      }
    }
    for (auto& r : ranks) {
      for (Table& t : r.tables) {
        std::vector<std::string> notes;
        for (const std::string& note : t.notes()) {
          if (holders[t.name()][note] == tables_held[t.name()]) {
            notes.push_back(note);
            continue;
          }
          const std::vector<RankNote>& alike = shaped[t.name()][NoteShape(note)];
          std::set<int64_t> distinct;
          for (const RankNote& n : alike) distinct.insert(n.rank);
          // Identical merged text on every rank: concatenating the tables keeps it once.
          notes.push_back(distinct.size() == alike.size()
                              ? MergeRankNotes(alike)
                              : MergeRankNotes({RankNote{r.rank, note}}));
        }
        t.SetNotes(std::move(notes));
      }
    }
  }
  if (read_rank_tables) read_rank_tables(ranks);
  // One table per name over every rank. Ranks need not have the same tables (one recomputes,
  // another has no ProfilerStep) nor the same columns in a table.
  std::vector<std::string> names;
  std::map<std::string, std::vector<Table*>> parts;
  for (auto& r : ranks) {
    for (Table& t : r.tables) {
      auto& list = parts[t.name()];
      if (list.empty()) names.push_back(t.name());
      list.push_back(&t);
    }
  }
  for (const std::string& name : names) {
    const std::vector<Table*>& list = parts[name];
    report.tables.push_back(
        keep_rank_tables ? ConcatenateTables(std::vector<const Table*>(list.begin(), list.end()))
                         : ConcatenateTablesTakingRows(list));
  }
  if (!keep_rank_tables) {
    for (RankReport& r : ranks) r.tables.clear();
  }
  // A rank given twice would be matched with itself: its skews read 0, its latency holds its
  // whole wait, and it arrives both first and last.
  if (ranks.size() >= 2 && !repeated_rank) {
    std::vector<std::vector<CollectiveInstance>> per_rank;
    for (const auto& r : ranks) per_rank.push_back(r.collectives);
    Table cross("cross_rank_collectives",
                "Collectives matched across ranks: wait (skew) vs transfer",
                {{"key", "instance", 0},
                 {"type", "collective", 0},
                 {"process_group", "process group", 0},
                 {"ranks", "ranks", 0},
                 {"bytes", "message (B)", 0},
                 {"start_ms", "start (ms)", 3},
                 {"transfer_us", "transfer (us)", 1},
                 {"skew_us", "skew (us)", 1},
                 {"mean_wait_us", "mean wait (us)", 1},
                 {"max_wait_us", "max wait (us)", 1},
                 {"straggler_rank", "last to arrive", 0},
                 {"algbw_gbps", "algbw (GB/s)", 2},
                 {"busbw_gbps", "busbw (GB/s)", 2}});
    auto matched = MatchCollectivesAcrossRanks(per_rank);
    int64_t origin = matched.empty() ? 0 : matched.front().earliest_start_ns;
    struct TypeTotals {
      int64_t instances = 0, transfer_ns = 0, skew_ns = 0;
      double wait_ns = 0;
    };
    std::map<std::string, TypeTotals> totals;
    for (const auto& m : matched) {
      cross.AddRow({m.key, m.type, m.process_group, m.ranks, m.bytes >= 0 ? Cell(m.bytes) : Cell(),
                    Ms(m.earliest_start_ns - origin), Us(static_cast<double>(m.transfer_ns)),
                    Us(static_cast<double>(m.skew_ns)), Us(m.mean_wait_ns),
                    Us(static_cast<double>(m.max_wait_ns)), m.straggler_rank,
                    m.algbw_gbps > 0 ? Cell(m.algbw_gbps) : Cell(),
                    m.busbw_gbps > 0 ? Cell(m.busbw_gbps) : Cell()});
      TypeTotals& tt = totals[m.type];
      tt.instances++;
      tt.transfer_ns += m.transfer_ns;
      tt.skew_ns += m.skew_ns;
      tt.wait_ns += m.mean_wait_ns;
    }
    cross.AddNote(
        "start is relative to the first matched collective; ranks' clocks are assumed aligned");
    Table cross_summary("cross_rank_summary", "Cross-rank collective time by type",
                        {{"type", "collective", 0},
                         {"instances", "instances", 0},
                         {"transfer_ms", "transfer (ms)", 3},
                         {"mean_wait_ms", "mean in-kernel wait per rank (ms)", 3},
                         {"skew_ms", "skew (ms)", 3},
                         {"wait_percent", "wait share (%)", 2}});
    for (const auto& [type, tt] : totals) {
      cross_summary.AddRow({type, tt.instances, Ms(tt.transfer_ns), tt.wait_ns / 1e6,
                            Ms(tt.skew_ns),
                            Pct(tt.wait_ns, tt.wait_ns + static_cast<double>(tt.transfer_ns))});
    }
    report.tables.push_back(std::move(cross_summary));
    report.tables.push_back(std::move(cross));
    report.tables.push_back(CollectiveSyncTable(matched));
    report.tables.push_back(StragglerTable(matched, ranks));
  }
  report.ranks = std::move(ranks);
  return report;
}

bool RowsAreRanks(const std::string& table) { return table == "ranks" || table == "stragglers"; }

namespace {

// A copy of `table` with only the first `n` rows of each rank.
// The first `n` rows of each rank, with a note saying how many were left out and where
// they are.
Table TopPerRank(const Table& table, size_t n) {
  Table out(table.name(), table.title(), table.columns());
  int rank_col = table.ColumnIndex("rank");
  std::map<int64_t, size_t> seen;
  size_t dropped = 0;
  for (const auto& row : table.rows()) {
    int64_t rank = rank_col >= 0 ? std::get<int64_t>(row[rank_col]) : 0;
    if (seen[rank]++ < n) {
      out.AddRow(row);
    } else {
      ++dropped;
    }
  }
  for (const auto& note : table.notes()) out.AddNote(note);
  if (dropped > 0) {
    out.AddNote(rank_col >= 0 ? fmt::format("{} of {} rows shown ({} per rank); every row is in "
                                            "--json, --csv and --xlsx",
                                            out.size(), table.size(), n)
                              : fmt::format("{} of {} rows shown; every row is in --json, --csv "
                                            "and --xlsx",
                                            out.size(), table.size()));
  }
  return out;
}

}  // namespace

// Drops columns by key (for the narrower console view).
Table WithoutColumns(const Table& table, const std::vector<std::string>& drop) {
  std::vector<size_t> keep;
  std::vector<Column> columns;
  for (size_t c = 0; c < table.columns().size(); ++c) {
    if (std::find(drop.begin(), drop.end(), table.columns()[c].key) != drop.end()) continue;
    keep.push_back(c);
    columns.push_back(table.columns()[c]);
  }
  Table out(table.name(), table.title(), columns);
  for (const auto& row : table.rows()) {
    std::vector<Cell> cells;
    for (size_t c : keep) cells.push_back(row[c]);
    out.AddRow(std::move(cells));
  }
  for (const auto& note : table.notes()) out.AddNote(note);
  return out;
}

Table ForConsole(Table table) {
  // Columns with a value in some row (a column empty in every row says nothing on a console:
  // no launch calls in an XPlane profile, no CPU time for XLA ops).
  std::vector<size_t> kept;
  std::vector<Column> columns;
  for (size_t c = 0; c < table.columns().size(); ++c) {
    const bool any = std::any_of(table.rows().begin(), table.rows().end(), [&](const auto& row) {
      return !std::holds_alternative<std::monostate>(row[c]);
    });
    if (!any && !table.empty()) continue;
    kept.push_back(c);
    columns.push_back(table.columns()[c]);
  }
  Table out(table.name(), table.title(), columns);
  for (const auto& row : table.rows()) {
    std::vector<Cell> cells;
    for (size_t c : kept) {
      cells.push_back(row[c]);
      auto* text = std::get_if<std::string>(&cells.back());
      if (text) *text = PersonCellText(table.columns()[c], *text);
    }
    out.AddRow(std::move(cells));
  }
  for (const auto& note : table.notes()) out.AddNote(note);
  return out;
}

std::string ReportToConsole(const TraceReport& report, size_t top) {
  std::string out;  // warnings go to stderr (the CLI), not into the report
  // Past a handful of ranks the per-rank tables show the two ends of the spread only (the
  // slowest and the fastest rank by GPU span): the console stays readable at 64 ranks and
  // every rank stays in --json, --csv and --xlsx.
  constexpr size_t kRanksShownInFull = 8;
  std::set<int64_t> shown_ranks;
  if (report.ranks.size() > kRanksShownInFull) {
    auto by_span = [](const RankReport& a, const RankReport& b) {
      return a.timeline.total_ns < b.timeline.total_ns;
    };
    shown_ranks.insert(std::max_element(report.ranks.begin(), report.ranks.end(), by_span)->rank);
    shown_ranks.insert(std::min_element(report.ranks.begin(), report.ranks.end(), by_span)->rank);
  }
  auto show = [&](const Table* t, size_t top, const std::vector<std::string>& drop,
                  size_t width = 60) {
    if (!t || t->empty()) return;
    // The ranks shown first, then the top rows of each: the row counts the note gives are
    // those of the ranks on screen.
    Table shown;
    if (!shown_ranks.empty() && t->ColumnIndex("rank") >= 0 && !RowsAreRanks(t->name())) {
      const int col = t->ColumnIndex("rank");
      Table kept(t->name(), t->title(), t->columns());
      for (const auto& row : t->rows()) {
        if (shown_ranks.count(std::get<int64_t>(row[col])) > 0) kept.AddRow(row);
      }
      for (const auto& note : t->notes()) kept.AddNote(note);
      kept.AddNote(
          fmt::format("{} ranks: the slowest and fastest by GPU span shown; every rank "
                      "is in --json, --csv and --xlsx",
                      report.ranks.size()));
      shown = TopPerRank(kept, top);
    } else if (RowsAreRanks(t->name()) && t->size() > top) {
      shown = *t;
      shown.Truncate(top);
      shown.AddNote(fmt::format("{} of {} ranks shown; every rank is in --json, --csv and --xlsx",
                                top, t->size()));
    } else {
      shown = TopPerRank(*t, top);
    }
    std::vector<std::string> hidden = drop;
    // One rank: its number is in the Traces table, not repeated on every row.
    if (report.ranks.size() == 1 && t->name() != "ranks") hidden.push_back("rank");
    out += RenderConsoleTable(ForConsole(WithoutColumns(shown, hidden)), width) + "\n";
  };
  // Every table the registry shows on the console, in its order. A recompute column says
  // something only when the trace has recompute frames.
  const bool recompute = report.Find("recompute_timeline") != nullptr;
  for (const TablePresentation& p : ReportTablePresentations()) {
    if (p.console_rows == TablePresentation::kNone) continue;
    const size_t rows =
        p.console_rows == TablePresentation::kTop ? std::min(top, p.console_cap) : p.console_rows;
    std::vector<std::string> hidden(p.console_hidden.begin(), p.console_hidden.end());
    if (!recompute) hidden.push_back("is_recompute");
    show(report.Find(std::string(p.name)), rows, hidden, p.console_width);
  }
  return out;
}

void WriteReportHtml(const TraceReport& report, const std::string& path,
                     const std::vector<std::string>& inputs) {
  WriteFileAtomically(path, RenderReportHtml(report), inputs);
}

std::string RenderReportHtml(const TraceReport& report) {
  std::vector<HtmlSection> sections;
  // The GPU time of every rank, the roofline and the top kernels are drawn by the page's
  // script (report_page.h) from the rows of the tables below.
  // A page with every kernel and op of many ranks is too heavy for a browser: the long
  // tables keep their top rows per rank, and say so. The rows per rank shrink as ranks grow,
  // so that a long table holds about 800 rows however many ranks there are (at least 10
  // each); --csv, --xlsx and --json keep every row.
  const size_t kHtmlRowsPerRank =
      std::max<size_t>(10, std::min<size_t>(100, 800 / std::max<size_t>(1, report.ranks.size())));
  std::deque<Table> shortened;
  // Sections in the registry's order, each with its tables.
  for (const TablePresentation& p : ReportTablePresentations()) {
    if (p.html_section.empty()) continue;
    if (sections.empty() || sections.back().heading != p.html_section)
      sections.push_back({.heading = std::string(p.html_section)});
    const Table* t = report.Find(std::string(p.name));
    // A table without rows (a family of ops the trace does not have) is a bare header on a
    // page: left to the machine outputs.
    if (!t || t->empty()) continue;
    if (p.html_long) {
      shortened.push_back(TopPerRank(*t, kHtmlRowsPerRank));
      t = &shortened.back();
    }
    sections.back().tables.push_back(t);
  }
  // What stderr said (GPU work left out, a file cut short) belongs next to the numbers it
  // qualifies: first in the Overview.
  Table warnings("warnings", "Warnings: read the numbers below with these",
                 {RankColumn(), {"file", "file", 0}, {"warning", "warning", 0, true}});
  for (const RankReport& r : report.ranks) {
    for (const std::string& w : r.warnings)
      warnings.AddRow({r.rank, std::filesystem::path(r.file).filename().string(), w});
  }
  if (!warnings.empty() && !sections.empty() && sections.front().heading == "Overview") {
    sections.front().tables.insert(sections.front().tables.begin(), &warnings);
  }
  for (HtmlSection& s : sections) {
    if (s.heading != "Kernels") continue;
    if (const Table* t = report.Find("kernel_categories")) {
      BarChart chart{"GPU time by category (all ranks)", "ms", {}};
      std::map<std::string, double> by;
      const int category = t->ColumnIndex("category"), time = t->ColumnIndex("time_ms");
      for (const auto& row : t->rows())
        by[std::get<std::string>(row[category])] += std::get<double>(row[time]);
      for (const auto& [k, v] : by) chart.bars.push_back({k, v});
      std::stable_sort(chart.bars.begin(), chart.bars.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      for (const auto& bar : chart.bars) chart.colors.push_back(CategoryColor(bar.first));
      s.charts.push_back(std::move(chart));
    }
    // The short-kernel histogram is a chart on the page (its table is in the machine outputs).
    // Each rank bins its own range, so with several ranks every rank's bin is counted in the
    // common bin (over all ranks' range) that holds its centre.
    if (const Table* t = report.Find("short_kernel_histogram"); t && !t->empty()) {
      const int from = t->ColumnIndex("bin_start_us"), to = t->ColumnIndex("bin_end_us");
      const int count = t->ColumnIndex("count"), rank = t->ColumnIndex("rank");
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      std::map<int64_t, int> bins_per_rank;
      for (const auto& row : t->rows()) {
        lo = std::min(lo, std::get<double>(row[from]));
        hi = std::max(hi, std::get<double>(row[to]));
        ++bins_per_rank[rank < 0 ? 0 : std::get<int64_t>(row[rank])];
      }
      const size_t bins = static_cast<size_t>(bins_per_rank.begin()->second);
      ColumnChart chart;
      chart.x_unit = "duration (us)";
      chart.y_unit = "kernels";
      chart.start = lo;
      chart.end = hi;
      chart.columns.assign(bins, 0.0);
      const double width = hi > lo ? (hi - lo) / static_cast<double>(bins) : 1.0;
      for (const auto& row : t->rows()) {
        const double centre = 0.5 * (std::get<double>(row[from]) + std::get<double>(row[to]));
        const size_t at = std::min(
            bins - 1, static_cast<size_t>(std::max(0.0, std::floor((centre - lo) / width))));
        chart.columns[at] += static_cast<double>(std::get<int64_t>(row[count]));
      }
      chart.title = t->title();
      // Every rank of the report counts, those without short kernels too (the title and the
      // table of contents say how many ranks the chart stands for).
      if (report.ranks.size() > 1) {
        chart.title +=
            bins_per_rank.size() < report.ranks.size()
                ? fmt::format(
                      " ({} ranks, {} with short kernels: each rank's bins counted where "
                      "their centres fall)",
                      report.ranks.size(), bins_per_rank.size())
                : fmt::format(" ({} ranks: each rank's bins counted where their centres fall)",
                              report.ranks.size());
      }
      chart.note = "Every bin's count: short_kernel_histogram in --csv, --json and --xlsx.";
      s.histograms.push_back(std::move(chart));
    }
  }
  // A section whose tables are all empty (no collectives in a one-GPU trace) is left out, not
  // shown as a bare heading.
  std::erase_if(sections, [](const HtmlSection& s) {
    return s.tables.empty() && s.charts.empty() && s.histograms.empty();
  });
  HtmlPage page(ReportPageTitle(report), std::move(sections));
  page.cell_text = PersonCellText;
  page.data = ReportChartData(report);
  page.script = ReportPageScript();
  return RenderHtmlPage(page);
}

}  // namespace sextant
