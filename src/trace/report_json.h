// `trace report --json`: {"ranks": [{"rank", "gpu", "iterations", "timeline_us": {...},
// "kernels", "ops", "roofline", "collectives", ...}], "cross_rank_collectives": [...]}
// (SPEC §1.3): every per-rank table's rows under each rank, every table over all ranks under
// its own name. Written a row at a time, so that a report of millions of rows (an XPlane
// profile's xla_activities) is never held as a JSON tree.
#pragma once

#include <nlohmann/json.hpp>

#include "report/json_stream.h"
#include "trace/trace_report.h"

namespace sextant {

void WriteReportJson(const TraceReport& report, JsonStream& out);
// The same document as one tree (the web UI keeps it beside the page).
nlohmann::json ReportToJson(const TraceReport& report);

}  // namespace sextant
