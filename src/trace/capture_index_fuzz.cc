// libFuzzer target: arbitrary text as a capture folder's execution_details.json. Parsing must
// return file names or throw UserError; a crash, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/capture_index.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const std::string& file : sextant::ParseCaptureIndex(text, "fuzz.json")) {
      if (file.empty()) __builtin_trap();  // the parser promised non-empty names
    }
  } catch (const sextant::UserError&) {
  }
  return 0;
}
