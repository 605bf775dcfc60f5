// libFuzzer target: arbitrary text as an inference server's step annotation. Parsing must
// return statistics or nothing; a crash or sanitizer report is a bug. (The Kineto reader's
// target reaches the parser through whole traces; this one reaches its branches directly.)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/iteration_annotation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (std::optional<sextant::ChunkStats> st = sextant::ParseChunkStats(text)) {
    // Every sum is a count: never negative.
    if (st->c_sq < 0 || st->c_sk < 0 || st->g_sq < 0 || st->g_sk < 0) __builtin_trap();
  }
  return 0;
}
