#include "snapshot/snapshot_compare.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

DeviceAnalysis Device(int64_t device, int64_t peak, std::vector<CallSiteTotal> sites) {
  DeviceAnalysis d;
  d.device = device;
  d.peak_allocated_bytes = peak;
  d.sites_at_peak = std::move(sites);
  return d;
}

TEST(SnapshotCompareTest, ReportsGrowthBySiteLargestChangeFirst) {
  SnapshotAnalysis base, next;
  base.source = "fp32.pickle";
  next.source = "bf16.pickle";
  base.devices.push_back(Device(0, 1000, {{"attn", {}, 600, 3}, {"mlp", {}, 400, 2}}));
  next.devices.push_back(
      Device(0, 900, {{"attn", {}, 300, 3}, {"mlp", {}, 450, 2}, {"kv", {}, 150, 1}}));
  next.devices.push_back(Device(1, 50, {{"mlp", {}, 50, 1}}));
  SnapshotComparison c = CompareSnapshots(base, next);
  ASSERT_EQ(c.devices.size(), 2u);
  const DeviceComparison& d0 = c.devices[0];
  EXPECT_EQ(d0.base_peak_bytes, 1000);
  EXPECT_EQ(d0.new_peak_bytes, 900);
  ASSERT_EQ(d0.sites_at_peak.size(), 3u);
  EXPECT_EQ(d0.sites_at_peak[0].site, "attn");  // -300
  EXPECT_EQ(d0.sites_at_peak[0].delta_bytes(), -300);
  EXPECT_EQ(d0.sites_at_peak[1].site, "kv");  // +150, new
  EXPECT_EQ(d0.sites_at_peak[1].base_bytes, 0);
  EXPECT_EQ(d0.sites_at_peak[2].delta_bytes(), 50);
  // A device only in the new file compares against nothing.
  EXPECT_EQ(c.devices[1].device, 1);
  EXPECT_EQ(c.devices[1].base_peak_bytes, 0);
  EXPECT_EQ(c.devices[1].new_peak_bytes, 50);
}

// Two ranks' snapshots each hold their own device (rank 1 on cuda:1): they are compared with
// each other, not each with nothing.
TEST(SnapshotCompareTest, OneDeviceEachIsPairedWhateverItsId) {
  SnapshotAnalysis rank0, rank1;
  rank0.devices.push_back(Device(0, 1000, {{"attn", {}, 1000, 3}}));
  rank1.devices.push_back(Device(1, 1000, {{"attn", {}, 1000, 3}}));
  SnapshotComparison c = CompareSnapshots(rank0, rank1);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].device, 0);
  EXPECT_EQ(c.devices[0].new_device, 1);
  EXPECT_EQ(c.devices[0].new_peak_bytes - c.devices[0].base_peak_bytes, 0);
  ASSERT_EQ(c.devices[0].sites_at_peak.size(), 1u);
  EXPECT_EQ(c.devices[0].sites_at_peak[0].delta_bytes(), 0);
}

}  // namespace
}  // namespace sextant
