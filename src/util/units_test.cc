#include "util/units.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(UnitsTest, FormatsBytesWithBinaryPrefixes) {
  EXPECT_EQ(FormatBytes(12), "12 B");
  EXPECT_EQ(FormatBytes(3 * kGiB / 2), "1.50 GiB");
  EXPECT_EQ(FormatBytes(512 * kMiB), "512.0 MiB");
  EXPECT_EQ(FormatBytes(int64_t{1} << 47), "128.00 TiB");  // not "131072.00 GiB"
}

TEST(UnitsTest, FormatsCountsWithDecimalSuffixes) {
  EXPECT_EQ(FormatCount(8.03e9), "8.03 B");
  EXPECT_EQ(FormatCount(1.5e6), "1.5 M");
}

}  // namespace
}  // namespace sextant
