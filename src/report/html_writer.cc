#include "report/html_writer.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/file_io.h"

namespace sextant {
namespace {

constexpr const char* kTableStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:2px 6px;max-width:40em}"
    // Long names (kernels, shapes) may break anywhere; numbers and headers never mid-word.
    "td{overflow-wrap:anywhere}th{overflow-wrap:normal;word-break:normal}"
    "th{background:#eef;position:sticky;top:0}td.n{text-align:right;white-space:nowrap;"
    "overflow-wrap:normal;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#f8f8fb}"
    ".b{fill:#4a78c2}.l,.v{font-size:12px}.note{color:#555;font-size:12px}"
    "figcaption{font-weight:600}";

// JSON for a <script> element: invalid UTF-8 (file names from a snapshot) is replaced rather
// than aborting the page, and every '<' becomes \u003c so that no "</script>" or "<!--" in
// the data can end or alter the element.
std::string ScriptSafeJson(const nlohmann::json& data) {
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size());
  for (char ch : json) {
    if (ch == '<') {
      safe += "\\u003c";
    } else {
      safe += ch;
    }
  }
  return safe;
}

}  // namespace

std::string EscapeHtml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string RenderBarChartSvg(const BarChart& chart) {
  const int bar_height = 18, label_width = 260, plot_width = 420, gap = 4;
  double max_value = 0;
  for (const auto& [label, value] : chart.bars) max_value = std::max(max_value, value);
  int height = static_cast<int>(chart.bars.size()) * (bar_height + gap) + 24;
  std::string svg = fmt::format(
      "<figure><figcaption>{}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" role=\"img\">",
      EscapeHtml(chart.title), label_width + plot_width + 140, height);
  int y = 4;
  for (const auto& [label, value] : chart.bars) {
    double w = max_value > 0 ? plot_width * std::max(0.0, value) / max_value : 0;
    // Built by fmt from a view: GCC 12 -O2 misreads substr() + "..." as out of bounds.
    const std::string short_label =
        label.size() > 40 ? fmt::format("{}...", std::string_view(label).substr(0, 37)) : label;
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"l\">{}<title>{}</title></text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" class=\"b\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"v\">{:.3f} {}</text>",
        label_width - 6, y + 13, EscapeHtml(short_label), EscapeHtml(label), label_width, y, w,
        bar_height, label_width + w + 4, y + 13, value, EscapeHtml(chart.unit));
    y += bar_height + gap;
  }
  return svg + "</svg></figure>\n";
}

std::string RenderHtmlTable(const Table& table) {
  std::string out = fmt::format("<h3 id=\"{}\">{}</h3>\n<table><thead><tr>",
                                EscapeHtml(table.name()), EscapeHtml(table.title()));
  for (const auto& c : table.columns()) out += "<th>" + EscapeHtml(c.header) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows()) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      bool number = !std::holds_alternative<std::string>(row[c]);
      out += number ? "<td class=\"n\">" : "<td>";
      out += EscapeHtml(FormatCell(row[c], table.columns()[c].precision)) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  for (const auto& note : table.notes()) out += "<p class=\"note\">" + EscapeHtml(note) + "</p>\n";
  return out;
}

std::string RenderHtmlPage(const HtmlPage& page) {
  const std::string title = EscapeHtml(page.title);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n"
      "<style>{}</style></head><body>\n{}",
      title, page.style.empty() ? kTableStyle : page.style,
      page.heading ? "<h1>" + title + "</h1>\n" : std::string());
  for (const auto& section : page.sections) {
    out += "<section><h2>" + EscapeHtml(section.heading) + "</h2>\n";
    for (const auto& chart : section.charts) out += RenderBarChartSvg(chart);
    for (const Table* table : section.tables) out += RenderHtmlTable(*table);
    out += "</section>\n";
  }
  if (!page.script.empty()) {
    out += "<div id=\"app\"></div>\n<script type=\"application/json\" id=\"data\">" +
           ScriptSafeJson(page.data) + "</script>\n<script>" + page.script + "</script>";
  }
  return out + "</body></html>\n";
}

void WriteHtmlPage(const std::string& path, const HtmlPage& page,
                   const std::vector<std::string>& inputs) {
  WriteFileAtomically(path, RenderHtmlPage(page), inputs);
}

}  // namespace sextant
