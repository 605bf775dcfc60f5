#include "snapshot/process_watch.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {
namespace {

volatile sig_atomic_t g_child_pid = 0;
volatile sig_atomic_t g_forwarded = 0;

extern "C" void ForwardSignal(int sig, siginfo_t* info, void*) {
  int saved_errno = errno;
  pid_t pid = g_child_pid;
  // SI_KERNEL: the kernel raised it, either for the whole foreground process group (Ctrl-C,
  // terminal hang-up), which the command is in and so got too, or about this process itself
  // (its timers, its I/O). A signal we raised on ourselves (a write to a closed pipe) is ours
  // as well. Anything else was sent to us to stop the job.
  bool ours = info != nullptr && (info->si_code == SI_KERNEL ||
                                  (info->si_code == SI_USER && info->si_pid == getpid()));
  if (pid > 0 && !ours) {
    kill(pid, sig);
    g_forwarded = g_forwarded + 1;
  }
  errno = saved_errno;
}

// Catches the forwarded signals for the lifetime of one watch. They are blocked from before
// the fork until the child's pid is known, so none can kill us and leave the child behind.
class SignalForwarding {
 public:
  SignalForwarding() {
    sigemptyset(&set_);
    for (int sig : ForwardedSignals()) sigaddset(&set_, sig);
    pthread_sigmask(SIG_BLOCK, &set_, &old_mask_);
    struct sigaction sa {};
    sa.sa_sigaction = ForwardSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    for (int sig : ForwardedSignals()) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      // A signal ignored when we started (nohup) stays ignored, and the command inherits that.
      if (old.sa_handler == SIG_IGN && !(old.sa_flags & SA_SIGINFO)) continue;
      sigaction(sig, &sa, &old_[sig]);
      installed_[sig] = true;
    }
  }
  ~SignalForwarding() {
    g_child_pid = 0;
    // Signals still pending reach the handler, which no longer has anyone to forward to: the
    // command has already exited, so what they asked for has happened.
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    RestoreHandlers();
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  // In the child, before exec: the dispositions and mask we started with.
  void RestoreInChild() {
    RestoreHandlers();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  // In the parent once the child exists: forward from now on.
  void Start(pid_t child) {
    g_forwarded = 0;
    g_child_pid = child;
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  // Before reaping: no handler may signal the pid once it is free to be reused.
  void Stop() {
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    g_child_pid = 0;
  }

 private:
  void RestoreHandlers() {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (installed_[sig]) sigaction(sig, &old_[sig], nullptr);
    }
  }

  sigset_t set_{};
  sigset_t old_mask_{};
  std::array<struct sigaction, NSIG> old_{};
  std::array<bool, NSIG> installed_{};
};

int WaitForExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
  }
  return status;
}

}  // namespace

std::vector<int> ForwardedSignals() {
  // Every signal whose default action terminates the process and that can be caught, except
  // the synchronous ones a fault or resource limit of our own raises (SIGSEGV, SIGBUS,
  // SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGXCPU, SIGXFSZ).
  std::vector<int> sigs = {SIGHUP,  SIGINT,  SIGQUIT,   SIGPIPE, SIGALRM, SIGTERM,
                           SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR};
#ifdef SIGSTKFLT
  sigs.push_back(SIGSTKFLT);
#endif
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigs.push_back(sig);
  return sigs;
}

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
  SignalForwarding forwarding;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(report[0]);
    close(report[1]);
    ThrowUserError(fmt::format("cannot start '{}': fork: {}", command[0], std::strerror(err)));
  }
  if (pid == 0) {
    close(report[0]);
    forwarding.RestoreInChild();
    execvp(argv[0], argv.data());
    int err = errno;
    ssize_t ignored = write(report[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  forwarding.Start(pid);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    forwarding.Stop();
    WaitForExit(pid);
    // As a shell: 127 when there is no such program, 126 when it exists but cannot be run.
    bool missing = exec_errno == ENOENT || exec_errno == ENOTDIR || exec_errno == ENAMETOOLONG;
    result.exit_status = missing ? 127 : 126;
    result.start_error = fmt::format("cannot run '{}': {}", command[0], std::strerror(exec_errno));
    return result;
  }

  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };
  // A sampler that fails stops sampling, not the wait: the command is never left unwatched.
  std::exception_ptr sample_error;
  auto take_sample = [&] {
    if (!sampler || sample_error) return;
    try {
      int64_t at = elapsed_ms();
      for (const GpuSample& s : sampler->Sample()) result.samples.push_back(WatchSample{at, s});
    } catch (...) {
      sample_error = std::current_exception();
    }
  };

  int64_t next_sample = 0;
  while (true) {
    // WNOWAIT: learn that it exited without reaping it yet (see Stop).
    siginfo_t info{};
    int options = WEXITED | WNOWAIT | (sampler && !sample_error ? WNOHANG : 0);
    if (waitid(P_PID, static_cast<id_t>(pid), &info, options) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("waitid: {}", std::strerror(errno)));
    }
    if (info.si_pid == pid) break;
    int64_t now = elapsed_ms();
    if (now >= next_sample) {
      take_sample();
      next_sample = std::max(next_sample + interval_ms, now + 1);
    }
    // Poll the child at least every 10 ms so a short command is not held up by the interval.
    int64_t wait = std::clamp<int64_t>(next_sample - elapsed_ms(), 1, 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
  }
  forwarding.Stop();
  int status = WaitForExit(pid);
  result.forwarded_signals = g_forwarded;
  take_sample();  // the state the command left behind
  result.wall_ms = elapsed_ms();
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
    result.exit_status = 128 + result.term_signal;
  }
  if (sample_error) std::rethrow_exception(sample_error);
  return result;
}

}  // namespace sextant
