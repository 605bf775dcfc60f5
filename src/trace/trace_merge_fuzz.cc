// libFuzzer target: arbitrary bytes as one input of `trace merge`, merged with a valid trace.
// The merge must write a trace or refuse with a UserError; a crash, a sanitizer report, another
// exception or a merged file left behind after a refusal is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "trace/trace_merge.h"
#include "util/error.h"
#include "util/file_io.h"

namespace {

const std::string& Directory() {
  static const std::string dir = [] {
    const std::string d = (std::filesystem::temp_directory_path() /
                           ("sextant_merge_fuzz_" + std::to_string(::getpid())))
                              .string();
    std::filesystem::create_directories(d);
    sextant::WriteFileAtomically(
        d + "/valid.json",
        R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,)"
        R"("args":{"correlation":1,"device":0,"stream":7}}]})");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = Directory();
  const std::string input = dir + "/input.json";
  const std::string output = dir + "/merged.json";
  sextant::WriteFileAtomically(input, std::string(reinterpret_cast<const char*>(data), size));
  std::filesystem::remove(output);
  try {
    sextant::MergeTraces({dir + "/valid.json", input}, output);
  } catch (const sextant::UserError&) {
    if (std::filesystem::exists(output)) std::abort();  // a refusal must leave no output
  }
  return 0;
}
