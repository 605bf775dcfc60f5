#include "util/close_matches.h"

#include <algorithm>
#include <string>
#include <vector>

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

TEST(EditDistanceTest, BoundedAgreesWithTheFullDistanceUpToItsBound) {
  EXPECT_EQ(BoundedEditDistance("kitten", "sitting", 3), 3u);
  EXPECT_EQ(BoundedEditDistance("kitten", "sitting", 2), 3u);  // over the bound: bound + 1
  EXPECT_EQ(BoundedEditDistance("sitting", "kitten", 5), 3u);
  EXPECT_EQ(BoundedEditDistance("", "abc", 1), 2u);
  EXPECT_EQ(BoundedEditDistance("same", "same", 0), 0u);
  // Every pair of short strings over {a, b} against the full table, for every bound.
  std::vector<std::string> words = {""};
  for (int length = 1; length <= 5; ++length) {
    for (int bits = 0; bits < (1 << length); ++bits) {
      std::string w;
      for (int k = 0; k < length; ++k) w += (bits >> k) & 1 ? 'b' : 'a';
      words.push_back(w);
    }
  }
  for (const std::string& x : words) {
    for (const std::string& y : words) {
      const size_t full = EditDistance(x, y);
      for (size_t bound = 0; bound <= 6; ++bound) {
        ASSERT_EQ(BoundedEditDistance(x, y, bound), std::min(full, bound + 1))
            << x << " " << y << " " << bound;
      }
    }
  }
  // A 2 MB name against a short one: over any small bound by the length difference alone.
  const std::string huge(2'000'000, 'k');
  EXPECT_EQ(BoundedEditDistance(huge, "kkkk", 2), 3u);
  EXPECT_EQ(BoundedEditDistance(huge, huge + "x", 2), 1u);
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

TEST(ClosestNamesTest, ANameTooLongForSuggestionsHasNone) {
  // Past kMaxSuggestedNameLength: not compared at all (a 5 MB value pasted as a name).
  EXPECT_THAT(ClosestNames(std::string(101, 'a'), {std::string(101, 'a'), "a"}), IsEmpty());
  EXPECT_THAT(ClosestNames(std::string(5'000'000, 'a'), {"llama3_8b", "a"}), IsEmpty());
  EXPECT_THAT(ClosestNames(std::string(100, 'a'), {std::string(101, 'a')}),
              ElementsAre(std::string(101, 'a')));
}

TEST(DidYouMeanTest, FormatsTheTail) {
  EXPECT_EQ(DidYouMean({}), "");
  EXPECT_EQ(DidYouMean({"a"}), "; did you mean a?");
  EXPECT_EQ(DidYouMean({"a", "b"}), "; did you mean a, b?");
}

}  // namespace
}  // namespace sextant
