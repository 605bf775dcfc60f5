#include "snapshot/process_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
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

TEST(ProcessWatchTest, CommandThatCannotStartIsAUserError) {
  try {
    WatchCommand({"/nonexistent/program"}, nullptr, 10);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "cannot run '/nonexistent/program': No such file or directory");
  }
}

TEST(ProcessWatchTest, ForwardsSigtermToTheCommand) {
  std::string marker =
      std::filesystem::temp_directory_path() / ("sextant_watch_" + std::to_string(getpid()));
  std::remove(marker.c_str());
  pid_t watcher = fork();
  ASSERT_GE(watcher, 0);
  if (watcher == 0) {
    // The watcher process: its exit status is what WatchCommand returned.
    WatchResult r = WatchCommand({"sh", "-c", "touch " + marker + "; exec sleep 30"}, nullptr, 10);
    _exit(r.exit_status);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!std::filesystem::exists(marker) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(watcher, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(watcher, &status, 0), watcher);
  std::remove(marker.c_str());
  // The watcher survived the signal, passed it on, and reported sleep's death by SIGTERM.
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
}

}  // namespace
}  // namespace sextant
