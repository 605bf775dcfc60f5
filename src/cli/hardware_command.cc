#include "cli/commands.h"
#include "util/error.h"

namespace sextant::cli {

void AddHardwareCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("hardware", "(being built)");
  cmd->callback([] { ThrowUserError("'hardware' is not available in this build yet"); });
}

}  // namespace sextant::cli
