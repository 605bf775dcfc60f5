#include "cli/commands.h"
#include "util/error.h"

namespace sextant::cli {

void AddValidateCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("validate", "(being built)");
  cmd->callback([] { ThrowUserError("'validate' is not available in this build yet"); });
}

}  // namespace sextant::cli
