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

}  // namespace sextant
