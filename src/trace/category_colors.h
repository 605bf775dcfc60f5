// One colour per kind of GPU work on every chart of a trace page (report_page.h): the kernel
// categories of the top-kernel chart and of the category bar chart, the roofline's op families,
// and the parts of each rank's GPU time, whose exposed communication is communication and whose
// exposed memcpy is memory. One table, so that red means the same thing in every chart.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sextant {

// (category, "#rrggbb"); no two categories share a colour, except the two names of one family
// ("reduction/norm" for kernels, "norm" for the roofline's ops).
const std::vector<std::pair<std::string, std::string>>& CategoryColors();
// The colour of `category`, or "" when the table has none.
std::string CategoryColor(std::string_view category);

}  // namespace sextant
