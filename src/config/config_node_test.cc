#include "config/config_node.h"

#include <gtest/gtest.h>

#include "config/int_list_expression.h"
#include "config/yaml_loader.h"

namespace sextant {
namespace {

TEST(ConfigNode, SetPathCreatesMapsAndFindPathReads) {
  ConfigNode root = ConfigNode::Map();
  root.SetPath("parallelism.tensor_parallel_degree", ConfigNode::Scalar("4", {"--flag"}));
  root.SetPath("parallelism.pipeline_parallel_degree", ConfigNode::Scalar("2", {"--flag"}));
  ASSERT_NE(root.FindPath("parallelism.tensor_parallel_degree"), nullptr);
  EXPECT_EQ(root.FindPath("parallelism.tensor_parallel_degree")->scalar, "4");
  EXPECT_EQ(root.Find("parallelism")->fields.size(), 2u);
  EXPECT_EQ(root.FindPath("parallelism.missing"), nullptr);
  EXPECT_EQ(root.FindPath("nothing.here"), nullptr);
}

TEST(ConfigNode, MergeReplacesScalarsAndListsMergesMaps) {
  ConfigNode base = ParseYaml("a: 1\nm: {x: 1, y: 2}\nl: [1, 2]\n", "base");
  const ConfigNode over = ParseYaml("a: null\nm: {y: 3}\nl: [7]\nn: 5\n", "over");
  MergeInto(base, over);
  EXPECT_TRUE(base.Find("a")->IsNull());  // an explicit null overrides
  EXPECT_EQ(base.FindPath("m.x")->scalar, "1");
  EXPECT_EQ(base.FindPath("m.y")->scalar, "3");
  EXPECT_EQ(base.FindPath("m.y")->where.file, "over");
  EXPECT_EQ(base.Find("l")->items.size(), 1u);
  EXPECT_EQ(base.Find("n")->scalar, "5");
  EXPECT_EQ(LeafPaths(base), (std::vector<std::string>{"a", "m.x", "m.y", "l", "n"}));
}

TEST(ConfigNode, LargeMapsFindSetAndEraseByKeyInFileOrder) {
  // 40 keys: above the size where lookups go through the hash index.
  ConfigNode map = ConfigNode::Map();
  for (int i = 0; i < 40; ++i) map.Set("k" + std::to_string(i), ConfigNode::Scalar("v", {}));
  map.Set("k7", ConfigNode::Scalar("seven", {}));  // replaced in place
  EXPECT_EQ(map.fields.size(), 40u);
  EXPECT_EQ(map.fields[7].second.scalar, "seven");
  EXPECT_TRUE(map.Erase("k3"));
  EXPECT_FALSE(map.Erase("k3"));
  EXPECT_EQ(map.Find("k3"), nullptr);
  EXPECT_EQ(map.fields[3].first, "k4");  // later keys moved up, order kept
  EXPECT_EQ(map.Find("k39")->scalar, "v");
  // A field appended directly is still found (by a scan), and by the index after a Set.
  map.fields.push_back(ConfigField{"direct", ConfigNode::Scalar("d", {})});
  const ConfigNode& read_only = map;
  EXPECT_EQ(read_only.Find("direct")->scalar, "d");
  map.Set("k0", ConfigNode::Scalar("zero", {}));
  EXPECT_EQ(map.Find("direct")->scalar, "d");
  EXPECT_EQ(map.Find("k0")->scalar, "zero");
  // A copy finds through its own index.
  const ConfigNode copy = map;
  EXPECT_EQ(copy.Find("k39")->scalar, "v");
  EXPECT_EQ(copy.Find("nope"), nullptr);
}

// Expressions as written in Primus model files (deepseek_v3.yaml, lfm2_8B_A1B.yaml).
TEST(IntListExpression, MoeLayerFreqForms) {
  const IntOrList v3 = EvaluateIntListExpression("([0]*3+[1]*58)", "moe_layer_freq");
  ASSERT_TRUE(std::holds_alternative<std::vector<int64_t>>(v3));
  const auto& list = std::get<std::vector<int64_t>>(v3);
  ASSERT_EQ(list.size(), 61u);
  EXPECT_EQ(list[0], 0);
  EXPECT_EQ(list[2], 0);
  EXPECT_EQ(list[3], 1);
  EXPECT_EQ(list[60], 1);
  EXPECT_EQ(std::get<int64_t>(EvaluateIntListExpression("1", "k")), 1);
  EXPECT_EQ(std::get<int64_t>(EvaluateIntListExpression(" 2 * (3 + 4) ", "k")), 14);
  EXPECT_EQ(std::get<std::vector<int64_t>>(EvaluateIntListExpression("([1]*3+[0])*2", "k")),
            (std::vector<int64_t>{1, 1, 1, 0, 1, 1, 1, 0}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(EvaluateIntListExpression("[0, 1, 1,]", "k")),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(EvaluateIntListExpression("2*[1]", "k")),
            (std::vector<int64_t>{1, 1}));
}

// Found by moe_layer_frequency_fuzz: an empty list times a huge count looped over the count
// (44 s under ASan) although the result is empty.
TEST(IntListExpression, EmptyListTimesAHugeCountIsEmptyAtOnce) {
  EXPECT_TRUE(
      std::get<std::vector<int64_t>>(EvaluateIntListExpression("[]*9000000000000000000", "k"))
          .empty());
  EXPECT_TRUE(
      std::get<std::vector<int64_t>>(EvaluateIntListExpression("2*[]*62*6*9000000000000", "k"))
          .empty());
}

TEST(IntListExpression, RejectsAnythingElse) {
  for (const char* text : {"__import__('os')", "[1]*", "[1]+2", "[1]*[2]", "[[1]]", "(1", "",
                           "[1]*99999999999", "99999999999999999999", "1 2"}) {
    EXPECT_THROW(EvaluateIntListExpression(text, "moe_layer_freq"), UserError) << text;
  }
  try {
    EvaluateIntListExpression("[0]*3+x", "moe_layer_freq");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "moe_layer_freq: cannot evaluate \"[0]*3+x\": expected a number, '(' or '[' at "
                 "character 7");
  }
}

}  // namespace
}  // namespace sextant
