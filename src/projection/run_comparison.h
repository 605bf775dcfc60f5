// `projection performance --compare TRACE...`: the projection of a run next to what profiler
// traces of that run measured — iteration time, compute, exposed communication, idle/bubble
// per iteration, per rank — so a user learns how far to trust the projection before scaling.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "projection/performance_model.h"
#include "report/table.h"

namespace sextant {

// One rank's trace, per iteration. GPU figures are TraceLens's gpu_timeline over the traced
// window divided by the ProfilerStep count (the window also holds the edges of its steps).
struct MeasuredRank {
  std::string file;
  int64_t rank = -1;
  int64_t iterations = 0;      // ProfilerStep ranges (0: the window is one iteration)
  double iteration_ms = 0;     // mean ProfilerStep duration, else the GPU span
  double computation_ms = 0;   // GPU busy without communication
  double exposed_comm_ms = 0;  // communication not overlapped by computation
  double idle_ms = 0;          // GPU idle inside the window
  std::map<std::string, double> collective_ms;  // kernel time per collective type
  std::string device_name;                      // deviceProperties[0].name, "" if absent
  int64_t world_size = -1;                      // distributedInfo.world_size, -1 if absent
};

std::vector<MeasuredRank> MeasureRun(const std::vector<std::string>& traces);

// What makes the measured run another than the projected job: another GPU, another number of
// GPUs, a rank given twice, or computation a fifth or five times the projected (another model
// or batch). One line each; empty when the two match as far as the traces tell.
std::vector<std::string> ComparisonWarnings(const Job& job, const PerformanceReport& projected,
                                            const std::vector<MeasuredRank>& measured);

// Projected vs measured per component (the measured side is the mean over ranks, and the
// slowest rank for the iteration), then the measured ranks one by one.
std::vector<Table> RunComparisonTables(const PerformanceReport& projected,
                                       const std::vector<MeasuredRank>& measured);
nlohmann::json RunComparisonJson(const PerformanceReport& projected,
                                 const std::vector<MeasuredRank>& measured);

}  // namespace sextant
