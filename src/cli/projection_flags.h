// The flags `projection memory|performance|both|search` share (Primus's flag set), also taken by
// `pp view` when it simulates an experiment file, and what they become: a JobRequest.
#pragma once

#include <map>
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
// `typed_flags`, when given, receives each key's flag as typed (dashes kept).
std::vector<std::pair<std::string, std::string>> ParseOverrides(
    const std::vector<std::string>& extras,
    std::map<std::string, std::string>* typed_flags = nullptr);
// The request of a projection command; a first bare argument that names a .yaml/.yml/.toml
// file is the experiment, as if given with --config.
JobRequest ToJobRequest(const ProjectionOptions& o, const CLI::App* command);
// That bare experiment argument, or "".
std::string PositionalConfig(const CLI::App* command);
// Builds the job (and writes --export_config). Its warnings, where it differs from what was
// asked, go to stderr with PrintJobWarnings once its projection has run: a projection that
// fails prints its error alone.
Job BuildJobAndExport(const JobRequest& request);
void PrintJobWarnings(const Job& job);
// Says on stderr that the bundled default example is used when no experiment is given.
void AnnounceDefault(const ProjectionOptions& o, const CLI::App* command);

}  // namespace sextant::cli
