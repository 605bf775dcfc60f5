// Analyses many trace files (one per rank) in parallel: on all cores with std::thread, and
// optionally spread over MPI processes with the per-rank reports gathered on MPI rank 0.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "trace/trace_report.h"

namespace sextant {

// Reads one profile, recognised by content: a Kineto JSON trace gives one TraceData, an XPlane
// profile (JAX/XLA) one per GPU that ran work.
std::vector<TraceData> ReadTraceFile(const std::string& path);

// Each path, a directory replaced by the trace files directly inside it (.json, .json.gz,
// .json.zst, .xplane.pb; a rank per file, as HTA and TensorBoard's plugin read a trace_dir),
// in name order. Throws UserError for a directory that cannot be read or holds none.
std::vector<std::string> ExpandTraceDirectories(const std::vector<std::string>& paths);

// What `trace report TRACE... --capture CAPTURE...` reads: the trace files its arguments stand
// for (ExpandTraceDirectories) and the capture traces each --capture argument stands for
// (CaptureTraceFiles: a folder, its execution_details.json, or a trace). Throws UserError as
// those do.
struct TraceReportInputs {
  std::vector<std::string> traces;
  std::vector<std::string> captures;
};
TraceReportInputs ResolveTraceReportInputs(const std::vector<std::string>& traces,
                                           const std::vector<std::string>& captures = {});

// The report `trace report` writes for `inputs` (options.capture_traces is replaced by
// inputs.captures): every file analysed on up to `threads` threads, the ranks combined with
// their cross-rank tables. `sextant serve` shows a trace view through this too, so a page it
// serves is the page `trace report --html` writes. `read_rank_tables` is CombineReports's.
TraceReport BuildTraceReport(
    const TraceReportInputs& inputs, ReportOptions options, unsigned threads = 0,
    const std::function<void(std::vector<RankReport>&)>& read_rank_tables = {});

// Reads and analyses each file on up to `threads` threads (0 = all cores); each trace is
// freed as soon as its report is built. Order follows `files`. Throws the first UserError.
std::vector<RankReport> AnalyzeTraceFiles(const std::vector<std::string>& files,
                                          const ReportOptions& options, unsigned threads = 0);

// Under mpirun: MPI process p analyses files p, p + size, ... on `threads` threads and
// process 0 gathers every report. Returns the reports on process 0 and an empty list
// elsewhere; `*is_root` tells which. Reports are ranked as by AnalyzeTraceFiles. Initialises
// and finalises MPI. Throws UserError if this build has no MPI.
std::vector<RankReport> AnalyzeTraceFilesMpi(const std::vector<std::string>& files,
                                             const ReportOptions& options, unsigned threads,
                                             bool* is_root);

}  // namespace sextant
