// The calibration file `sextant calibrate` writes and `--calibration` reads: a GPU's fitted
// efficiency table with what it was fitted on and how well it fits. Versioned JSON:
//   {"format": "sextant-calibration", "version": 1, "gpu": "MI300X",
//    "sources": ["trace.json.gz", ...], "min_kernels": 3,
//    "fit": [{"class": "GEMM", "dtype": "bf16", "from": 1.0, "unit": "GFLOP", "kernels": 7,
//             "default": 0.43, "fitted": 0.52, "used": true}, ...],
//    "errors": [{"class": "GEMM", "kernels": 30, "median_error_default_pct": ..,
//                "median_error_fitted_pct": .., ...}],
//    "table": {<EfficiencyTable::ToJson>}}
// Only "format", "version", "gpu" and "table" are read back; the rest is the record.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cost/efficiency_fit.h"

namespace sextant {

inline constexpr int kCalibrationFileVersion = 1;

struct CalibrationFile {
  std::string gpu;                   // library name of the GPU the table was fitted on
  std::vector<std::string> sources;  // the measured files
  int min_kernels = 0;
  EfficiencyFit fit;  // on reading, only fit.table is filled
};

std::string CalibrationFileJson(const CalibrationFile& calibration);

// Throws UserError naming `file` and the key for a file that is not a calibration file of a
// version this program reads.
CalibrationFile ParseCalibrationFile(std::string_view text, const std::string& file);

// Whether the first bytes of a file are those of a calibration file (as opposed to measured
// kernels that must still be fitted).
bool LooksLikeCalibrationFile(std::string_view head);

// The efficiency table a projection on `gpu` uses for --calibration FILE (or --gemm-timings):
// a calibration file's table (refused when it was fitted on another GPU), or a table fitted
// here on the measured kernels FILE holds (trace, TraceLens table, GEMM timings). `*source`
// says which, with the fit's error, for the report's assumptions. Kernels recorded on another
// GPU are refused; a class the fit predicts worse than the default adds a line to `warnings`.
EfficiencyTable CalibratedTable(const std::string& path, const GpuSpec& gpu, std::string* source,
                                std::vector<std::string>* warnings = nullptr);

}  // namespace sextant
