#include "cli/commands.h"
#include "util/error.h"

namespace sextant::cli {

void AddProjectionCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("projection", "(being built)");
  cmd->callback([] { ThrowUserError("'projection' is not available in this build yet"); });
}

}  // namespace sextant::cli
