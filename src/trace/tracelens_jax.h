// TraceLens's JAX report (TraceLens/Reporting/generate_perf_report_jax.py) of an XLA profile
// (XPlane): one report over every GPU of the file, its tables named and headed as TraceLens
// writes them (gpu_timeline per gpu_pid, gpu_events_averages, kernel_launchers and their
// summaries, df_xla_perf, xla_summary, op_conv), so that `--format tracelens` on a JAX or
// MaxText profile gives the files a TraceLens user's scripts read.
//
// Each device's report carries the rows those tables are built from (XlaActivitiesTable), so
// that they travel with the rank reports (MPI, JSON) like every other table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/table.h"
#include "trace/event_store.h"
#include "trace/trace_report.h"

namespace sextant {

// "xla_activities": one row per device activity of an XPlane trace (kernels and copies), with
// its track, exact times, launch time, XLA op, TraceLens's JAX op category and the operands of
// its HLO instruction. Empty for a Kineto trace.
Table XlaActivitiesTable(int64_t rank, const TraceData& trace);

// TraceLens's JAX perf-model FLOPs of a convolution kernel; exposed for tests.
struct JaxConvCall {
  std::vector<int64_t> input, filter, output;  // filter: [out channels, in channels, spatial...]
  bool bias = false;
  int bytes_per_element = 0;  // 0: unknown
  bool backward = false;
};
// 2 x (input channels x kernel window) x output elements (+ output elements with a bias); for
// the backward pass, the data gradient and the weight gradient, as many again each.
double JaxConvFlops(const JaxConvCall& conv);
// Input, filter and output (and bias) read or written once.
double JaxConvBytes(const JaxConvCall& conv);

// The report over the GPU devices of one XPlane file (the ranks it gave, in any order).
std::vector<Table> TraceLensJaxTables(const std::vector<const RankReport*>& devices);
// The same from the devices' xla_activities tables, handed over when nothing else writes them:
// each is freed as it is read, so the report is not built beside a copy of every row.
std::vector<Table> TraceLensJaxTablesFromActivities(std::vector<Table> activities);

}  // namespace sextant
