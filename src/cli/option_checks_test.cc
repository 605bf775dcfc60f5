#include "cli/option_checks.h"

#include <gtest/gtest.h>

namespace sextant::cli {
namespace {

std::string Check(const CLI::Validator& v, std::string text) { return v(text); }

TEST(OptionChecksTest, AtLeastAcceptsTheMinimumAndAbove) {
  CLI::Validator v = AtLeast(1);
  EXPECT_EQ(Check(v, "1"), "");
  EXPECT_EQ(Check(v, "4096"), "");
}

TEST(OptionChecksTest, AtLeastNamesTheLimitAndTheValue) {
  CLI::Validator v = AtLeast(1);
  EXPECT_EQ(Check(v, "0"), "must be a whole number of at least 1, got '0'");
  EXPECT_EQ(Check(v, "-3"), "must be a whole number of at least 1, got '-3'");
  EXPECT_EQ(Check(v, "2.5"), "must be a whole number of at least 1, got '2.5'");
  // A whole number past what the option can hold says so, rather than that it is too small.
  EXPECT_EQ(Check(v, "99999999999999999999"),
            "'99999999999999999999' is too large (at most 9223372036854775807)");
}

TEST(OptionChecksTest, PositiveRefusesZeroNegativeAndText) {
  CLI::Validator v = Positive();
  EXPECT_EQ(Check(v, "1900"), "");
  EXPECT_EQ(Check(v, "0.5"), "");
  EXPECT_EQ(Check(v, "0"), "must be a number above 0, got '0'");
  EXPECT_EQ(Check(v, "-5"), "must be a number above 0, got '-5'");
  EXPECT_EQ(Check(v, "fast"), "must be a number above 0, got 'fast'");
}

TEST(OptionChecksTest, ScheduleNamesInEverySpelling) {
  CLI::Validator v = ScheduleName();
  for (std::string name : {"auto", "all", "1f1b", "seaailab-ilp", "zero-bubble", "v-half", "v-min",
                           "zbv-formatted", "1f1b-interleaved"}) {
    EXPECT_EQ(Check(v, name), "") << name;
  }
  EXPECT_NE(Check(v, "zbv-greedy-hal").find("did you mean zbv-greedy-half"), std::string::npos)
      << Check(v, "zbv-greedy-hal");
}

TEST(OptionChecks, WholeNumberBetweenNamesTheRange) {
  const CLI::Validator v = WholeNumberBetween(1, 3600000);
  EXPECT_EQ(Check(v, "500"), "");
  EXPECT_EQ(Check(v, "99999999999999"),
            "must be a whole number from 1 to 3600000, got '99999999999999'");
  EXPECT_EQ(Check(v, "0"), "must be a whole number from 1 to 3600000, got '0'");
  EXPECT_EQ(Check(v, "1.5"), "must be a whole number from 1 to 3600000, got '1.5'");
}

}  // namespace
}  // namespace sextant::cli
