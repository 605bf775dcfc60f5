#include "job/torchtitan_schedules.h"

#include <cctype>

namespace sextant {

const std::vector<TorchTitanSchedule>& TorchTitanSchedules() {
  // torch/distributed/pipelining/schedules.py; the first entry of a kind is the one the
  // search writes back (Interleaved1F1B before LoopedBFS).
  static const std::vector<TorchTitanSchedule> schedules = {
      {"1F1B", ScheduleKind::k1F1B, false, false},
      {"GPipe", ScheduleKind::kGPipe, false, false},
      {"Interleaved1F1B", ScheduleKind::kInterleaved1F1B, true, false},
      {"LoopedBFS", ScheduleKind::kInterleaved1F1B, true, false},
      {"InterleavedZeroBubble", ScheduleKind::kZbvFormatted, true, true},
      {"ZBVZeroBubble", ScheduleKind::kZbvFormatted, true, false},
      {"DualPipeV", ScheduleKind::kDualPipeV, true, false},
  };
  return schedules;
}

const TorchTitanSchedule* FindTorchTitanSchedule(std::string_view name) {
  auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) !=
          std::tolower(static_cast<unsigned char>(b[i])))
        return false;
    }
    return true;
  };
  for (const TorchTitanSchedule& s : TorchTitanSchedules()) {
    if (same(s.name, name)) return &s;
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
