// Sextant's trace tables under TraceLens's names (generate_perf_report_pytorch: one CSV file or
// XLSX sheet per table, its column headers), so that scripts and spreadsheets written against
// TraceLens's reports read Sextant's. Only the tables whose rows match TraceLens's (tested
// against its golden reports) are given; docs/trace.md lists them and the columns left out.
#pragma once

#include <vector>

#include "report/table.h"
#include "trace/trace_report.h"

namespace sextant {

// One rank's tables, named and headed as TraceLens writes them, without the rank column:
// gpu_timeline, kernel_summary, short_kernel_histogram, short_kernels_summary.
std::vector<Table> TraceLensTables(const RankReport& rank);

// The tables of TraceLens's multi-rank collective report (generate_multi_rank_collective_
// report_pytorch): nccl_summary_implicit_sync, nccl_summary_long and straggler_summary, from a
// report of two or more ranks; none otherwise. TraceLens's node_id / node_span columns (from
// --gpus_per_node) are not given.
std::vector<Table> TraceLensMultiRankTables(const TraceReport& report);

}  // namespace sextant
