#include "util/csv_reader.h"

#include <gtest/gtest.h>

#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

TEST(CsvReaderTest, HandlesQuotesEmbeddedCommasAndNewlines) {
  auto recs = ParseCsv("a,b,c\n1,\"x, \"\"y\"\"\",\n2,\"multi\nline\",z\n", "t.csv");
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[1].fields[1], "x, \"y\"");
  EXPECT_EQ(recs[1].fields[2], "");
  EXPECT_EQ(recs[2].fields[1], "multi\nline");
  EXPECT_EQ(recs[2].line, 3);
}

TEST(CsvReaderTest, UnterminatedQuoteNamesFileAndLine) {
  try {
    ParseCsv("a\n\"open\n", "bad.csv");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "bad.csv:2: quoted field is never closed");
  }
}

TEST(CsvReaderTest, TableByColumnName) {
  auto t = CsvTable::Parse("id,value\nr1,3\nr2,\n", "t.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.Get(0, "value"), "3");
  EXPECT_EQ(t.Get(1, "value"), "");
  EXPECT_THROW(t.Get(0, "nope"), UserError);
}

// A row with fewer or more cells than the header would be read column by column into the
// wrong names; it is refused at its line. Trailing empty cells are a spreadsheet's habit.
TEST(CsvReaderTest, RowsMustHaveTheHeadersFieldCount) {
  try {
    CsvTable::Parse("id,a,b\nr1,1,2\nr2,1\n", "t.csv");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "t.csv:3: 2 fields, the header has 3");
  }
  EXPECT_THROW(CsvTable::Parse("id,a\nr1,1,2\n", "t.csv"), UserError);
  EXPECT_EQ(CsvTable::Parse("id,a\nr1,1,,\n", "t.csv").Get(0, "a"), "1");
}

// Excel's UTF-8 byte-order mark, blank lines and '#' comment lines are not data.
TEST(CsvReaderTest, ByteOrderMarkAndBlankLinesAreSkipped) {
  auto t = CsvTable::Parse("\xEF\xBB\xBFid,a\n\nr1,1\n  \n,\n# a note, here\nr2,2\n", "t.csv");
  EXPECT_TRUE(t.HasColumn("id"));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.Get(1, "a"), "2");
  EXPECT_EQ(t.line(1), 7);
}

TEST(CsvReaderTest, ReadsThePublishedRunsTable) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  auto t = CsvTable::Read(CorpusPath("validation/published_runs.csv"));
  EXPECT_GT(t.size(), 100u);
  EXPECT_TRUE(t.HasColumn("metric_value"));
  EXPECT_EQ(t.header().size(), 38u);  // id .. data, see corpus/validation/README.md "Columns"
}

TEST(CsvReaderTest, NumberCellsAreTheWholeTextAsAFiniteNumber) {
  EXPECT_EQ(ParseNumberCell("12.5"), 12.5);
  EXPECT_EQ(ParseNumberCell("1e3"), 1000.0);
  EXPECT_EQ(ParseNumberCell(""), std::nullopt);
  EXPECT_EQ(ParseNumberCell("12x"), std::nullopt);
  EXPECT_EQ(ParseNumberCell("inf"), std::nullopt);
  EXPECT_EQ(ParseNumberCell("1e999"), std::nullopt);  // out of range for a double
}

}  // namespace
}  // namespace sextant
