#include "config/yaml_writer.h"

#include <gtest/gtest.h>

#include "config/yaml_loader.h"

namespace sextant {
namespace {

// Every scalar, list and map reads back as written, null and quoted strings included.
TEST(ToYaml, ReadsBackToTheSameTree) {
  const char* const kText =
      "modules:\n"
      "  pre_trainer:\n"
      "    framework: megatron\n"
      "    overrides:\n"
      "      micro_batch_size: 2\n"
      "      recompute_layer_ids: [0, 1, 7]\n"
      "      pipeline_model_parallel_layout: \"Et|(tt|)*14,tL\"\n"
      "      note: \"a: b # not a comment\"\n"
      "      vocab_size: null\n"
      "      tag: \"1\"\n"
      "      empty: \"\"\n";
  const ConfigNode original = ParseYaml(kText, "x.yaml");
  const std::string written = ToYaml(original);
  const ConfigNode again = ParseYaml(written, "again.yaml");
  const ConfigNode* o = again.FindPath("modules.pre_trainer.overrides");
  ASSERT_NE(o, nullptr) << written;
  EXPECT_EQ(again.FindPath("modules.pre_trainer.framework")->scalar, "megatron");
  EXPECT_EQ(o->Find("micro_batch_size")->scalar, "2");
  ASSERT_TRUE(o->Find("recompute_layer_ids")->IsSequence());
  EXPECT_EQ(o->Find("recompute_layer_ids")->items.at(2).scalar, "7");
  EXPECT_EQ(o->Find("pipeline_model_parallel_layout")->scalar, "Et|(tt|)*14,tL");
  EXPECT_EQ(o->Find("note")->scalar, "a: b # not a comment");
  EXPECT_TRUE(o->Find("vocab_size")->IsNull());
  // A quoted "1" stays a string, and "" stays an empty string rather than null.
  EXPECT_EQ(o->Find("tag")->scalar, "1");
  EXPECT_TRUE(o->Find("tag")->quoted);
  EXPECT_FALSE(o->Find("empty")->IsNull());
  // Key order is kept.
  EXPECT_LT(written.find("micro_batch_size"), written.find("recompute_layer_ids"));
}

TEST(ToYaml, EmptyMapAndScalarRoots) {
  EXPECT_EQ(ToYaml(ConfigNode::Map()), "{}\n");
  EXPECT_EQ(ToYaml(ConfigNode::Scalar("x", {})), "x\n");
}

}  // namespace
}  // namespace sextant
