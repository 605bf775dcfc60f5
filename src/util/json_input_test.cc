#include "util/json_input.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"

namespace sextant {
namespace {

std::string ErrorOf(std::string_view text, int max_nesting = 4) {
  try {
    ParseUntrustedJson(text, "in.json", max_nesting, "a test file");
  } catch (const UserError& e) {
    return e.what();
  }
  return "accepted";
}

// RFC 3629's table of well-formed byte sequences, at both ends of each range.
TEST(JsonInputTest, FindsTheFirstByteThatIsNotUtf8) {
  EXPECT_EQ(FirstInvalidUtf8("plain ASCII text, longer than a word"), std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"),
            std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("abc\xFF"), 3u);            // never a lead byte
  EXPECT_EQ(FirstInvalidUtf8("abcdefgh\xC0\x80"), 8u);   // overlong NUL
  EXPECT_EQ(FirstInvalidUtf8("x\xE0\x9F\xBF"), 1u);      // overlong 3-byte form
  EXPECT_EQ(FirstInvalidUtf8("x\xED\xA0\x80"), 1u);      // a surrogate, U+D800
  EXPECT_EQ(FirstInvalidUtf8("x\xF4\x90\x80\x80"), 1u);  // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("x\xE2\x82"), 1u);          // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xC3\xA9\xC3("), 2u);      // a bad continuation
}

TEST(JsonInputTest, ParsesWhatIsWellFormed) {
  const nlohmann::json j = ParseUntrustedJson(R"({"a": [1, 2.5, "x"]})", "in.json", 4, "x");
  EXPECT_EQ(j["a"][1], 2.5);
}

TEST(JsonInputTest, EveryKindOfBadInputIsOneUserErrorNamingTheFile) {
  // A number beyond a double escaped the old readers as nlohmann's out_of_range (found by
  // calibration_file_fuzz on a GEMM timing table).
  EXPECT_NE(ErrorOf(R"({"gemms": [{"m": 0.41625E5671485524}]})").find("in.json"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"a": )").find("in.json"), std::string::npos);
  // Nesting beyond the format's, refused with the offset of the first bracket too deep.
  const std::string deep = ErrorOf("[[[[[[1]]]]]]");
  EXPECT_NE(deep.find("in.json at byte 4"), std::string::npos) << deep;
  EXPECT_NE(deep.find("not a test file"), std::string::npos) << deep;
  // Brackets inside strings do not count.
  EXPECT_EQ(ErrorOf(R"(["[[[[[[[["])"), "accepted");
}

}  // namespace
}  // namespace sextant
