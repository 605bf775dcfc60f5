#include "util/close_matches.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sextant {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(EditDistanceTest, HandCheckedValues) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);  // k->s, e->i, +g: the textbook example
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
  EXPECT_EQ(EditDistance("mi300x", "mi355x"), 2u);
  EXPECT_EQ(EditDistance("pod_lat", "pod_lats"), 1u);  // one insertion
}

TEST(EqualsIgnoringCaseTest, LetterForLetterWithoutCase) {
  EXPECT_TRUE(EqualsIgnoringCase("1f1b", "1F1B"));
  EXPECT_TRUE(EqualsIgnoringCase("Megatron", "megatron"));
  EXPECT_TRUE(EqualsIgnoringCase("", ""));
  EXPECT_FALSE(EqualsIgnoringCase("zbvzerobubble", "zbv_zero_bubble"));  // no folding
  EXPECT_FALSE(EqualsIgnoringCase("gpipe", "gpipes"));
}

TEST(FoldNameTest, IgnoresCaseAndSeparators) {
  EXPECT_EQ(FoldName("H100_SXM-5 80gb"), "h100sxm580gb");
  EXPECT_EQ(FoldName("Llama-3.1-8B"), FoldName("llama3.1_8b"));
  EXPECT_EQ(EditDistance(FoldName("node_bw"), FoldName("NODE-BW")), 0u);
}

TEST(ClosestNamesTest, NearestFirstWithinAThirdOfTheLength) {
  const std::vector<std::string> keys = {"node_bw", "node_lat", "pod_bw", "pod_lat", "bw_eff"};
  // "nod_bw" folds to "nodbw" (5 letters, limit 2): "nodebw" is 1 insertion away, "podbw" 1
  // substitution; both at 1, so candidate order. "nodelat" and "bweff" are 4 and 5 away.
  EXPECT_THAT(ClosestNames("nod_bw", keys), ElementsAre("node_bw", "pod_bw"));
  EXPECT_THAT(ClosestNames("bandwidth", keys), IsEmpty());
  EXPECT_EQ(ClosestNames("node", keys, 1).size(), 1u);
  // A long key tolerates more edits: "tensormodelparalelsize" has 22 letters -> limit 7.
  const std::vector<std::string> megatron = {"tensor_model_parallel_size",
                                             "pipeline_model_parallel_size", "num_layers"};
  EXPECT_THAT(ClosestNames("tensor_model_paralel_size", megatron),
              ElementsAre("tensor_model_parallel_size"));
  EXPECT_THAT(ClosestNames("num_layer", megatron), ElementsAre("num_layers"));
  EXPECT_THAT(ClosestNames("completely_different", megatron), IsEmpty());
}

TEST(ClosestNamesTest, ContainmentCountsAsClosest) {
  EXPECT_THAT(ClosestNames("MI300", {"H100", "MI300X"}), ElementsAre("MI300X"));
  EXPECT_THAT(ClosestNames("x", {"x", "x"}), ElementsAre("x"));  // duplicates once
}

TEST(DidYouMeanTest, FormatsTheTail) {
  EXPECT_EQ(DidYouMean({}), "");
  EXPECT_EQ(DidYouMean({"a"}), "; did you mean a?");
  EXPECT_EQ(DidYouMean({"a", "b"}), "; did you mean a, b?");
}

}  // namespace
}  // namespace sextant
