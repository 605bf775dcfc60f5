// Runs the projections a command asks for on a built Job and renders the results.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "job/job.h"
#include "memory/memory_model.h"
#include "projection/performance_model.h"
#include "projection/projection_options.h"

namespace sextant {

// The performance projection of `job` under `options` (schedule, GEMM timings), with its
// assumptions; no exports written. What `projection performance` prints and the pipeline viewer
// draws. The memory projection it checks the job against (ProjectMemoryFor) goes to `memory`
// when given, so that a caller printing both computes it once.
PerformanceReport ProjectJobPerformance(const Job& job, const ProjectionOptions& options,
                                        MemoryReport* memory = nullptr);
// Memory at the shape and schedule `perf` simulated, with its simulated in-flight activations.
MemoryReport ProjectMemoryFor(const Job& job, const PerformanceReport& perf);

// Refuses two outputs of one command that name one file (--chrome-trace, --save-benchmark,
// --pp-dump, --export_config), before anything is written; the Run* functions check again.
void CheckDistinctOutputs(const ProjectionOptions& options);

MemoryReport RunMemoryProjection(const Job& job, const ProjectionOptions& options);
// Both write the report to `out` and return its warnings (PerformanceReport::warnings), for
// the caller to put on stderr.
std::vector<std::string> RunPerformanceProjection(const Job& job, const ProjectionOptions& options,
                                                  std::ostream& out);
std::vector<std::string> RunBothProjections(const Job& job, const ProjectionOptions& options,
                                            std::ostream& out);

}  // namespace sextant
