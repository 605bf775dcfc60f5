#include "util/error.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(ErrorTest, FormatsFileLineColumnKeyAndReason) {
  SourceLocation where{"exp.yaml", 12, 3, -1};
  EXPECT_EQ(FormatLocated(where, "num_layers", "must be positive"),
            "exp.yaml:12:3: 'num_layers': must be positive");
}

TEST(ErrorTest, FormatsByteOffsetWhenNoLine) {
  SourceLocation where{"trace.json", -1, -1, 4096};
  EXPECT_EQ(FormatLocated(where, "", "unexpected end of input"),
            "trace.json at byte 4096: unexpected end of input");
}

TEST(ErrorTest, ThrowsUserErrorWithMessage) {
  try {
    ThrowUserError(SourceLocation{"a.yaml", 1, -1, -1}, "tp", "bad");
    FAIL() << "expected a throw";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "a.yaml:1: 'tp': bad");
  }
}

}  // namespace
}  // namespace sextant
