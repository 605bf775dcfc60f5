#include "snapshot/process_watch.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

const std::string kSysfs = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/snapshot/sysfs";

TEST(ProcessWatchTest, ReturnsTheCommandsExitStatusAndSamples) {
  auto sampler = OpenSysfsSampler(kSysfs);
  ASSERT_NE(sampler, nullptr);
  WatchResult r = WatchCommand({"sh", "-c", "sleep 0.3; exit 3"}, sampler.get(), 50);
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_GE(r.wall_ms, 300);
  // At least the first and the final sample, two GPUs each, in time order.
  ASSERT_GE(r.samples.size(), 4u);
  EXPECT_EQ(r.samples.size() % 2, 0u);
  for (size_t i = 1; i < r.samples.size(); ++i) {
    EXPECT_LE(r.samples[i - 1].elapsed_ms, r.samples[i].elapsed_ms);
  }
  EXPECT_EQ(r.samples[0].gpu.memory_used_bytes, 1073741824);
  EXPECT_EQ(r.source, "sysfs:" + kSysfs);
}

TEST(ProcessWatchTest, RunsWithoutAGpu) {
  WatchResult r = WatchCommand({"true"}, nullptr, 10);
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_TRUE(r.samples.empty());
  EXPECT_EQ(r.source, "none");
}

TEST(ProcessWatchTest, SignalKilledChildGives128PlusSignal) {
  WatchResult r = WatchCommand({"sh", "-c", "kill -KILL $$"}, nullptr, 10);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(r.exit_status, 128 + SIGKILL);
}

TEST(ProcessWatchTest, CommandsThatCannotRunGive127Or126LikeAShell) {
  // bash: "No such file or directory" is 127, a file without execute permission 126.
  WatchResult missing = WatchCommand({"/nonexistent/program"}, nullptr, 10);
  EXPECT_EQ(missing.exit_status, 127);
  EXPECT_EQ(missing.start_error, "cannot run '/nonexistent/program': No such file or directory");
  WatchResult unknown = WatchCommand({"sextant-no-such-command-on-path"}, nullptr, 10);
  EXPECT_EQ(unknown.exit_status, 127);

  std::string plain =
      std::filesystem::temp_directory_path() / ("sextant_watch_noexec_" + std::to_string(getpid()));
  { std::ofstream(plain) << "#!/bin/sh\nexit 0\n"; }
  std::filesystem::permissions(
      plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  WatchResult noexec = WatchCommand({plain}, nullptr, 10);
  std::remove(plain.c_str());
  // Even root needs an execute bit to exec a file.
  EXPECT_EQ(noexec.exit_status, 126);
  EXPECT_EQ(noexec.start_error, "cannot run '" + plain + "': Permission denied");
  // A command that runs and exits 1 is told apart: no start_error.
  WatchResult one = WatchCommand({"sh", "-c", "exit 1"}, nullptr, 10);
  EXPECT_EQ(one.exit_status, 1);
  EXPECT_TRUE(one.start_error.empty());
  WatchResult seven = WatchCommand({"sh", "-c", "exit 7"}, nullptr, 10);
  EXPECT_EQ(seven.exit_status, 7);
}

// Reads the pid the command wrote, waiting up to 20 s for it to appear.
pid_t WaitForPidFile(const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line) && !line.empty() && line.back() == '.') {
      return static_cast<pid_t>(std::stol(line));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

TEST(ProcessWatchTest, ForwardsEveryTerminatingSignalAndLeavesNoOrphan) {
  // For each signal: a watcher process runs `sh -c 'echo $$. > F; exec sleep 30'` (the sleep
  // keeps the shell's pid), the test sends the signal to the watcher only, and the watcher
  // must survive it, pass it on, reap the sleep and exit 128 + signal, leaving no process
  // with the pid the command wrote.
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM}) {
    SCOPED_TRACE(strsignal(sig));
    std::string pid_file =
        std::filesystem::temp_directory_path() /
        ("sextant_watch_" + std::to_string(getpid()) + "_" + std::to_string(sig));
    std::remove(pid_file.c_str());
    pid_t watcher = fork();
    ASSERT_GE(watcher, 0);
    if (watcher == 0) {
      // The watcher process: its exit status is what WatchCommand returned. No core files
      // from SIGQUIT.
      struct rlimit no_core {};
      setrlimit(RLIMIT_CORE, &no_core);
      signal(sig, SIG_DFL);  // as if started normally, even if the test runner ignores it
      WatchResult r =
          WatchCommand({"sh", "-c", "echo $$. > " + pid_file + "; exec sleep 30"}, nullptr, 10);
      _exit(r.forwarded_signals == 1 ? r.exit_status : 99);
    }
    pid_t child = WaitForPidFile(pid_file);
    std::remove(pid_file.c_str());
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let sh exec sleep
    kill(watcher, sig);
    int status = 0;
    ASSERT_EQ(waitpid(watcher, &status, 0), watcher);
    ASSERT_TRUE(WIFEXITED(status)) << "the watcher died of signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    errno = 0;
    EXPECT_EQ(kill(child, 0), -1);
    EXPECT_EQ(errno, ESRCH);
  }
}

TEST(ProcessWatchTest, ForwardedSignalsCoverTheCatchableTerminatingOnes) {
  std::vector<int> sigs = ForwardedSignals();
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2}) {
    EXPECT_NE(std::find(sigs.begin(), sigs.end(), sig), sigs.end()) << sig;
  }
  for (int sig : {SIGKILL, SIGSTOP, SIGSEGV, SIGCHLD, SIGTSTP, SIGCONT}) {
    EXPECT_EQ(std::find(sigs.begin(), sigs.end(), sig), sigs.end()) << sig;
  }
}

}  // namespace
}  // namespace sextant
