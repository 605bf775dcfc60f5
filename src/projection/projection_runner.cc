#include "projection/projection_runner.h"

#include <nlohmann/json.hpp>

#include "memory/memory_report.h"
#include "util/error.h"

namespace sextant {

MemoryReport RunMemoryProjection(const Job& job, const ProjectionOptions& options) {
  if (options.memory_mode != "simulate") {
    ThrowUserError("--memory-mode " + options.memory_mode +
                   " needs GPU measurements; only 'simulate' is available in this build");
  }
  return ProjectMemory(job);
}

void RunPerformanceProjection(const Job&, const ProjectionOptions&, std::ostream&) {
  ThrowUserError("performance projection is not available in this build yet");
}

void RunBothProjections(const Job& job, const ProjectionOptions& options, std::ostream& out) {
  const MemoryReport memory = RunMemoryProjection(job, options);
  if (options.json) {
    out << nlohmann::json{{"memory", MemoryReportJson(memory)}}.dump(2) << "\n";
  } else {
    out << RenderMemoryReport(memory);
  }
}

}  // namespace sextant
