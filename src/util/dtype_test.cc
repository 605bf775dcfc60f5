#include "util/dtype.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(DTypeTest, ParsesFrameworkSpellings) {
  EXPECT_EQ(ParseDType("bfloat16"), DType::kBF16);
  EXPECT_EQ(ParseDType("BF16"), DType::kBF16);
  EXPECT_EQ(ParseDType("hybrid"), DType::kFP8);  // Megatron --fp8-format hybrid
  EXPECT_EQ(ParseDType("mxfp8"), DType::kMXFP8);
  EXPECT_FALSE(ParseDType("int3").has_value());
}

TEST(DTypeTest, BytesPerElement) {
  EXPECT_EQ(DTypeBytes(DType::kFP32), 4.0);
  EXPECT_EQ(DTypeBytes(DType::kBF16), 2.0);
  EXPECT_EQ(DTypeBytes(DType::kFP8), 1.0);
}

}  // namespace
}  // namespace sextant
