// Runs a command as a child process and samples the GPUs while it runs.
//
// The child inherits stdin/stdout/stderr and stays in our process group, so it keeps the
// terminal. Every catchable signal whose default would terminate us (SIGHUP, SIGINT, SIGQUIT,
// SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, ... and the real-time signals) is caught while
// the command runs and sent on to it, so a scheduler's kill or a `kill PID` stops the job, not
// just the sampler; we keep sampling until the command exits, reap it and report its status.
// A signal the kernel raised for the whole foreground process group (Ctrl-C, Ctrl-\, a hang-up
// of the terminal) already reached the command and is not sent twice. Signals ignored when we
// started (nohup) stay ignored, by us and by the command. Synchronous faults (SIGSEGV, ...)
// and SIGKILL/SIGSTOP are not forwarded.
//
// The exit status is the command's, or 128 + signal number when a signal killed it; a command
// that cannot be executed gives 127 (not found) or 126 (found but not executable), as a
// shell reports them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/gpu_sampler.h"

namespace sextant {

struct WatchSample {
  int64_t elapsed_ms = 0;  // since the command started
  GpuSample gpu;
};

struct WatchResult {
  std::vector<std::string> command;
  std::string source;  // sampler name, or "none"
  int interval_ms = 0;
  int exit_status = 0;
  int term_signal = 0;        // the signal that killed the command, 0 if it exited
  int forwarded_signals = 0;  // signals we received and sent on to the command
  // Set when the command could not be executed ("cannot run 'x': No such file or
  // directory"); exit_status is then 126 or 127 and nothing was sampled.
  std::string start_error;
  int64_t wall_ms = 0;
  std::vector<WatchSample> samples;
};

// `sampler` may be null (no GPU): the command still runs. Throws UserError when `command` is
// empty or no process can be created (fork fails); a sampler's error is rethrown only after
// the command has exited and been reaped.
WatchResult WatchCommand(const std::vector<std::string>& command, GpuSampler* sampler,
                         int interval_ms);

// The signals WatchCommand forwards (those it would otherwise die of), for tests.
std::vector<int> ForwardedSignals();

}  // namespace sextant
