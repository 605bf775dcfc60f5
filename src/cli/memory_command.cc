#include "cli/commands.h"
#include "util/error.h"

namespace sextant::cli {

void AddMemoryCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("memory", "(being built)");
  cmd->callback([] { ThrowUserError("'memory' is not available in this build yet"); });
}

}  // namespace sextant::cli
