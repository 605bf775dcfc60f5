// Fuzz target: the layer-time artifact --load-benchmark reads (projection/benchmark_artifact.h).
// Any input must give an artifact or a UserError; one that parses must write back to an
// artifact that parses to the same measurements.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "projection/benchmark_artifact.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sextant::BenchmarkArtifact a;
  try {
    a = sextant::ParseBenchmarkArtifact(text, "fuzz.json");
  } catch (const sextant::UserError&) {
    return 0;
  }
  const sextant::BenchmarkArtifact again =
      sextant::ParseBenchmarkArtifact(sextant::BenchmarkArtifactJson(a), "fuzz.json");
  if ((a.layers == nullptr) != (again.layers == nullptr)) std::abort();
  if (a.layers && a.layers->pieces.size() != again.layers->pieces.size()) std::abort();
  return 0;
}
