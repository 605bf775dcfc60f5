#include "cli/commands.h"
#include "util/error.h"

namespace sextant::cli {

void AddModelsCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("models", "(being built)");
  cmd->callback([] { ThrowUserError("'models' is not available in this build yet"); });
}

}  // namespace sextant::cli
