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
    // A sum is held, never wrapped: within the bound the parser keeps to.
    for (int64_t v :
         {st->c_sq, st->c_sk, st->c_sqsq, st->c_sqsk, st->g_sq, st->g_sk, st->g_sqsq, st->g_sqsk})
      if (v > 1'000'000'000'000'000'000 || v < -1'000'000'000'000'000'000) __builtin_trap();
  }
  return 0;
}
