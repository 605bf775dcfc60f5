// Fuzz target: the readers behind --calibration and `sextant calibrate` that take small files
// users hand over: the calibration file itself and the measured-kernel tables (TraceLens
// GEMM.csv / SDPA_fwd.csv, GEMM timing CSV and JSON). Any input must give a result or a
// UserError. (Traces go through kineto_reader_fuzz.)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "projection/calibration_file.h"
#include "projection/measured_kernels.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    sextant::ParseCalibrationFile(text, "fuzz.json");
  } catch (const sextant::UserError&) {
  }
  for (const char* name : {"fuzz.csv", "fuzz_bwd.csv"}) {
    try {
      sextant::ParseMeasuredKernelTable(text, name);
    } catch (const sextant::UserError&) {
    }
  }
  return 0;
}
