#include "snapshot/gpu_sampler.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

const std::string kSysfs = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/snapshot/sysfs";

TEST(GpuSamplerTest, ReadsAmdSysfsTree) {
  // Fixture: card0 and card1 have VRAM files (card1 without gpu_busy_percent); card0-DP-1 is
  // a connector and card2 has no VRAM files, so both are skipped.
  auto sampler = OpenSysfsSampler(kSysfs);
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(sampler->Name(), "sysfs:" + kSysfs);
  std::vector<GpuSample> samples = sampler->Sample();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].gpu, 0);
  EXPECT_EQ(samples[0].memory_used_bytes, 1073741824);
  EXPECT_EQ(samples[0].memory_total_bytes, 68702699520);
  EXPECT_DOUBLE_EQ(samples[0].utilization_percent, 37.0);
  EXPECT_EQ(samples[1].gpu, 1);
  EXPECT_EQ(samples[1].memory_used_bytes, 2147483648);
  EXPECT_DOUBLE_EQ(samples[1].utilization_percent, -1.0);
}

TEST(GpuSamplerTest, NoTreeNoSampler) {
  EXPECT_EQ(OpenSysfsSampler("/nonexistent/drm"), nullptr);
  EXPECT_EQ(OpenSysfsSampler(std::string(SEXTANT_SOURCE_DIR) + "/tests/data/snapshot"), nullptr);
}

}  // namespace
}  // namespace sextant
