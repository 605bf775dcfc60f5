// Test support: builds small Kineto (PyTorch profiler) traces in a few lines, so a test can
// state its events and work out the expected numbers by hand. Timestamps and durations are in
// microseconds, as Kineto writes them. Header-only: used by *_test.cc files, not the library.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "trace/kineto_reader.h"

namespace sextant {

class KinetoTraceBuilder {
 public:
  // Host events run on pid 1 (the Python process), thread `tid`. `args` is extra JSON
  // members for the event's args object, e.g. R"("Input Dims": [[2, 3]])".
  KinetoTraceBuilder& CpuOp(std::string_view name, double ts_us, double dur_us,
                            std::string_view args = "", int tid = 1) {
    return Host("cpu_op", name, ts_us, dur_us, std::string(args), tid);
  }
  KinetoTraceBuilder& Annotation(std::string_view name, double ts_us, double dur_us, int tid = 1) {
    return Host("user_annotation", name, ts_us, dur_us, "", tid);
  }
  // A runtime call (cudaLaunchKernel, hipLaunchKernel, cudaMemcpyAsync ...) carrying the
  // correlation id of the GPU activity it launches.
  KinetoTraceBuilder& Runtime(std::string_view name, double ts_us, double dur_us,
                              int64_t correlation, int tid = 1) {
    return Host("cuda_runtime", name, ts_us, dur_us,
                fmt::format("\"correlation\": {}", correlation), tid);
  }
  KinetoTraceBuilder& Launch(double ts_us, double dur_us, int64_t correlation, int tid = 1) {
    return Runtime("cudaLaunchKernel", ts_us, dur_us, correlation, tid);
  }

  // GPU activities run on pid `device`, tid `stream`, as Kineto writes them.
  KinetoTraceBuilder& Kernel(std::string_view name, double ts_us, double dur_us,
                             int64_t correlation, int64_t stream = 7, int device = 0,
                             std::string_view args = "") {
    return Gpu("kernel", name, ts_us, dur_us, correlation, stream, device, std::string(args));
  }
  KinetoTraceBuilder& Memcpy(double ts_us, double dur_us, int64_t correlation, int64_t stream = 7,
                             int device = 0) {
    return Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", ts_us, dur_us, correlation, stream,
               device, "");
  }
  KinetoTraceBuilder& Memset(double ts_us, double dur_us, int64_t correlation, int64_t stream = 7,
                             int device = 0) {
    return Gpu("gpu_memset", "Memset (Device)", ts_us, dur_us, correlation, stream, device, "");
  }

  // The ac2g flow Kineto draws from a launch (host thread `tid`, at `launch_ts_us`) to the GPU
  // activity it started (on `stream`, at `kernel_ts_us`).
  KinetoTraceBuilder& LaunchFlow(int64_t id, double launch_ts_us, double kernel_ts_us, int tid = 1,
                                 int64_t stream = 7, int device = 0) {
    Event(fmt::format(
        R"({{"ph": "s", "id": {}, "pid": 1, "tid": {}, "ts": {}, "cat": "ac2g", "name": "ac2g"}})",
        id, tid, launch_ts_us));
    return Event(fmt::format(
        R"({{"ph": "f", "id": {}, "pid": {}, "tid": {}, "ts": {}, "cat": "ac2g", "name": "ac2g", )"
        R"("bp": "e"}})",
        id, device, stream, kernel_ts_us));
  }

  // Any other event, as raw JSON text.
  KinetoTraceBuilder& Event(std::string_view json) {
    events_ += events_.empty() ? "\n  " : ",\n  ";
    events_ += json;
    return *this;
  }
  // A top-level member after traceEvents, e.g. ("baseTimeNanoseconds", "1700000000000000000").
  KinetoTraceBuilder& TopLevel(std::string_view key, std::string_view json_value) {
    top_ += fmt::format(",\n \"{}\": {}", key, json_value);
    return *this;
  }

  std::string Json() const {
    return "{\"schemaVersion\": 1, \"traceEvents\": [" + events_ + "\n ]" + top_ + "\n}\n";
  }
  TraceData Parse(const std::string& path = "test.json") const {
    return ParseKinetoTrace(InputText::FromString(Json()), path);
  }
  // Writes the trace to `path` and returns it.
  const std::string& WriteTo(const std::string& path) const {
    std::ofstream(path, std::ios::binary) << Json();
    return path;
  }

  static std::string Quote(std::string_view text) {
    std::string out = "\"";
    for (char ch : text) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    return out + "\"";
  }

 private:
  KinetoTraceBuilder& Host(std::string_view cat, std::string_view name, double ts_us, double dur_us,
                           const std::string& args, int tid) {
    return Event(fmt::format(
        R"({{"ph": "X", "cat": "{}", "name": {}, "pid": 1, "tid": {}, "ts": {}, "dur": {}{}}})",
        cat, Quote(name), tid, ts_us, dur_us, args.empty() ? "" : ", \"args\": {" + args + "}"));
  }
  KinetoTraceBuilder& Gpu(std::string_view cat, std::string_view name, double ts_us, double dur_us,
                          int64_t correlation, int64_t stream, int device,
                          const std::string& args) {
    return Event(fmt::format(
        R"({{"ph": "X", "cat": "{}", "name": {}, "pid": {}, "tid": {}, "ts": {}, "dur": {}, )"
        R"("args": {{"device": {}, "stream": {}, "correlation": {}{}}}}})",
        cat, Quote(name), device, stream, ts_us, dur_us, device, stream, correlation,
        args.empty() ? "" : ", " + args));
  }

  std::string events_;
  std::string top_;
};

// A path in the temporary directory unique to this process and test: tests of several builds
// may run at once.
inline std::string TestTempPath(std::string_view suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "_" + info->name() : "test";
  return (std::filesystem::temp_directory_path() /
          fmt::format("sextant_{}_{}_{}", test, getpid(), suffix))
      .string();
}

}  // namespace sextant
