// The exit status a command asks main() to return (commands.h).
#include "cli/commands.h"

namespace sextant::cli {
namespace {
int exit_status = 0;
}  // namespace

void SetExitStatus(int status) { exit_status = status; }
int ExitStatus() { return exit_status; }

}  // namespace sextant::cli
