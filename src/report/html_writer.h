// One self-contained HTML page (inline CSS and script, no network fetches): Tables, optionally
// preceded by horizontal bar charts and histograms drawn as inline SVG, and/or JSON data drawn
// by a script. A page of three or more sections opens with their table of contents.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/table.h"

namespace sextant {

struct BarChart {
  std::string title;
  std::string unit;                                  // printed after each value
  std::vector<std::pair<std::string, double>> bars;  // label, value (>= 0)
  std::vector<std::string> colors = {};              // per bar ("#rrggbb"); none or "": blue
};

// A histogram: one column per bin, bins of equal width from `start` to `end`.
struct ColumnChart {
  std::string title;
  std::string x_unit;           // of the bins' edges
  std::string y_unit;           // of the counts
  double start = 0, end = 0;    // the first bin's start, the last bin's end
  std::vector<double> columns;  // one value (>= 0) per bin
  std::string note;             // printed under the chart
};

struct HtmlSection {
  std::string heading;
  std::vector<BarChart> charts = {};
  std::vector<const Table*> tables = {};
  std::vector<ColumnChart> histograms = {};  // drawn after `charts`, before `tables`
};

// Text cells are cut to this many characters on a page, two or three lines of a cell, the way the
// console cuts them (cell_shortening.h); the cell's title (shown on hover) holds the whole text.
// Prose columns (Column::prose) are never cut.
inline constexpr size_t kHtmlCellWidth = 120;

// How a text cell of `column` reads before it is cut (a kernel name without its parameter list,
// as the console shows it); null: as it is.
using HtmlCellText = std::string (*)(const Column& column, const std::string& text);

struct HtmlPage {
  HtmlPage(std::string title, std::vector<HtmlSection> sections = {})
      : title(std::move(title)), sections(std::move(sections)) {}
  std::string title;
  std::vector<HtmlSection> sections;
  // When `script` is set, the page ends with an empty <div id="app">, `data` as JSON in
  // <script type="application/json" id="data">, and `script` (which reads and draws it).
  nlohmann::json data;
  std::string script;
  std::string style;                 // CSS; empty: the table style
  bool heading = true;               // false: no <h1> (the script draws its own header)
  HtmlCellText cell_text = nullptr;  // for every table of the page
};

// For element content and attribute values.
std::string EscapeHtml(const std::string& text);
std::string RenderBarChartSvg(const BarChart& chart);
std::string RenderColumnChartSvg(const ColumnChart& chart);
std::string RenderHtmlTable(const Table& table, HtmlCellText cell_text = nullptr);
std::string RenderHtmlPage(const HtmlPage& page);
// Writes the page atomically (util/file_io.h); throws UserError if the file cannot be written
// or is one of `inputs`.
void WriteHtmlPage(const std::string& path, const HtmlPage& page,
                   const std::vector<std::string>& inputs = {});

}  // namespace sextant
