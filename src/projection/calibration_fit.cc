#include "projection/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "projection/published_run.h"
#include "projection/validation.h"
#include "util/csv_reader.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace sextant {
namespace {

// The search grids of the two constants.
struct Axis {
  double lo, step;
  int points;
  double Value(int i) const { return lo + i * step; }
};
constexpr Axis kEfficiencyAxis{0.60, 0.01, 41};  // 0.60 .. 1.00
constexpr Axis kAttentionAxis{0.50, 0.02, 26};   // 0.50 .. 1.00

// Every time/throughput row of a table with its predictions over the grid, computed when
// first asked for. Rows whose attention is not cuDNN's do not depend on the attention scale
// and keep one value per efficiency.
class PredictionGrid {
 public:
  struct Row {
    PublishedRun run;
    std::string family;
    bool cudnn = false;
    bool usable = true;
    std::vector<double> cache;  // NaN = not computed yet
  };

  explicit PredictionGrid(const std::string& csv_path) {
    const CsvTable table = CsvTable::Read(csv_path);
    CheckDistinctIds(table);
    for (size_t i = 0; i < table.size(); ++i) {
      PublishedRun run = ReadPublishedRun(table, i);
      if (!run.job || run.metric_name.rfind("peak_memory", 0) == 0) continue;
      Row row;
      row.family = SourceFamily(run.id);
      row.cudnn = UsesCudnnAttentionOnHopper(*run.job);
      row.cache.assign(kEfficiencyAxis.points * (row.cudnn ? kAttentionAxis.points : 1),
                       std::numeric_limits<double>::quiet_NaN());
      row.run = std::move(run);
      rows_.push_back(std::move(row));
    }
  }

  std::vector<Row>& rows() { return rows_; }

  // |predicted / measured - 1| in percent at a grid point, or nullopt if the row cannot be
  // projected.
  std::optional<double> ErrorAt(Row& row, int efficiency, int attention) {
    if (!row.usable) return std::nullopt;
    double& slot = row.cache[Slot(row, efficiency, attention)];
    if (std::isnan(slot)) {
      const std::optional<double> p =
          Predict(row, {kEfficiencyAxis.Value(efficiency), kAttentionAxis.Value(attention)});
      if (!p) return std::nullopt;
      slot = *p;
    }
    return std::fabs(slot / row.run.measured - 1.0) * 100.0;
  }

  std::optional<double> ErrorWith(Row& row, const Calibration& c) {
    const std::optional<double> p = Predict(row, c);
    if (!p) return std::nullopt;
    return std::fabs(*p / row.run.measured - 1.0) * 100.0;
  }

  // Mean over source families of the per-family MAPE of the rows `use` accepts.
  double Score(const std::function<bool(const Row&)>& use, int efficiency, int attention,
               int* rows_used = nullptr) {
    Fill(use, efficiency, attention);
    std::map<std::string, std::pair<double, int>> by_family;
    int used = 0;
    for (Row& row : rows_) {
      if (!use(row)) continue;
      const std::optional<double> e = ErrorAt(row, efficiency, attention);
      if (!e) continue;
      auto& [sum, n] = by_family[row.family];
      sum += *e;
      ++n;
      ++used;
    }
    if (rows_used) *rows_used = used;
    if (by_family.empty()) return 0.0;
    double total = 0;
    for (const auto& [family, sn] : by_family) total += sn.first / sn.second;
    return total / by_family.size();
  }

 private:
  size_t Slot(const Row& row, int efficiency, int attention) const {
    return efficiency * (row.cudnn ? kAttentionAxis.points : 1) + (row.cudnn ? attention : 0);
  }

  // Computes the missing predictions at one grid point, rows in parallel (each writes only its
  // own cache slot).
  void Fill(const std::function<bool(const Row&)>& use, int efficiency, int attention) {
    std::vector<Row*> missing;
    for (Row& row : rows_) {
      if (row.usable && use(row) && std::isnan(row.cache[Slot(row, efficiency, attention)])) {
        missing.push_back(&row);
      }
    }
    const Calibration c{kEfficiencyAxis.Value(efficiency), kAttentionAxis.Value(attention)};
    ParallelFor(missing.size(), [&](size_t i) {
      Row& row = *missing[i];
      const std::optional<double> p = Predict(row, c);
      if (p) row.cache[Slot(row, efficiency, attention)] = *p;
    });
  }

  std::optional<double> Predict(Row& row, const Calibration& c) {
    std::string why;
    try {
      const std::optional<double> p = DefaultPredictor(c)(row.run, why);
      if (!p) row.usable = false;
      return p;
    } catch (const UserError&) {
      row.usable = false;
      return std::nullopt;
    }
  }

  std::vector<Row> rows_;
};

int NearestIndex(const Axis& axis, double value) {
  const long i = std::lround((value - axis.lo) / axis.step);
  return static_cast<int>(std::clamp<long>(i, 0, axis.points - 1));
}

struct GridFit {
  int efficiency = 0, attention = 0;
  double mape_pct = 0;
  int attention_rows = 0, efficiency_rows = 0;
  std::vector<std::pair<double, double>> efficiency_curve, attention_curve;
};

// Coordinate descent over the grid, from the shipped constants, on the rows `use` accepts.
GridFit Fit(PredictionGrid& grid, const std::function<bool(const PredictionGrid::Row&)>& use) {
  GridFit f;
  f.efficiency = NearestIndex(kEfficiencyAxis, kInTrainingEfficiency);
  f.attention = NearestIndex(kAttentionAxis, kCudnnAttentionScale);
  // Both constants describe dense kernels in a training step and are fitted on dense rows;
  // an MoE row's error is dominated by its expert layers (routing, grouped GEMMs, all-to-all),
  // which the constants would only absorb. MoE rows are scored, never fitted on.
  const auto use_dense = [&](const PredictionGrid::Row& row) { return !row.run.moe && use(row); };
  const auto use_cudnn = [&](const PredictionGrid::Row& row) {
    return row.cudnn && use_dense(row);
  };
  for (int round = 0; round < 3; ++round) {
    f.attention_curve.clear();
    double best = std::numeric_limits<double>::infinity();
    for (int a = 0; a < kAttentionAxis.points; ++a) {
      const double s = grid.Score(use_cudnn, f.efficiency, a, &f.attention_rows);
      f.attention_curve.emplace_back(kAttentionAxis.Value(a), s);
      if (f.attention_rows > 0 && s < best) {
        best = s;
        f.attention = a;
      }
    }
    f.efficiency_curve.clear();
    best = std::numeric_limits<double>::infinity();
    for (int e = 0; e < kEfficiencyAxis.points; ++e) {
      const double s = grid.Score(use_dense, e, f.attention, &f.efficiency_rows);
      f.efficiency_curve.emplace_back(kEfficiencyAxis.Value(e), s);
      if (s < best) {
        best = s;
        f.efficiency = e;
        f.mape_pct = s;
      }
    }
  }
  return f;
}

Calibration AtGrid(const GridFit& f) {
  return {kEfficiencyAxis.Value(f.efficiency), kAttentionAxis.Value(f.attention)};
}

}  // namespace

CalibrationFit FitCalibration(const std::string& csv_path) {
  PredictionGrid grid(csv_path);
  const GridFit f = Fit(grid, [](const PredictionGrid::Row&) { return true; });
  CalibrationFit out;
  out.best = AtGrid(f);
  out.best_mape_pct = f.mape_pct;
  out.attention_rows = f.attention_rows;
  out.efficiency_rows = f.efficiency_rows;
  out.efficiency_curve = f.efficiency_curve;
  out.attention_curve = f.attention_curve;
  return out;
}

CrossValidation CrossValidate(const std::string& csv_path) {
  PredictionGrid grid(csv_path);
  std::map<std::string, int> families;
  for (const PredictionGrid::Row& row : grid.rows()) ++families[row.family];
  CrossValidation cv;
  for (const auto& entry : families) {
    const std::string& family = entry.first;  // (a structured binding cannot be captured)
    const GridFit f =
        Fit(grid, [&](const PredictionGrid::Row& row) { return row.family != family; });
    HeldOutSource s;
    s.name = family;
    s.fitted_without = AtGrid(f);
    s.fitted_rows = f.efficiency_rows;
    double shipped = 0, held_out = 0;
    for (PredictionGrid::Row& row : grid.rows()) {
      if (row.family != family) continue;
      const std::optional<double> e = grid.ErrorAt(row, f.efficiency, f.attention);
      const std::optional<double> e0 = grid.ErrorWith(row, Calibration{});
      if (!e || !e0) continue;
      held_out += *e;
      shipped += *e0;
      ++s.rows;
    }
    if (s.rows == 0) continue;
    // Without another source's rows the fit only returns its search's starting point: no
    // held-out score exists.
    s.held_out_mape_pct =
        s.fitted_rows > 0 ? held_out / s.rows : std::numeric_limits<double>::quiet_NaN();
    s.shipped_mape_pct = shipped / s.rows;
    cv.rows += s.rows;
    cv.sources.push_back(s);
  }
  double held_out_sum = 0;
  for (const HeldOutSource& s : cv.sources) {
    cv.shipped_mape_pct += s.shipped_mape_pct / cv.sources.size();
    if (std::isnan(s.held_out_mape_pct)) continue;
    held_out_sum += s.held_out_mape_pct;
    ++cv.held_out_sources;
  }
  cv.held_out_mape_pct = cv.held_out_sources > 0 ? held_out_sum / cv.held_out_sources
                                                 : std::numeric_limits<double>::quiet_NaN();
  return cv;
}

Table CrossValidationTable(const CrossValidation& cv) {
  Table t("cross_validation",
          "Leave-one-source-out: each source scored with constants fitted on the other sources "
          "(time and throughput rows; memory rows depend on no fitted constant)",
          {{"source", "source", 0},
           {"rows", "rows", 0},
           {"shipped_mape_pct", "MAPE % (shipped constants)", 1},
           {"held_out_mape_pct", "MAPE % (held out)", 1},
           {"efficiency", "efficiency fitted without it", 2},
           {"attention_scale", "cuDNN scale fitted without it", 2}});
  auto score = [](double v) { return std::isnan(v) ? Cell{std::string("n/a")} : Cell{v}; };
  for (const HeldOutSource& s : cv.sources) {
    if (s.fitted_rows == 0) {
      t.AddRow({s.name, int64_t{s.rows}, s.shipped_mape_pct, std::string("n/a"),
                std::string("no rows to fit on"), Cell{}});
      continue;
    }
    t.AddRow({s.name, int64_t{s.rows}, s.shipped_mape_pct, s.held_out_mape_pct,
              s.fitted_without.in_training_efficiency, s.fitted_without.cudnn_attention_scale});
  }
  t.AddRow({std::string("overall (mean of sources)"), int64_t{cv.rows}, cv.shipped_mape_pct,
            score(cv.held_out_mape_pct), Cell{}, Cell{}});
  return t;
}

nlohmann::json CrossValidationJson(const CrossValidation& cv) {
  nlohmann::json j;
  j["sources"] = nlohmann::json::array();
  for (const HeldOutSource& s : cv.sources) {
    j["sources"].push_back({{"source", s.name},
                            {"rows", s.rows},
                            {"shipped_mape_pct", s.shipped_mape_pct},
                            {"held_out_mape_pct", std::isnan(s.held_out_mape_pct)
                                                      ? nlohmann::json(nullptr)
                                                      : nlohmann::json(s.held_out_mape_pct)},
                            {"fitted_rows", s.fitted_rows},
                            {"in_training_efficiency", s.fitted_without.in_training_efficiency},
                            {"cudnn_attention_scale", s.fitted_without.cudnn_attention_scale}});
  }
  j["rows"] = cv.rows;
  j["shipped_mape_pct"] = cv.shipped_mape_pct;
  j["held_out_mape_pct"] = std::isnan(cv.held_out_mape_pct) ? nlohmann::json(nullptr)
                                                            : nlohmann::json(cv.held_out_mape_pct);
  j["held_out_sources"] = cv.held_out_sources;
  return j;
}

}  // namespace sextant
