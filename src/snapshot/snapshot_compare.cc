#include "snapshot/snapshot_compare.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace sextant {
namespace {

const DeviceAnalysis* FindDevice(const SnapshotAnalysis& a, int64_t device) {
  for (const auto& d : a.devices) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

}  // namespace

SnapshotComparison CompareSnapshots(const SnapshotAnalysis& base, const SnapshotAnalysis& next) {
  SnapshotComparison out;
  out.base_source = base.source;
  out.new_source = next.source;
  std::vector<std::pair<const DeviceAnalysis*, const DeviceAnalysis*>> pairs;
  if (base.devices.size() == 1 && next.devices.size() == 1) {
    pairs.emplace_back(&base.devices[0], &next.devices[0]);
  } else {
    std::set<int64_t> devices;
    for (const auto& d : base.devices) devices.insert(d.device);
    for (const auto& d : next.devices) devices.insert(d.device);
    for (int64_t device : devices)
      pairs.emplace_back(FindDevice(base, device), FindDevice(next, device));
  }
  static const DeviceAnalysis kAbsent;
  for (const auto& [b, n] : pairs) {
    const int64_t device = b ? b->device : n->device;
    const DeviceAnalysis& bd = b ? *b : kAbsent;
    const DeviceAnalysis& nd = n ? *n : kAbsent;
    DeviceComparison c;
    c.device = device;
    c.new_device = n ? n->device : device;
    c.base_peak_bytes = bd.peak_allocated_bytes;
    c.new_peak_bytes = nd.peak_allocated_bytes;
    c.base_peak_reserved_bytes = bd.peak_reserved_bytes;
    c.new_peak_reserved_bytes = nd.peak_reserved_bytes;
    c.base_reserved_bytes = bd.reserved_bytes;
    c.new_reserved_bytes = nd.reserved_bytes;
    c.base_cached_free_bytes = bd.cached_free_bytes;
    c.base_inactive_split_bytes = bd.inactive_split_bytes;
    c.new_inactive_split_bytes = nd.inactive_split_bytes;
    c.new_cached_free_bytes = nd.cached_free_bytes;
    std::map<std::string, CallSiteDelta> by_site;
    for (const auto& s : bd.sites_at_peak) {
      auto& d = by_site[s.site];
      d.site = s.site;
      d.base_bytes += s.bytes;
      d.base_count += s.count;
    }
    for (const auto& s : nd.sites_at_peak) {
      auto& d = by_site[s.site];
      d.site = s.site;
      d.new_bytes += s.bytes;
      d.new_count += s.count;
    }
    for (auto& [site, d] : by_site) c.sites_at_peak.push_back(std::move(d));
    std::stable_sort(c.sites_at_peak.begin(), c.sites_at_peak.end(),
                     [](const CallSiteDelta& x, const CallSiteDelta& y) {
                       return std::llabs(x.delta_bytes()) > std::llabs(y.delta_bytes());
                     });
    out.devices.push_back(std::move(c));
  }
  return out;
}

}  // namespace sextant
