// How a performance projection is shown: the console tables and the SPEC §1.3 JSON of
// `sextant projection performance`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "projection/performance_model.h"

namespace sextant {

std::string RenderPerformanceReport(const PerformanceReport& report);
nlohmann::json PerformanceReportJson(const PerformanceReport& report);

}  // namespace sextant
