#include "projection/validation.h"

namespace sextant {

RowPredictor DefaultPredictor() {
  return [](const PublishedRun& run, std::string& why) -> std::optional<double> {
    if (run.metric_name.rfind("peak_memory", 0) == 0) return PredictMemoryMetric(run, why);
    why = "metric " + run.metric_name + " needs the performance model";
    return std::nullopt;
  };
}

}  // namespace sextant
