#include "cli/commands.h"
#include "util/error.h"

namespace sextant::cli {

void AddTraceCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("trace", "(being built)");
  cmd->callback([] { ThrowUserError("'trace' is not available in this build yet"); });
}

}  // namespace sextant::cli
