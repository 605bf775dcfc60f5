#include "report/html_writer.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/cell_shortening.h"
#include "util/file_io.h"

namespace sextant {
namespace {

constexpr const char* kTableStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
    // A heading naming a long path wraps instead of widening the page.
    "h1{overflow-wrap:anywhere}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:2px 6px;max-width:40em}"
    // Long names (kernels, shapes) may break anywhere; numbers and headers never mid-word.
    "td{overflow-wrap:anywhere}th{overflow-wrap:normal;word-break:normal}"
    // Short words (dims, dtypes, statuses, op names) stay whole.
    "td.s{white-space:nowrap;overflow-wrap:normal}"
    // A table wider than the window scrolls inside its own box, not the whole page.
    ".tw{overflow-x:auto;max-width:100%}"
    "th{background:#eef;position:sticky;top:0}td.n{text-align:right;white-space:nowrap;"
    "overflow-wrap:normal;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#f8f8fb}"
    ".b{fill:#4a78c2}.l,.v{font-size:12px}.note{color:#555;font-size:12px}"
    "figcaption{font-weight:600}"
    "nav.toc{font-size:13px;margin:.5em 0 1em;line-height:1.6}nav.toc a{color:#2a5aa8}"
    "nav.toc ul{margin:0;padding-left:1.2em}nav.toc>ul>li>a{font-weight:600}"
    "nav.toc>ul{columns:2 28em;column-gap:2em}nav.toc>ul>li{break-inside:avoid}"
    ".h{fill:#4a78c2}.ax{stroke:#888}"
    // Fixed-size charts shrink with a narrow window instead of clipping their labels.
    "svg.fit{max-width:100%;height:auto}";

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
      "<figure><figcaption>{0}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{1}\" height=\"{2}\" viewBox=\"0 0 {1} {2}\" class=\"fit\" role=\"img\">",
      EscapeHtml(chart.title), label_width + plot_width + 140, height);
  std::vector<std::string> labels;
  for (const auto& bar : chart.bars) labels.push_back(bar.first);
  const std::vector<std::string> short_labels = ShortenColumn(labels, 40);
  int y = 4;
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const auto& [label, value] = chart.bars[i];
    const std::string& short_label = short_labels[i];
    const std::string color = i < chart.colors.size() ? chart.colors[i] : "";
    double w = max_value > 0 ? plot_width * std::max(0.0, value) / max_value : 0;
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"l\">{}<title>{}</title></text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" class=\"b\"{}/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"v\">{:.3f} {}</text>",
        label_width - 6, y + 13, EscapeHtml(short_label), EscapeHtml(label), label_width, y, w,
        bar_height, color.empty() ? "" : " style=\"fill:" + EscapeHtml(color) + "\"",
        label_width + w + 4, y + 13, value, EscapeHtml(chart.unit));
    y += bar_height + gap;
  }
  return svg + "</svg></figure>\n";
}

std::string RenderColumnChartSvg(const ColumnChart& chart) {
  const int plot_height = 140, left = 56, bottom = 34, top = 8;
  const size_t n = chart.columns.size();
  // Columns at least 3 px wide, the plot at least 600 px: 100 bins make a 600 px plot.
  const int column = n == 0 ? 0 : std::max(3, static_cast<int>(600 / n));
  const int plot_width = std::max(600, column * static_cast<int>(n));
  double max_value = 0;
  for (double v : chart.columns) max_value = std::max(max_value, v);
  std::string svg = fmt::format(
      "<figure><figcaption>{0}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{1}\" height=\"{2}\" viewBox=\"0 0 {1} {2}\" class=\"fit\" role=\"img\">",
      EscapeHtml(chart.title), left + plot_width + 20, top + plot_height + bottom);
  const double width = n == 0 ? 0 : static_cast<double>(plot_width) / static_cast<double>(n);
  const double bin = n == 0 ? 0 : (chart.end - chart.start) / static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    const double v = std::max(0.0, chart.columns[i]);
    if (v <= 0 || max_value <= 0) continue;
    const double h = plot_height * v / max_value;
    const double lo = chart.start + bin * static_cast<double>(i);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"h\">"
        "<title>{:g}-{:g} {}: {:g} {}</title></rect>",
        left + width * static_cast<double>(i), top + plot_height - h, std::max(1.0, width - 1), h,
        lo, lo + bin, EscapeHtml(chart.x_unit), v, EscapeHtml(chart.y_unit));
  }
  // Axes: the y scale's top and zero, the x edges at the quarters.
  const int base = top + plot_height;
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"ax\"/>"
      "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" class=\"ax\"/>"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"end\" class=\"l\">{6:g}</text>"
      "<text x=\"{4}\" y=\"{1}\" text-anchor=\"end\" class=\"l\">0</text>"
      "<text x=\"12\" y=\"{7}\" class=\"l\" transform=\"rotate(-90 12 {7})\" "
      "text-anchor=\"middle\">{8}</text>",
      left, base, left + plot_width, top, left - 4, top + 10, max_value, top + plot_height / 2,
      EscapeHtml(chart.y_unit));
  for (int q = 0; q <= 4; ++q) {
    const double x = left + plot_width * q / 4.0;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"ax\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" class=\"l\">{4:.3g}</text>",
        x, base, base + 4, base + 16, chart.start + (chart.end - chart.start) * q / 4.0);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"l\">{}</text>",
                     left + plot_width / 2, base + 30, EscapeHtml(chart.x_unit));
  svg += "</svg>";
  if (!chart.note.empty()) svg += "<p class=\"note\">" + EscapeHtml(chart.note) + "</p>";
  return svg + "</figure>\n";
}

std::string RenderHtmlTable(const Table& table, HtmlCellText cell_text) {
  const std::vector<Column>& columns = table.columns();
  std::string out = fmt::format("<h3 id=\"{}\">{}</h3>\n<div class=\"tw\"><table><thead><tr>",
                                EscapeHtml(table.name()), EscapeHtml(table.title()));
  for (const auto& c : columns) out += "<th>" + EscapeHtml(c.header) + "</th>";
  out += "</tr></thead><tbody>\n";
  // Each column's cells as a person reads them, then cut as the console cuts them: one name of
  // thousands of characters would otherwise make its row hundreds of pixels tall. Prose wraps.
  std::vector<std::vector<std::string>> full(columns.size()), shown(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    std::vector<std::string> person;
    for (const auto& row : table.rows()) {
      full[c].push_back(FormatCell(row[c], columns[c].precision));
      const bool text = std::holds_alternative<std::string>(row[c]);
      person.push_back(text && cell_text ? cell_text(columns[c], full[c].back()) : full[c].back());
    }
    shown[c] = columns[c].prose ? person : ShortenColumn(person, kHtmlCellWidth);
  }
  for (size_t r = 0; r < table.size(); ++r) {
    const auto& row = table.rows()[r];
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string& text = shown[c][r];
      // A number, or a text of digits and a sign or point (a TraceLens M, N, K written as
      // text), is right-aligned and never wrapped; short text is not wrapped either.
      const bool number = !std::holds_alternative<std::string>(row[c]) ||
                          (!text.empty() && text.size() <= 24 &&
                           text.find_first_not_of("0123456789.-+e") == std::string::npos);
      out += number ? "<td class=\"n\"" : text.size() <= 40 ? "<td class=\"s\"" : "<td";
      // A shortened cell keeps its whole text on hover.
      if (text != full[c][r]) out += " title=\"" + EscapeHtml(full[c][r]) + "\"";
      out += ">" + EscapeHtml(text) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
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
  // Long pages (a trace report is tens of thousands of pixels) open with their contents.
  auto section_id = [](size_t i) { return fmt::format("section-{}", i + 1); };
  if (page.sections.size() >= 3) {
    out += "<nav class=\"toc\"><ul>";
    for (size_t i = 0; i < page.sections.size(); ++i) {
      const HtmlSection& section = page.sections[i];
      out += fmt::format("<li><a href=\"#{}\">{}</a>", section_id(i), EscapeHtml(section.heading));
      if (!section.tables.empty() || !section.histograms.empty()) {
        out += "<ul>";
        for (size_t h = 0; h < section.histograms.size(); ++h) {
          out += fmt::format("<li><a href=\"#{}-chart-{}\">{}</a></li>", section_id(i), h + 1,
                             EscapeHtml(section.histograms[h].title));
        }
        for (const Table* table : section.tables) {
          out += fmt::format("<li><a href=\"#{}\">{}</a></li>", EscapeHtml(table->name()),
                             EscapeHtml(table->title()));
        }
        out += "</ul>";
      }
      out += "</li>";
    }
    out += "</ul></nav>\n";
  }
  for (size_t i = 0; i < page.sections.size(); ++i) {
    const HtmlSection& section = page.sections[i];
    out +=
        fmt::format("<section id=\"{}\"><h2>{}</h2>\n", section_id(i), EscapeHtml(section.heading));
    for (const auto& chart : section.charts) out += RenderBarChartSvg(chart);
    for (size_t h = 0; h < section.histograms.size(); ++h) {
      out += fmt::format("<div id=\"{}-chart-{}\">{}</div>", section_id(i), h + 1,
                         RenderColumnChartSvg(section.histograms[h]));
    }
    for (const Table* table : section.tables) out += RenderHtmlTable(*table, page.cell_text);
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
  RefuseOverwritingInput(path, inputs);  // that refusal first: it says more
  RefuseOtherFormatName(path, ".html");
  WriteFileAtomically(path, RenderHtmlPage(page), inputs);
}

}  // namespace sextant
