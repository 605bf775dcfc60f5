// The sextant program: parses the command line and runs one command.
// Exit status: 0 success, 1 user error (message on stderr), 2 internal error.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/command_hints.h"
#include "cli/commands.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Sextant: memory and performance projection, and trace analysis, for LLM training",
               "sextant"};
  app.require_subcommand(1);
  app.set_version_flag("--version", SEXTANT_VERSION);
  sextant::cli::AddProjectionCommands(app);
  sextant::cli::AddTraceCommands(app);
  sextant::cli::AddMemoryCommands(app);
  sextant::cli::AddModelsCommands(app);
  sextant::cli::AddHardwareCommands(app);
  sextant::cli::AddValidateCommand(app);
  sextant::cli::AddViewerCommands(app);
  sextant::cli::AddCalibrateCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string hint = sextant::cli::CommandLineHint(app, argc, argv);
    std::fprintf(stderr, "sextant: error: %s\n", hint.empty() ? e.what() : hint.c_str());
    return 1;
  } catch (const sextant::UserError& e) {
    std::fprintf(stderr, "sextant: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sextant: internal error: %s\n", e.what());
    return 2;
  }
  return sextant::cli::ExitStatus();
}
