// Runs a command as a child process and samples the GPUs while it runs.
//
// The child inherits stdin/stdout/stderr. SIGINT and SIGTERM sent to us are forwarded to it,
// so Ctrl-C or a scheduler's kill stops the job, not just the sampler; we then wait for it and
// report its status. The exit status is the command's, or 128 + signal number when a signal
// killed it (as a shell reports it).
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
  int term_signal = 0;  // the signal that killed the command, 0 if it exited
  int64_t wall_ms = 0;
  std::vector<WatchSample> samples;
};

// `sampler` may be null (no GPU): the command still runs. Throws UserError when the command
// cannot be started (not found, not executable).
WatchResult WatchCommand(const std::vector<std::string>& command, GpuSampler* sampler,
                         int interval_ms);

}  // namespace sextant
