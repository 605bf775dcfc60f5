// Output of `memory watch`: CSV (one row per GPU per sample), JSON, HTML, and a short
// per-GPU summary.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "snapshot/process_watch.h"

namespace sextant {

enum class WatchOutputFormat { kNone, kCsv, kJson, kHtml };

// By extension: .csv, .json, .html/.htm; anything else is a UserError.
WatchOutputFormat WatchFormatForPath(const std::string& path);

std::string WatchCsv(const WatchResult& result);
nlohmann::json WatchJson(const WatchResult& result);
std::string WatchHtml(const WatchResult& result);
std::string RenderWatch(const WatchResult& result, WatchOutputFormat format);

// Per GPU: peak used of total, mean and max utilisation.
std::string WatchSummaryText(const WatchResult& result);

}  // namespace sextant
