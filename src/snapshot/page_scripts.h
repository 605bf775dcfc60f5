// The snapshot and watch HTML pages: their data travels as JSON inside the page and a small
// inline script draws it as SVG (zoom with the wheel, pan by dragging, hover for values).
// No external scripts, fonts or network requests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/html_writer.h"

namespace sextant {

// A page whose `page_script` reads the global `DATA` and the helpers `el`, `fmtBytes`,
// `table` and `lineChart`, and draws into the element `app`.
HtmlPage ChartPage(const std::string& title, const nlohmann::json& data, const char* page_script);

extern const char* const kSnapshotPageScript;
extern const char* const kWatchPageScript;

}  // namespace sextant
