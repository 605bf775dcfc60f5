// Configuration input that is hostile or careless: not a regular file, a byte-order mark,
// nesting deep enough to exhaust the stack, values megabytes long, maps of 100,000 keys.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config_node.h"
#include "config/toml_loader.h"
#include "config/toml_nesting.h"
#include "config/yaml_loader.h"

namespace sextant {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string Repeat(std::string_view part, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += part;
  return out;
}

TEST(HostileInput, DevicesAndFifosAreRefusedAtOnce) {
  // Reading either to the end would never return.
  EXPECT_THAT(ErrorOf([] { LoadConfigFile("/dev/zero", Environment::FromMap({})); }),
              AllOf(HasSubstr("/dev/zero"), HasSubstr("a device, not a regular file")));
  const std::string fifo = testing::TempDir() + "/sextant_config_fifo.yaml";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ErrorOf([&] { LoadConfigFile(fifo, Environment::FromMap({})); }),
              HasSubstr("is a FIFO, not a regular file"));
  // The same through `extends:`.
  const std::string child = testing::TempDir() + "/sextant_extends_fifo.yaml";
  std::ofstream(child) << "extends: " << fifo << "\na: 1\n";
  EXPECT_THAT(ErrorOf([&] { LoadConfigFile(child, Environment::FromMap({})); }),
              HasSubstr("is a FIFO, not a regular file"));
  ::unlink(fifo.c_str());
}

TEST(HostileInput, ByteOrderMarkIsSkipped) {
  const ConfigNode yaml = ParseYaml(
      "\xEF\xBB\xBF"
      "a: 1\n",
      "bom.yaml");
  ASSERT_NE(yaml.Find("a"), nullptr);
  EXPECT_EQ(yaml.Find("a")->scalar, "1");
  const ConfigNode toml = ParseToml(
      "\xEF\xBB\xBF"
      "a = 1\n",
      "bom.toml");
  ASSERT_NE(toml.Find("a"), nullptr);
  EXPECT_EQ(toml.Find("a")->scalar, "1");
}

TEST(HostileInput, DeepTomlIsRefusedBeforeParsing) {
  // 100,000 levels would overflow the stack inside toml++.
  const std::string header = "# deep\n[" + Repeat("a.", 99'999) + "a]\nx = 1\n";
  // The n-th dot of "[a.a.a..." is column 2n + 1; the 256th makes part 257: column 513.
  EXPECT_EQ(ErrorOf([&] { ParseToml(header, "deep.toml"); }),
            "deep.toml:2:513: nesting deeper than 256 levels at line 2");
  // "x = " is 4 columns; the 257th '[' is column 261.
  const std::string arrays = "x = " + Repeat("[", 100'000) + Repeat("]", 100'000) + "\n";
  EXPECT_THAT(ErrorOf([&] { ParseToml(arrays, "deep.toml"); }),
              HasSubstr("deep.toml:1:261: nesting deeper than 256 levels at line 1"));
  const std::string inline_tables = "x = " + Repeat("{a = ", 300) + "1" + Repeat("}", 300);
  EXPECT_THAT(ErrorOf([&] { ParseToml(inline_tables, "deep.toml"); }),
              HasSubstr("nesting deeper than 256 levels at line 1"));
  const std::string dotted_key = Repeat("a.", 300) + "a = 1\n";
  EXPECT_THAT(ErrorOf([&] { ParseToml(dotted_key, "deep.toml"); }),
              HasSubstr("nesting deeper than 256 levels at line 1"));
}

TEST(HostileInput, TomlValueBudgetIsCheckedBeforeParsing) {
  // A million empty inline tables in one array: 1 (aot =) + 1 ('[') + 1,000,000 (',') values,
  // past the budget of 1,000,000. toml++ would build every table first.
  const std::string tables = "a = 1\n[job]\naot = [" + Repeat("{},", 1'000'000) + "]\n";
  EXPECT_THAT(ErrorOf([&] { ParseToml(tables, "many.toml"); }),
              AllOf(HasSubstr("many.toml:3:"), HasSubstr(": 'job.aot': "),
                    HasSubstr("document holds more than 1000000 values")));
  // Counting: `x = [1, [2, 3]]` is 1 (x) + 1 (first element) + 1 (',') + 1 + 1 = 5 values.
  EXPECT_NO_THROW(CheckTomlNesting("x = [1, [2, 3]]\n", "ok.toml", 256, 5));
  EXPECT_THAT(ErrorOf([] { CheckTomlNesting("x = [1, [2, 3]]\n", "ok.toml", 256, 4); }),
              HasSubstr("ok.toml:1:11: 'x': document holds more than 4 values"));
  // Commas inside strings are not elements; headers count one each.
  EXPECT_NO_THROW(CheckTomlNesting("[t]\ns = \",,,,\"\n[u]\n", "ok.toml", 256, 3));
  EXPECT_THAT(ErrorOf([] { CheckTomlNesting("[t]\ns = \",,,,\"\n[u]\n", "ok.toml", 256, 2); }),
              HasSubstr("ok.toml:3:3: 'u': document holds more than 2 values"));
}

TEST(HostileInput, TomlNestingScanIgnoresStringsCommentsAndNumbers) {
  // 300 dots and brackets inside strings and comments, and a float: none is nesting.
  const std::string text = "[table]\n" + std::string("a = \"") + Repeat("[.", 300) + "\"\n" +
                           "b = '" + Repeat("{.", 300) + "'\n" + "c = \"\"\"\n" + Repeat("[", 300) +
                           "\n\"\"\"\n" + "# " + Repeat("[a.", 300) + "\n" +
                           "d = 1.5\ne = [[1, 2], [3.5]]\nf = {g.h = 1, i = [{}]}\n";
  EXPECT_NO_THROW(CheckTomlNesting(text, "ok.toml", 256));
  const ConfigNode root = ParseToml(text, "ok.toml");
  EXPECT_EQ(root.FindPath("table.f.g.h")->scalar, "1");
  // Exactly the limit is accepted: a header of 256 parts.
  EXPECT_NO_THROW(CheckTomlNesting("[" + Repeat("a.", 255) + "a]\n", "ok.toml", 256));
  EXPECT_ANY_THROW(CheckTomlNesting("[" + Repeat("a.", 256) + "a]\n", "ok.toml", 256));
}

TEST(HostileInput, DeepYamlNamesTheLimitAndLine) {
  const std::string flow = "a: " + Repeat("[", 100'000) + Repeat("]", 100'000) + "\n";
  EXPECT_THAT(
      ErrorOf([&] { ParseYaml(flow, "deep.yaml"); }),
      AllOf(HasSubstr("deep.yaml:1:"), HasSubstr("nesting deeper than 256 levels at line 1"),
            Not(HasSubstr("bad file"))));
  std::string block;
  for (int i = 0; i < 2000; ++i) block += std::string(i, ' ') + "a:\n";
  EXPECT_THAT(
      ErrorOf([&] { ParseYaml(block, "deep.yaml"); }),
      AllOf(HasSubstr("nesting deeper than 256 levels at line"), Not(HasSubstr("bad file"))));
  // Just over our own limit, below yaml-cpp's: the converter's check.
  const std::string over = "a: " + Repeat("[", 300) + Repeat("]", 300) + "\n";
  EXPECT_THAT(ErrorOf([&] { ParseYaml(over, "deep.yaml"); }),
              HasSubstr("nesting deeper than 256 levels at line 1"));
}

TEST(HostileInput, LongValuesAreCutInMessages) {
  // A 5 MB single-line scalar where an integer belongs: the message quotes 80 characters.
  const std::string value(5'000'000, '7');
  const ConfigNode root = ParseYaml("seq_length: x" + value + "\n", "long.yaml");
  const std::string error = ErrorOf([&] { ReadInt(*root.Find("seq_length"), "seq_length"); });
  EXPECT_THAT(error, HasSubstr("long.yaml:1:13: 'seq_length': expected an integer, found x777"));
  EXPECT_THAT(error, HasSubstr("7... (5000001 bytes)"));
  EXPECT_LT(error.size(), 200u);
  // Newlines in a value are written as \n: the message stays one line.
  const ConfigNode multi = ParseYaml("k: |\n  one\n  two\n", "multi.yaml");
  const std::string one_line = ErrorOf([&] { ReadInt(*multi.Find("k"), "k"); });
  EXPECT_THAT(one_line, HasSubstr("found \"one\\ntwo\\n\""));
  EXPECT_EQ(one_line.find('\n'), std::string::npos);
}

TEST(HostileInput, AliasesOfALargeScalarAreBudgeted) {
  // A 1 MiB scalar aliased 100 times would convert to 100 MiB of text. The budget is 64 MiB
  // of scalars and keys: the anchor (1 MiB) and aliases [0]..[62] make 64 MiB, which the keys
  // and the value before them (a, 1, bomb_a, bomb_b: 14 bytes) put past the budget at [62].
  const std::string text = "a: 1\nbomb_a: &A \"" + std::string(1 << 20, 'x') + "\"\nbomb_b: [" +
                           Repeat("*A,", 99) + "*A]\n";
  const std::string error = ErrorOf([&] { ParseYaml(text, "alias.yaml"); });
  EXPECT_THAT(error, AllOf(HasSubstr("alias.yaml:2:"), HasSubstr(": 'bomb_b[62]': "),
                           HasSubstr("document expands to more than 64 MiB of text")));
  EXPECT_LT(error.size(), 300u);
  // The same scalar used a few times is fine.
  const std::string few = "bomb_a: &A \"" + std::string(1 << 20, 'x') + "\"\nb: [*A, *A]\n";
  EXPECT_EQ(ParseYaml(few, "alias.yaml").Find("b")->items.size(), 2u);
}

TEST(HostileInput, ShortText) {
  EXPECT_EQ(ShortText("abc"), "abc");
  EXPECT_EQ(ShortText("a\tb\x01"), "a\\tb\\x01");
  EXPECT_EQ(ShortText("abcdef", 3), "abc... (6 bytes)");
  // "é" is two bytes (C3 A9): a cut between them drops the lead byte too.
  EXPECT_EQ(ShortText("ab\xC3\xA9z", 3), "ab... (5 bytes)");
}

TEST(HostileInput, HundredThousandKeyDocumentsLoad) {
  // Merging n keys must be linear: before key lookup was hashed, these took minutes.
  std::string yaml = "overrides:\n";
  std::string toml = "[overrides]\n";
  for (int i = 0; i < 100'000; ++i) {
    yaml += "  key_" + std::to_string(i) + ": " + std::to_string(i) + "\n";
    toml += "key_" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  }
  const ConfigNode from_yaml = ParseYaml(yaml, "big.yaml");
  const ConfigNode from_toml = ParseToml(toml, "big.toml");
  ConfigNode merged = ConfigNode::Map();
  MergeInto(merged, from_yaml);
  MergeInto(merged, from_toml);  // the same 100,000 keys again: each found, none appended
  const ConfigNode* overrides = merged.Find("overrides");
  ASSERT_NE(overrides, nullptr);
  ASSERT_EQ(overrides->fields.size(), 100'000u);
  // File order is kept: key_0, key_1, ... (YAML's order; TOML values replaced in place).
  EXPECT_EQ(overrides->fields[0].first, "key_0");
  EXPECT_EQ(overrides->fields[99'999].first, "key_99999");
  EXPECT_EQ(overrides->Find("key_54321")->scalar, "54321");
  EXPECT_EQ(overrides->Find("key_54321")->where.file, "big.toml");
}

}  // namespace
}  // namespace sextant
