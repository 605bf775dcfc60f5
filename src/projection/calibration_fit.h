// Fitting the performance projection's constants (layer_timing.h: in-training efficiency,
// cuDNN attention scale) to published measured runs, and judging them on runs they never saw.
//
// Both use one grid of predictions per row, computed on demand and kept: the constants only
// scale compute, so a row's prediction is a function of the grid point alone, and every fit
// (the full table, each leave-one-source-out fold) reads the same cached values.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "projection/layer_timing.h"
#include "report/table.h"

namespace sextant {

// Fits the constants by grid search, minimising the mean-of-sources MAPE: the cuDNN attention
// scale on the dense rows that run Transformer Engine attention on Hopper, the in-training
// efficiency on every throughput / time row. The two interact, so the search alternates between
// them (coordinate descent, three rounds). Memory rows depend on neither.
struct CalibrationFit {
  Calibration best;
  double best_mape_pct = 0;                                 // all time rows, at `best`
  int attention_rows = 0;                                   // rows the attention scale saw
  int efficiency_rows = 0;                                  // rows the efficiency saw
  std::vector<std::pair<double, double>> efficiency_curve;  // last round: (value, MAPE %)
  std::vector<std::pair<double, double>> attention_curve;
};
CalibrationFit FitCalibration(const std::string& csv_path);

// Leave-one-source-out: for each source family, the constants are re-fitted on every other
// family's rows and that family is scored with them; next to it, its score with the shipped
// constants (which were fitted on the whole table, this family included).
struct HeldOutSource {
  std::string name;
  int rows = 0;
  double shipped_mape_pct = 0;   // with the constants in layer_timing.h
  double held_out_mape_pct = 0;  // with constants fitted without this source; NaN when the
                                 // other sources have no row to fit on
  int fitted_rows = 0;           // rows of the other sources the efficiency was fitted on
  Calibration fitted_without;
};
struct CrossValidation {
  std::vector<HeldOutSource> sources;
  double shipped_mape_pct = 0;   // mean over sources
  double held_out_mape_pct = 0;  // mean over the sources that could be held out: the
                                 // accuracy to quote (NaN if none could)
  int held_out_sources = 0;
  int rows = 0;
};
CrossValidation CrossValidate(const std::string& csv_path);

Table CrossValidationTable(const CrossValidation& cv);
nlohmann::json CrossValidationJson(const CrossValidation& cv);

}  // namespace sextant
