// Runs the projections a command asks for on a built Job and renders the results.
#pragma once

#include <ostream>

#include "job/job.h"
#include "memory/memory_model.h"
#include "projection/projection_options.h"

namespace sextant {

MemoryReport RunMemoryProjection(const Job& job, const ProjectionOptions& options);
void RunPerformanceProjection(const Job& job, const ProjectionOptions& options, std::ostream& out);
void RunBothProjections(const Job& job, const ProjectionOptions& options, std::ostream& out);

}  // namespace sextant
