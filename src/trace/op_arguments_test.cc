#include "trace/op_arguments.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(OpArgumentsTest, ParsesShapesTypesAndConcreteInputs) {
  auto dims = ParseInputDims("[[32768, 2048], [2048, 8192], [], [[1, 2], [3]]]");
  ASSERT_EQ(dims.size(), 4u);
  EXPECT_EQ(dims[0], (Shape{32768, 2048}));
  EXPECT_EQ(dims[1], (Shape{2048, 8192}));
  EXPECT_TRUE(dims[2].empty());
  EXPECT_TRUE(dims[3].empty());  // a tensor list has no single shape
  EXPECT_TRUE(ParseInputDims("[[1, 2]").empty());
  auto types = ParseStringList("[\"c10::BFloat16\", \"Scalar\", \"\"]");
  EXPECT_EQ(types, (std::vector<std::string>{"c10::BFloat16", "Scalar", ""}));
  EXPECT_EQ(ParseStringList("[\"\", 5, null, \"False\"]"),
            (std::vector<std::string>{"", "", "", "False"}));
  EXPECT_EQ(BytesPerElement("c10::BFloat16"), 2);
  EXPECT_EQ(BytesPerElement("long int"), 8);
  EXPECT_EQ(BytesPerElement("c10::Float8_e4m3fn"), 1);
  EXPECT_EQ(BytesPerElement("c10::float8_e4m3fn"), 1);
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
}

// TraceLens groups by argument records as tuples and shows the first call's as lists.
TEST(OpArgumentsTest, PythonReprAsTuplesOrLists) {
  EXPECT_EQ(PythonRepr("[[512], [141, 512], []]"), "((512,), (141, 512), ())");
  EXPECT_EQ(PythonRepr("[[512], [141, 512], []]", PythonSequence::kList),
            "[[512], [141, 512], []]");
  EXPECT_EQ(PythonRepr(R"(["c10::BFloat16", "Scalar"])", PythonSequence::kList),
            "['c10::BFloat16', 'Scalar']");
  EXPECT_EQ(PythonRepr(R"(["", "1", 0.5, true])", PythonSequence::kList), "['', '1', 0.5, True]");
  EXPECT_EQ(PythonRepr("not json", PythonSequence::kList), "");
}

TEST(OpArgumentsTest, ElementCountSaturatesOnHostileDims) {
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({int64_t{1} << 40, int64_t{1} << 40}), INT64_MAX);
  EXPECT_EQ(NumElements({-(int64_t{1} << 40), int64_t{1} << 40}), INT64_MIN);
}

// Records written with different spacing are one group, an absent record is the empty text.
TEST(OpArgumentsTest, ArgumentReprsIndexEqualPythonTexts) {
  TraceData trace;
  const uint32_t spaced = trace.strings.Intern("[[512], [141, 512]]");
  const uint32_t tight = trace.strings.Intern("[[512],[141,512]]");
  const uint32_t other = trace.strings.Intern("[[2, 3]]");
  ArgumentReprs reprs(trace);
  EXPECT_EQ(reprs.Of(0), 0u);
  EXPECT_EQ(reprs.Text(0), "");
  const uint32_t a = reprs.Of(spaced);
  EXPECT_EQ(reprs.Text(a), "((512,), (141, 512))");
  EXPECT_EQ(reprs.Of(tight), a);
  EXPECT_NE(reprs.Of(other), a);
  EXPECT_EQ(reprs.Text(reprs.Of(other)), "((2, 3),)");
}

}  // namespace
}  // namespace sextant
