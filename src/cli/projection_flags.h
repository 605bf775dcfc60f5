// The flags `projection memory|performance|both|search` share (Primus's flag set), also taken by
// `pp view` when it simulates an experiment file, and what they become: a JobRequest.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "job/job.h"
#include "job/job_builder.h"
#include "projection/projection_options.h"

namespace sextant::cli {

// Adds every shared flag to `cmd`, writing into `o`; unknown "--key value" pairs are kept as
// Megatron configuration overrides.
void AddProjectionFlags(CLI::App* cmd, ProjectionOptions& o);
std::vector<std::pair<std::string, std::string>> ParseOverrides(
    const std::vector<std::string>& extras);
JobRequest ToJobRequest(const ProjectionOptions& o, const CLI::App* command);
// Builds the job and says on stderr where it differs from what was asked.
Job BuildJobAndWarn(const JobRequest& request);
// Says on stderr that the bundled default example is used when no --config is given.
void AnnounceDefault(const ProjectionOptions& o);

}  // namespace sextant::cli
