#include "snapshot/process_watch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {
namespace {

volatile sig_atomic_t g_child_pid = 0;

extern "C" void ForwardSignal(int sig) {
  pid_t pid = g_child_pid;
  if (pid > 0) kill(pid, sig);
}

// Installs the forwarding handlers for the lifetime of one watch and restores the old ones.
class SignalForwarding {
 public:
  explicit SignalForwarding(pid_t child) {
    g_child_pid = child;
    struct sigaction sa {};
    sa.sa_handler = ForwardSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    g_child_pid = 0;
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace

WatchResult WatchCommand(const std::vector<std::string>& command, GpuSampler* sampler,
                         int interval_ms) {
  if (command.empty()) ThrowUserError("no command to run");
  WatchResult result;
  result.command = command;
  result.source = sampler ? sampler->Name() : "none";
  result.interval_ms = interval_ms;

  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // exec failures come back through a close-on-exec pipe: EOF means exec succeeded.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(stdout);
  std::fflush(stderr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    close(report[0]);
    close(report[1]);
    ThrowUserError(fmt::format("cannot start '{}': fork: {}", command[0], std::strerror(errno)));
  }
  if (pid == 0) {
    close(report[0]);
    execvp(argv[0], argv.data());
    int err = errno;
    ssize_t ignored = write(report[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  SignalForwarding forwarding(pid);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ThrowUserError(fmt::format("cannot run '{}': {}", command[0], std::strerror(exec_errno)));
  }

  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };
  auto take_sample = [&] {
    int64_t at = elapsed_ms();
    for (const GpuSample& s : sampler->Sample()) result.samples.push_back(WatchSample{at, s});
  };

  int status = 0;
  int64_t next_sample = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, sampler ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
    }
    int64_t now = elapsed_ms();
    if (now >= next_sample) {
      take_sample();
      next_sample = std::max(next_sample + interval_ms, now + 1);
    }
    // Poll the child at least every 10 ms so a short command is not held up by the interval.
    int64_t wait = std::clamp<int64_t>(next_sample - elapsed_ms(), 1, 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
  }
  if (sampler) take_sample();  // the state the command left behind
  result.wall_ms = elapsed_ms();
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
    result.exit_status = 128 + result.term_signal;
  }
  return result;
}

}  // namespace sextant
