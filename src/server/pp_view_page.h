// The pipeline-schedule viewer as one self-contained HTML page: the view's JSON
// (server/pp_view_data.h) with the embedded front-end (web/pp_view.js, web/pp_view.css) inline.
// `pp view --html` writes it; `pp view` and `serve` send the same bytes. The page holds each
// rank's blocks and transfers as columns (one list per key) with times to the microsecond, a
// fifth of the bytes of the JSON document (`pp view --json`, /api/N.json), which keeps one
// object per block at full precision.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sextant {

std::string RenderPpViewPage(const nlohmann::json& view);

// The console summary of the panels shown first: per run and iteration, the iteration time and
// per-rank F/B/W, bubble and memory; then the comparisons (measured vs ideal or simulated).
std::string RenderPpViewText(const nlohmann::json& view);

}  // namespace sextant
