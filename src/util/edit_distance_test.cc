#include "util/edit_distance.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(EditDistanceTest, HandCheckedValues) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);  // k->s, e->i, +g
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
  EXPECT_EQ(EditDistance("mi300x", "mi355x"), 2u);
}

}  // namespace
}  // namespace sextant
