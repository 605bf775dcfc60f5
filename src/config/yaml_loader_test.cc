#include "config/yaml_loader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/interpolation.h"
#include "config/toml_loader.h"

namespace sextant {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kData = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/config/";

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ParseYaml, KeepsLineAndColumnOfEveryValue) {
  const ConfigNode root = ParseYaml("a: 1\nb:\n  c: \"text\"\n  d: [4, 5]\n", "mem.yaml");
  ASSERT_TRUE(root.IsMap());
  const ConfigNode* c = root.FindPath("b.c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->scalar, "text");
  EXPECT_TRUE(c->quoted);
  EXPECT_EQ(c->where.file, "mem.yaml");
  EXPECT_EQ(c->where.line, 3);
  EXPECT_EQ(c->where.column, 6);
  const ConfigNode* d = root.FindPath("b.d");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->IsSequence());
  EXPECT_EQ(d->items[1].scalar, "5");
  EXPECT_EQ(d->items[1].where.line, 4);
  EXPECT_EQ(ReadInt(*root.Find("a"), "a"), 1);
}

// Windows editors start a UTF-8 file with a byte-order mark; PyYAML skips it.
TEST(ParseYaml, ByteOrderMarkIsSkipped) {
  const ConfigNode root = ParseYaml("\xEF\xBB\xBFmodules:\n  lr: 1\n", "bom.yaml");
  ASSERT_NE(root.FindPath("modules.lr"), nullptr);
  EXPECT_EQ(root.FindPath("modules.lr")->where.line, 2);
}

TEST(ParseYaml, NullSpellingsAndQuotedNull) {
  const ConfigNode root = ParseYaml("a: null\nb: ~\nc:\nd: \"null\"\n", "n.yaml");
  EXPECT_TRUE(root.Find("a")->IsNull());
  EXPECT_TRUE(root.Find("b")->IsNull());
  EXPECT_TRUE(root.Find("c")->IsNull());
  EXPECT_FALSE(root.Find("d")->IsNull());
  EXPECT_EQ(ReadInt(*root.Find("a"), "a"), std::nullopt);
}

TEST(ParseYaml, RepeatedKeyLaterWins) {
  const ConfigNode root = ParseYaml("a: 1\na: 2\n", "r.yaml");
  ASSERT_EQ(root.fields.size(), 1u);
  EXPECT_EQ(root.Find("a")->scalar, "2");
}

TEST(ParseYaml, SyntaxErrorNamesFileAndLine) {
  const std::string error =
      ErrorOf([] { LoadConfigFile(kData + "bad_syntax.yaml", Environment::FromMap({})); });
  EXPECT_THAT(error, HasSubstr("bad_syntax.yaml:"));
  EXPECT_THAT(error, HasSubstr("YAML syntax error"));
}

// PyYAML (Primus's loader) rejects a bare word inside a block map with "could not find
// expected ':'"; yaml-cpp would read it as a key with a null value.
TEST(ParseYaml, BareWordInABlockMapIsAnError) {
  EXPECT_THAT(ErrorOf([] { ParseYaml("a: 1\ndangling\n", "d.yaml"); }),
              AllOf(HasSubstr("d.yaml:2:1"), HasSubstr("'dangling'"), HasSubstr("expected ':'")));
  EXPECT_THAT(ErrorOf([] { ParseYaml("m:\n  a: 1\n  b # no colon\n", "d.yaml"); }),
              HasSubstr("d.yaml:3:3"));
  // Null values spelled with a colon, spaces before the colon, and flow maps are fine.
  const ConfigNode root = ParseYaml("a:\nb :\nc: {x, y: 1}\n\"q\":\n", "ok.yaml");
  EXPECT_TRUE(root.Find("a")->IsNull());
  EXPECT_TRUE(root.Find("b")->IsNull());
  EXPECT_TRUE(root.Find("c")->Find("x")->IsNull());
  EXPECT_TRUE(root.Find("q")->IsNull());
}

TEST(ParseYaml, NonScalarKeyIsAnError) {
  EXPECT_THAT(ErrorOf([] { ParseYaml("? [a, b]\n: 1\n", "k.yaml"); }),
              HasSubstr("map keys must be plain strings"));
}

TEST(ParseYaml, AliasExpansionIsBounded) {
  // Ten levels of ten aliases each would expand to 10^10 values.
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += std::string(j ? ", " : "") + "*l" + std::to_string(i - 1);
    text += "]\n";
  }
  EXPECT_THAT(ErrorOf([&] { ParseYaml(text, "bomb.yaml"); }),
              HasSubstr("more than 1000000 values"));
}

TEST(ReadScalars, TypedReadsRejectWrongForms) {
  const ConfigNode root =
      ParseYaml("i: 1_000_000\nf: 1.0e-5\nb: True\ns: text\nbad: 12abc\n", "t.yaml");
  EXPECT_EQ(ReadInt(*root.Find("i"), "i"), 1000000);
  EXPECT_DOUBLE_EQ(*ReadDouble(*root.Find("f"), "f"), 1.0e-5);
  EXPECT_EQ(ReadBool(*root.Find("b"), "b"), true);
  EXPECT_EQ(ReadString(*root.Find("s"), "s"), "text");
  const std::string error = ErrorOf([&] { ReadInt(*root.Find("bad"), "bad"); });
  EXPECT_THAT(error, HasSubstr("t.yaml:5:6: 'bad': expected an integer, found 12abc"));
  EXPECT_THAT(ErrorOf([&] { ReadBool(*root.Find("s"), "s"); }),
              HasSubstr("expected true or false"));
}

TEST(Extends, ChainMergesDeepAndLaterWins) {
  std::vector<std::string> files;
  const ConfigNode root = LoadConfigFile(kData + "child.yaml", Environment::FromMap({}), &files);
  EXPECT_EQ(root.Find("extends"), nullptr);
  EXPECT_EQ(ReadInt(*root.Find("num_layers"), "num_layers"), 40);
  // middle.yaml sets 5120, but sub/other.yaml comes later and re-extends base.yaml (4096).
  const ConfigNode* hidden = root.Find("hidden_size");
  EXPECT_EQ(ReadInt(*hidden, "hidden_size"), 4096);
  EXPECT_THAT(hidden->where.file, HasSubstr("base.yaml"));
  EXPECT_EQ(hidden->where.line, 3);
  // Maps merge key by key: a from other.yaml, b from base.yaml via other, c from middle.yaml.
  EXPECT_EQ(ReadInt(*root.FindPath("nested.a"), "a"), 100);
  EXPECT_EQ(ReadInt(*root.FindPath("nested.b"), "b"), 2);
  EXPECT_EQ(ReadInt(*root.FindPath("nested.c"), "c"), 30);
  // Lists are replaced, not concatenated.
  ASSERT_TRUE(root.Find("list_value")->IsSequence());
  EXPECT_EQ(root.Find("list_value")->items.size(), 1u);
  EXPECT_EQ(ReadString(*root.Find("other_key"), "other_key"), "from_other");
  // Bases are listed before the files that extend them; child.yaml is last.
  ASSERT_FALSE(files.empty());
  EXPECT_THAT(files.back(), HasSubstr("child.yaml"));
  EXPECT_THAT(files.front(), HasSubstr("base.yaml"));
}

TEST(Extends, CycleIsDetected) {
  const std::string error =
      ErrorOf([] { LoadConfigFile(kData + "cycle_a.yaml", Environment::FromMap({})); });
  EXPECT_THAT(error, HasSubstr("inheritance cycle"));
  EXPECT_THAT(error, HasSubstr("cycle_a.yaml -> "));
  EXPECT_THAT(error, HasSubstr("cycle_b.yaml"));
}

// Each file extends the next one twice: without reuse of resolved bases the load would read
// 2^40 files; it reads each of the 41 once.
TEST(Extends, RepeatedBasesAreResolvedOnce) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sextant_extends_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 40; ++i) {
    const std::string next = "f" + std::to_string(i + 1) + ".yaml";
    std::ofstream(dir / ("f" + std::to_string(i) + ".yaml"))
        << "extends: [" << next << ", " << next << "]\nk" << i << ": " << i << "\n";
  }
  std::ofstream(dir / "f40.yaml") << "k40: 40\n";
  std::vector<std::string> files;
  const ConfigNode root =
      LoadConfigFile((dir / "f0.yaml").string(), Environment::FromMap({}), &files);
  EXPECT_EQ(files.size(), 41u);
  EXPECT_EQ(ReadInt(*root.Find("k40"), "k40"), 40);
  EXPECT_EQ(ReadInt(*root.Find("k0"), "k0"), 0);
  std::filesystem::remove_all(dir);
}

TEST(Extends, MissingBaseNamesTheLine) {
  const std::string error =
      ErrorOf([] { LoadConfigFile(kData + "missing_base.yaml", Environment::FromMap({})); });
  EXPECT_THAT(error, HasSubstr("missing_base.yaml:2:"));
  EXPECT_THAT(error, HasSubstr("no such file: does_not_exist.yaml"));
}

TEST(Interpolation, DefaultsAndValues) {
  const Environment env =
      Environment::FromMap({{"SEXTANT_TEST_PP", "4"}, {"SEXTANT_TEST_NAME", "abc"}});
  const ConfigNode root = LoadConfigFile(kData + "interpolation.yaml", env);
  EXPECT_EQ(ReadInt(*root.Find("tensor_model_parallel_size"), "tp"), 1);
  EXPECT_EQ(ReadInt(*root.Find("pipeline_model_parallel_size"), "pp"), 4);
  EXPECT_EQ(ReadString(*root.Find("name"), "name"), "run-abc-x");
  EXPECT_EQ(ReadString(*root.Find("token"), "token"), "");
}

TEST(Interpolation, SetVariableBeatsDefault) {
  const Environment env =
      Environment::FromMap({{"SEXTANT_TEST_TP", "8"}, {"SEXTANT_TEST_PP", "1"}});
  const ConfigNode root = LoadConfigFile(kData + "interpolation.yaml", env);
  EXPECT_EQ(ReadInt(*root.Find("tensor_model_parallel_size"), "tp"), 8);
}

TEST(Interpolation, UnsetWithoutDefaultNamesFileLineAndVariable) {
  const std::string error =
      ErrorOf([] { LoadConfigFile(kData + "interpolation.yaml", Environment::FromMap({})); });
  EXPECT_THAT(error, HasSubstr("interpolation.yaml:2:"));
  EXPECT_THAT(error, HasSubstr("pipeline_model_parallel_size"));
  EXPECT_THAT(error, HasSubstr("SEXTANT_TEST_PP is not set"));
}

TEST(Interpolation, MalformedReferences) {
  const Environment env = Environment::FromMap({});
  EXPECT_THAT(ErrorOf([&] { Interpolate("${OPEN", env, {}, "k"); }), HasSubstr("unterminated"));
  EXPECT_THAT(ErrorOf([&] { Interpolate("${1X:2}", env, {}, "k"); }),
              HasSubstr("invalid variable"));
  EXPECT_THAT(ErrorOf([&] { Interpolate("${A-B}", env, {}, "k"); }), HasSubstr("invalid variable"));
  EXPECT_EQ(Interpolate("cost $5 ${X:a:b}", env, {}, "k"), "cost $5 a:b");
}

TEST(Toml, ReadsTablesWithLines) {
  const ConfigNode root = LoadConfigFile(kData + "torchtitan_job.toml", Environment::FromMap({}));
  const ConfigNode* tp = root.FindPath("parallelism.tensor_parallel_degree");
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(ReadInt(*tp, "tp"), 2);
  EXPECT_EQ(tp->where.line, 18);
  EXPECT_EQ(ReadInt(*root.FindPath("parallelism.data_parallel_shard_degree"), "dp"), -1);
  EXPECT_EQ(ReadString(*root.FindPath("model.flavor"), "flavor"), "8B");
  ASSERT_TRUE(root.FindPath("model.converters")->IsSequence());
  EXPECT_EQ(root.FindPath("model.converters")->items[0].scalar, "float8");
}

TEST(Toml, SyntaxErrorNamesFileAndLine) {
  const std::string error =
      ErrorOf([] { LoadConfigFile(kData + "bad.toml", Environment::FromMap({})); });
  EXPECT_THAT(error, HasSubstr("bad.toml:2:"));
  EXPECT_THAT(error, HasSubstr("TOML syntax error"));
}

TEST(Files, MissingFileAndDirectory) {
  EXPECT_THAT(ErrorOf([] { ReadTextFile(kData + "nope.yaml"); }), HasSubstr("cannot open"));
  EXPECT_THAT(ErrorOf([] { ReadTextFile(kData); }), HasSubstr("is a directory"));
}

}  // namespace
}  // namespace sextant
