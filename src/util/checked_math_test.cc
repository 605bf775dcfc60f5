#include "util/checked_math.h"

#include <limits>

#include <gtest/gtest.h>

namespace sextant {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();  // 2^63 - 1
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();  // -2^63

TEST(CheckedMath, MultiplyReportsOverflow) {
  EXPECT_EQ(CheckedMul(3, -7), -21);
  // 2^31 x 2^31 = 2^62 fits; 2^32 x 2^31 = 2^63 is one past the largest int64.
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(CheckedMul(int64_t{1} << 32, int64_t{1} << 31).has_value());
  // -2^63 = 2^62 x -2 fits; 2^62 x 2 does not (the probe's micro-batch size x 2).
  EXPECT_EQ(CheckedMul(int64_t{1} << 62, -2), kMin);
  EXPECT_FALSE(CheckedMul(int64_t{1} << 62, 2).has_value());
  EXPECT_FALSE(CheckedMul(kMin, -1).has_value());
}

TEST(CheckedMath, AddReportsOverflow) {
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_FALSE(CheckedAdd(kMax, 1).has_value());
  EXPECT_FALSE(CheckedAdd(kMin, -1).has_value());
  EXPECT_EQ(CheckedAdd(kMin, kMax), -1);
}

TEST(CheckedMath, ProductStopsAtTheFirstOverflow) {
  EXPECT_EQ(CheckedProduct({}), 1);
  EXPECT_EQ(CheckedProduct({2, 3, 4}), 24);
  // 2^40 x 2^20 x 2^4 = 2^64: the last partial product overflows.
  EXPECT_FALSE(CheckedProduct({int64_t{1} << 40, int64_t{1} << 20, 16}).has_value());
  // An overflowing partial product is an error even if a later zero would make it fit.
  EXPECT_FALSE(CheckedProduct({kMax, 2, 0}).has_value());
  EXPECT_TRUE(ProductAtMost({int64_t{1} << 26, int64_t{1} << 27}, int64_t{1} << 53));
  EXPECT_FALSE(ProductAtMost({int64_t{1} << 26, (int64_t{1} << 27) + 1}, int64_t{1} << 53));
  EXPECT_FALSE(ProductAtMost({kMax, kMax}, kMax));
}

}  // namespace
}  // namespace sextant
