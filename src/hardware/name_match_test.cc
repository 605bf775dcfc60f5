#include "hardware/name_match.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(NameDistance, CountsEditsIgnoringCaseAndSeparators) {
  EXPECT_EQ(NameDistance("node_bw", "NODE-BW"), 0u);
  EXPECT_EQ(NameDistance("node_bw", "node_bv"), 1u);   // one substitution
  EXPECT_EQ(NameDistance("pod_lat", "pod_lats"), 1u);  // one insertion
  EXPECT_EQ(NameDistance("kitten", "sitting"), 3u);    // the textbook example
  EXPECT_EQ(NameDistance("", "abc"), 3u);
}

TEST(ClosestNames, NearestFirstAndBounded) {
  const std::vector<std::string> keys = {"node_bw", "node_lat", "pod_bw", "pod_lat", "bw_eff"};
  EXPECT_THAT(ClosestNames("nod_bw", keys), ::testing::ElementsAre("node_bw", "pod_bw"));
  EXPECT_THAT(ClosestNames("bandwidth", keys), ::testing::IsEmpty());
  EXPECT_EQ(ClosestNames("node", keys, 1).size(), 1u);
}

}  // namespace
}  // namespace sextant
