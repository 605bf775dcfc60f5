// `trace report`: runs every analysis on each rank's trace and assembles the tables that
// every output format shares (console, JSON, CSV, XLSX, HTML). Per-rank tables carry a
// leading "rank" column so that several ranks concatenate into one table each.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/table.h"
#include "trace/collectives.h"
#include "trace/event_store.h"
#include "trace/gpu_timeline.h"

namespace sextant {

// Every table holds every row: --json, --csv and --xlsx are complete; only the console (and
// the HTML page, which a browser must hold) show the top rows.
struct ReportOptions {
  std::string gpu_arch;  // overrides the device name for rooflines ("" = from the trace)
  // Graph-capture traces whose captured ops the replayed kernels take (graph_capture.h).
  std::vector<std::string> capture_traces;
  // The outputs the report is for: --json, --csv and --xlsx write every table (and TraceLens's
  // reports are built from them); without those, the console shows some and the HTML page
  // (`page`) some more (report_tables.h). A table no output asked for is not built: a trace of
  // many distinct shapes has tables of a row per shape or call (the perf sheets, unified_perf,
  // launcher_op_args), an XPlane profile one of a row per device event (xla_activities).
  bool every_table = true;
  bool page = false;
  // Whether the outputs above write (or draw) the table `name`.
  bool Writes(std::string_view name) const;
};

// The peaks the roofline table's bounds come from (RooflinePeakTflops and the GPU's HBM
// bandwidth), kept so that the HTML page draws its roofline against the same ceilings.
// Empty `gpu`: the GPU is not in the hardware library and the table has no bounds.
struct RooflinePeaks {
  std::string gpu;  // hardware library name
  double hbm_tbps = 0;
  std::vector<std::pair<std::string, double>> ceilings;  // ("BF16 matrix", dense TFLOP/s)
};

struct RankReport {
  std::string file;
  int64_t rank = -1;  // distributedInfo rank, else the file's position on the command line
  // The file's position on the command line (-1: not from a file list). One XPlane file holds
  // a report per GPU, all at one position; one file at two positions was given twice.
  int64_t argument = -1;
  std::string gpu;
  bool xplane = false;  // one GPU of an XPlane profile (JAX/XLA), not a Kineto trace
  int64_t world_size = -1;
  int64_t iterations = 0;
  size_t events = 0;
  size_t input_bytes = 0;
  bool truncated = false;
  // The profiler clock at the trace's first event (its base time plus the first timestamp);
  // INT64_MIN when unknown. Ranks of one run start within seconds of each other.
  int64_t first_event_ns = INT64_MIN;
  std::vector<std::string> warnings;
  GpuTimeline timeline;
  RooflinePeaks roofline_peaks;
  std::vector<Table> tables;
  std::vector<CollectiveInstance> collectives;
  // Every collective kernel of the trace, those of the profiled window and those queued
  // before it (TraceLens's total_nccl_dur_us).
  int64_t collective_kernel_ns = 0;

  // Complete serialisation (used to gather reports from MPI ranks).
  nlohmann::json Serialize() const;
  static RankReport Deserialize(const nlohmann::json& json);
};

// `fallback_rank` is used when the trace has no distributedInfo rank.
RankReport AnalyzeTrace(const TraceData& trace, const ReportOptions& options,
                        int64_t fallback_rank);

struct TraceReport {
  std::vector<RankReport> ranks;
  std::vector<Table> tables;  // per-rank tables concatenated, then cross-rank tables
  const Table* Find(const std::string& name) const;
};

// Concatenates per-rank tables and adds the cross-rank collective tables. Without
// `keep_rank_tables` the per-rank tables' rows move into the combined ones and the ranks keep
// no tables: a report of many distinct kernels or ranks is held once, not twice.
// `read_rank_tables`, if given, is shown the ranks (in report order, their notes labelled)
// while their tables are whole, just before the rows move: TraceLens's per-rank report format
// is built there rather than from a second copy of every table. It may take away a table no
// later output writes.
TraceReport CombineReports(
    std::vector<RankReport> ranks, bool keep_rank_tables = true,
    const std::function<void(std::vector<RankReport>&)>& read_rank_tables = {});

// Tables over all ranks whose rows are ranks ("ranks", "stragglers"): whole on the console and
// at the top of the JSON (trace/report_json.h), not split among the ranks as the per-rank
// tables are.
bool RowsAreRanks(const std::string& table);
// The compact human summary printed by default: `top` rows per rank of the kernel and op
// tables (other tables have their own short limits). Warnings are not part of it: the caller
// prints RankReport::warnings (the CLI on stderr).
std::string ReportToConsole(const TraceReport& report, size_t top = 10);
// `table` as the console shows it: kernel names without return type and parameter list
// (ShortKernelName), no column that is empty in every row; the machine outputs keep both.
Table ForConsole(Table table);
// `table` without the columns of the given keys (a narrower console view).
Table WithoutColumns(const Table& table, const std::vector<std::string>& drop);
// The self-contained HTML report: the tables, and charts drawn by an inline script from the
// same tables' rows (report_page.h). WriteReportHtml writes it atomically; it throws
// UserError if `path` cannot be written or is one of `inputs`.
std::string RenderReportHtml(const TraceReport& report);
void WriteReportHtml(const TraceReport& report, const std::string& path,
                     const std::vector<std::string>& inputs = {});

}  // namespace sextant
