// Chrome / Perfetto trace JSON (the "Trace Event Format") of a simulated pipeline step, so it
// opens in chrome://tracing, ui.perfetto.dev, or next to a real profiler trace.
// One process per pipeline rank ("PP rank r"); thread 0 holds compute (F, B, W, BW), thread 1
// sends and thread 2 receives. Complete events ("ph": "X") in microseconds, coloured by kind
// through the reserved `cname` palette; args carry micro-batch, chunk and virtual stage.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline_simulator.h"

namespace sextant {

std::string ChromeTraceJson(const PipelineSimulation& simulation);
// Writes ChromeTraceJson to `path`; UserError on I/O failure.
// Written atomically; refuses to overwrite any of `inputs` (UserError).
void WriteChromeTrace(const PipelineSimulation& simulation, const std::string& path,
                      const std::vector<std::string>& inputs = {});

}  // namespace sextant
