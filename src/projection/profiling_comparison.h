// `--profiling-mode both`: the same job projected twice — every layer from the cost models,
// and with the layers a trace measured — side by side, per layer piece and per component of
// the iteration, with the model's error against the measured anchor.
#pragma once

#include <nlohmann/json.hpp>

#include "projection/performance_model.h"
#include "report/table.h"

namespace sextant {

// Rows: F, B, W of each layer type, then iteration time, tokens/s/GPU and the components of
// the iteration. Columns: simulated, anchored on the traces, simulated / measured - 1.
Table ProfilingComparisonTable(const PerformanceReport& simulated,
                               const PerformanceReport& measured);

nlohmann::json ProfilingComparisonJson(const PerformanceReport& simulated,
                                       const PerformanceReport& measured);

}  // namespace sextant
