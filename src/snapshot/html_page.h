// Self-contained HTML pages for snapshot and sampling reports: the data travels as JSON inside
// the page and a small inline script draws it as SVG (zoom with the wheel, pan by dragging,
// hover for values). No external scripts, fonts or network requests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sextant {

// `page_script` reads the global `DATA` and the helpers `el`, `fmtBytes` and `lineChart`.
std::string RenderHtmlPage(const std::string& title, const nlohmann::json& data,
                           const char* page_script);

// Escapes text for HTML element content and attribute values.
std::string HtmlEscape(const std::string& text);

extern const char* const kSnapshotPageScript;
extern const char* const kWatchPageScript;

}  // namespace sextant
