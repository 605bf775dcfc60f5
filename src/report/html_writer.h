// One self-contained HTML page (inline CSS, no scripts or network fetches) showing Tables,
// optionally preceded by horizontal bar charts drawn as inline SVG.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/table.h"

namespace sextant {

struct BarChart {
  std::string title;
  std::string unit;                                  // printed after each value
  std::vector<std::pair<std::string, double>> bars;  // label, value (>= 0)
};

struct HtmlSection {
  std::string heading;
  std::vector<BarChart> charts;
  std::vector<const Table*> tables;
};

std::string EscapeHtml(const std::string& text);
std::string RenderBarChartSvg(const BarChart& chart);
std::string RenderHtmlTable(const Table& table);
std::string RenderHtmlPage(const std::string& title, const std::vector<HtmlSection>& sections);
// Writes the page; throws UserError if the file cannot be written.
void WriteHtmlPage(const std::string& path, const std::string& title,
                   const std::vector<HtmlSection>& sections);

}  // namespace sextant
