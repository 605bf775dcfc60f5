// Comparing two snapshots of the same program (before/after a change, two ranks, bf16 vs
// fp32): how the peak, the reserved memory and the fragmentation moved, and which call sites
// hold more or less memory at the peak. PyTorch's `_memory_viz compare` only lists segments
// present in one file and not the other; grouping by call site says *what* grew.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/snapshot_analysis.h"

namespace sextant {

struct CallSiteDelta {
  std::string site;
  int64_t base_bytes = 0;
  int64_t new_bytes = 0;
  int64_t base_count = 0;
  int64_t new_count = 0;
  int64_t delta_bytes() const { return new_bytes - base_bytes; }
};

struct DeviceComparison {
  int64_t device = 0;      // the base file's
  int64_t new_device = 0;  // the new file's: another id when each file holds one device

  int64_t base_peak_bytes = 0, new_peak_bytes = 0;
  int64_t base_peak_reserved_bytes = 0, new_peak_reserved_bytes = 0;
  int64_t base_reserved_bytes = 0, new_reserved_bytes = 0;
  int64_t base_cached_free_bytes = 0, new_cached_free_bytes = 0;  // reserved - allocated
  int64_t base_inactive_split_bytes = 0, new_inactive_split_bytes = 0;
  std::vector<CallSiteDelta> sites_at_peak;  // by |delta|, largest first
};

struct SnapshotComparison {
  std::string base_source, new_source;
  std::vector<DeviceComparison> devices;  // devices present in either
};

// Devices are paired by id; when each file holds a single device, those two are paired
// whatever their ids (one rank's snapshot against another's: rank 0 on cuda:0, rank 1 on
// cuda:1).
SnapshotComparison CompareSnapshots(const SnapshotAnalysis& base, const SnapshotAnalysis& next);

}  // namespace sextant
