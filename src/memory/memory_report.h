// Renders a MemoryReport: aligned console tables, and the JSON of SPEC §1.3.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "memory/memory_model.h"
#include "report/table.h"

namespace sextant {

Table MemoryStagesTable(const MemoryReport& report);            // one row per pipeline rank
Table MemoryDetailTable(const MemoryReport& report, int rank);  // named parts of one rank
std::string RenderMemoryReport(const MemoryReport& report);     // console text
nlohmann::json MemoryReportJson(const MemoryReport& report);

}  // namespace sextant
