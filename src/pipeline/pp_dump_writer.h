// Writes a simulated step as a Primus pipeline dump, byte-for-byte in the layout of the
// native dumps (Python json.dump without indentation: ", " and ": " separators, no trailing
// newline, iteration key "1"), plus the micro-batch and chunk lists Primus's zero-bubble and
// simulator dumps carry, so the same viewer opens simulated and measured schedules, and a
// "generator": "sextant" key in config.json, so a viewer can tell it from a measured run.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/pp_dump.h"

namespace sextant {

struct PrimusDumpLayout {
  int64_t dp_size = 1;
  int64_t tp_size = 1;
  int64_t ep_size = 1;
};

// The simulation as one iteration per rank: times in ms from the step start, memory = the
// rank's peak activation bytes in GiB, BW recorded as bwd (as Primus does).
PrimusDump SimulationToPrimusDump(const PipelineSimulation& simulation,
                                  const PrimusDumpLayout& layout = {});

std::string FormatPrimusDumpConfig(const PrimusDumpConfig& config);
std::string FormatPrimusDumpRank(const PrimusDumpRank& rank);
// Creates `dir` if needed and writes config.json and pp_rank_<p>.json. UserError on I/O
// failure.
// Files are written atomically; refuses to overwrite any of `inputs` (UserError).
void WritePrimusDump(const PrimusDump& dump, const std::string& dir,
                     const std::vector<std::string>& inputs = {});

}  // namespace sextant
