#include "report/json_stream.h"

#include <gtest/gtest.h>

#include <string>

namespace sextant {
namespace {

bool IsRow(const nlohmann::json& value) {
  if (!value.is_object() || value.empty()) return false;
  for (const auto& member : value)
    if (!member.is_primitive()) return false;
  return true;
}

// Streams `value` container by container, each leaf (and, with `rows_whole`, each object of
// numbers and strings) whole, as a report writer does.
void Stream(const nlohmann::json& value, JsonStream& out, bool rows_whole) {
  if (value.is_object() && !(rows_whole && IsRow(value))) {
    out.BeginObject();
    for (const auto& [key, member] : value.items()) {
      out.Key(key);
      Stream(member, out, rows_whole);
    }
    out.End();
  } else if (value.is_array()) {
    out.BeginArray();
    for (const auto& element : value) Stream(element, out, rows_whole);
    out.End();
  } else {
    out.Value(value);
  }
}

std::string Streamed(const nlohmann::json& value, bool rows_whole, size_t* pieces = nullptr) {
  std::string text;
  JsonStream out([&](std::string_view piece) {
    text += piece;
    if (pieces) ++*pieces;
  });
  Stream(value, out, rows_whole);
  out.Flush();
  return text;
}

TEST(JsonStreamTest, PrintsWhatNlohmannPrints) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "ranks": [{"rank": 0, "file": "a \"quoted\" name\n", "warnings": [], "launch": {},
               "timeline_us": {"total": 12.5, "idle": 0.1}, "kernels": [
                 {"name": "gemm", "count": 3, "mean_us": 1e-7, "rank": 0, "dims": null},
                 {"name": "ünïcode", "count": -4, "mean_us": 123456789.125, "rank": 0,
                  "dims": "[[1, 2]]"}]}],
    "empty": [], "nested": [[], [[]], {}, [{}], 1, "x"], "number": 18446744073709551615,
    "\u0001key": true})");
  EXPECT_EQ(Streamed(doc, false), doc.dump(1));
  EXPECT_EQ(Streamed(doc, true), doc.dump(1));  // row objects given whole
  EXPECT_EQ(Streamed(nlohmann::json::array(), false), "[]");
  EXPECT_EQ(Streamed(42, false), "42");
}

TEST(JsonStreamTest, ALargeDocumentReachesTheSinkInPieces) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < 40'000; ++i)
    rows.push_back({{"index", i}, {"name", "kernel_" + std::to_string(i)}, {"us", i * 0.25}});
  const nlohmann::json doc = {{"rows", rows}};
  size_t pieces = 0;
  EXPECT_EQ(Streamed(doc, true, &pieces), doc.dump(1));
  EXPECT_GT(pieces, 1u);
}

TEST(JsonStreamTest, RefusesMisuse) {
  JsonStream out([](std::string_view) {});
  EXPECT_THROW(out.End(), std::logic_error);
  out.BeginArray();
  EXPECT_THROW(out.Key("k"), std::logic_error);
}

}  // namespace
}  // namespace sextant
