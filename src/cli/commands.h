// Each command group registers its CLI11 subcommands here; one file per group.
#pragma once

#include <CLI/CLI.hpp>

namespace sextant::cli {

void AddProjectionCommands(CLI::App& app);  // projection memory|performance|both|search
void AddTraceCommands(CLI::App& app);       // trace report|diff|merge
void AddMemoryCommands(CLI::App& app);      // memory snapshot|watch
void AddModelsCommands(CLI::App& app);      // models list|show
void AddHardwareCommands(CLI::App& app);    // hardware list|show
void AddValidateCommand(CLI::App& app);     // validate RUNS.csv
void AddViewerCommands(CLI::App& app);      // pp view, serve
void AddCalibrateCommand(CLI::App& app);    // calibrate FILE...

// A command whose exit status is not just success/failure (memory watch returns the status of
// the command it ran) sets it here; main() returns it after a normal finish.
void SetExitStatus(int status);
int ExitStatus();

}  // namespace sextant::cli
