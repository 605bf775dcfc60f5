#include "job/torchtitan_schedules.h"

#include "util/close_matches.h"

namespace sextant {

const std::vector<TorchTitanSchedule>& TorchTitanSchedules() {
  // torch/distributed/pipelining/schedules.py; the first entry of a kind is the one the
  // search writes back (Interleaved1F1B before LoopedBFS).
  static const std::vector<TorchTitanSchedule> schedules = {
      {"1F1B", ScheduleKind::k1F1B, false, false},
      {"GPipe", ScheduleKind::kGPipe, false, false},
      {"Interleaved1F1B", ScheduleKind::kInterleaved1F1B, true, false},
      {"LoopedBFS", ScheduleKind::kInterleaved1F1B, true, false},
      {"InterleavedZeroBubble", ScheduleKind::kInterleaved1F1B, true, true},
      {"ZBVZeroBubble", ScheduleKind::kZbvFormatted, true, false},
      {"DualPipeV", ScheduleKind::kDualPipeV, true, false},
  };
  return schedules;
}

const TorchTitanSchedule* FindTorchTitanSchedule(std::string_view name) {
  for (const TorchTitanSchedule& s : TorchTitanSchedules()) {
    if (EqualsIgnoringCase(s.name, name)) return &s;
  }
  return nullptr;
}

const TorchTitanSchedule* TorchTitanScheduleFor(ScheduleKind kind) {
  for (const TorchTitanSchedule& s : TorchTitanSchedules()) {
    if (s.simulated == kind && !s.approximate) return &s;
  }
  return nullptr;
}

std::string TorchTitanPipelineLayout(int64_t layers, int64_t stages, int64_t input_weight,
                                     int64_t output_weight) {
  const int64_t effective = layers + input_weight + output_weight;
  if (stages < 2 || layers < 0 || input_weight < 0 || output_weight < 0 || stages > effective) {
    return "";
  }
  const int64_t base = effective / stages;
  const int64_t extra = effective % stages;
  if (base == 0 || input_weight > base || output_weight > base) return "";
  std::string out;
  for (int64_t i = 0; i < stages; ++i) {
    int64_t n = base + (i < extra ? 1 : 0);
    if (i == 0) n -= input_weight;
    if (i == stages - 1) n -= output_weight;
    if (i > 0) out += '|';
    if (i == 0) out += 'E';
    if (n > 0) out += "t*" + std::to_string(n);
    if (i == stages - 1) out += ",L";
  }
  return out;
}

}  // namespace sextant
