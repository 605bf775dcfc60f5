#include "report/table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/cell_shortening.h"
#include "report/console_table.h"
#include "report/csv_writer.h"
#include "report/html_writer.h"
#include "report/json_table.h"
#include "report/xlsx_writer.h"
#include "util/error.h"

namespace sextant {
namespace {

Table Sample() {
  Table t("kernels", "Top kernels",
          {{"name", "kernel", 0}, {"count", "count", 0}, {"time_ms", "time (ms)", 2}});
  t.AddRow({std::string("gemm, \"big\""), int64_t{3}, 1.5});
  t.AddRow({std::string("<copy>"), int64_t{10}, std::monostate{}});
  return t;
}

TEST(TableTest, RejectsRowOfWrongWidth) {
  Table t = Sample();
  EXPECT_THROW(t.AddRow({int64_t{1}}), std::logic_error);
  EXPECT_EQ(t.ColumnIndex("count"), 1);
  EXPECT_EQ(t.ColumnIndex("nope"), -1);
}

TEST(TableTest, ConcatenationTakesTheUnionOfColumns) {
  Table a("t", "first", {{"rank", "rank", 0}, {"ms", "ms", 3}});
  a.AddRow({int64_t{0}, 1.5});
  a.AddNote("shared");
  Table b("t", "second", {{"rank", "rank", 0}, {"recompute", "recompute", 0}, {"ms", "ms", 3}});
  b.AddRow({int64_t{1}, std::string("yes"), 2.5});
  b.AddNote("shared");
  const Table c = ConcatenateTables({&a, &b});
  EXPECT_EQ(c.title(), "first");
  ASSERT_EQ(c.columns().size(), 3u);
  EXPECT_EQ(c.columns()[2].key, "recompute");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(std::get<double>(c.rows()[0][1]), 1.5);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(c.rows()[0][2]));
  EXPECT_EQ(std::get<double>(c.rows()[1][1]), 2.5);
  EXPECT_EQ(std::get<std::string>(c.rows()[1][2]), "yes");
  EXPECT_EQ(c.notes().size(), 1u);
  EXPECT_EQ(a.size(), 1u);  // copied: the parts keep their rows

  // Taking the rows gives the same table and leaves the parts without rows.
  const Table taken = ConcatenateTablesTakingRows({&a, &b});
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(std::get<double>(taken.rows()[0][1]), 1.5);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(taken.rows()[0][2]));
  EXPECT_EQ(std::get<std::string>(taken.rows()[1][2]), "yes");
  EXPECT_EQ(taken.notes(), c.notes());
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(b.empty());
}

TEST(TableTest, ConsoleAlignsNumbersRight) {
  std::string text = RenderConsoleTable(Sample());
  EXPECT_NE(text.find("Top kernels\n"), std::string::npos);
  EXPECT_NE(text.find("kernel       count  time (ms)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gemm, \"big\"      3       1.50\n"), std::string::npos) << text;
  EXPECT_NE(text.find("<copy>          10\n"), std::string::npos) << text;
}

TEST(TableTest, ConsoleShortensLongCellsKeepingRowsApart) {
  Table t("k", "", {{"name", "kernel", 0}});
  // Two names of 29 characters that differ only at the end (the tile shape).
  t.AddRow({std::string("gemm_kernel_bf16_tile_128x128")});
  t.AddRow({std::string("gemm_kernel_bf16_tile_128x256")});
  // Ten two-byte characters.
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "\xc3\xa9";
  t.AddRow({accents});
  const std::string text = RenderConsoleTable(t, 15);
  // "gemm_kernel_..." would print both alike: 8 first + "..." + 4 last characters.
  EXPECT_NE(text.find("gemm_ker...x128\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gemm_ker...x256\n"), std::string::npos) << text;
  // Where the usual cut prints two names alike, those rows keep more of their end.
  Table clash("k", "", {{"name", "kernel", 0}});
  clash.AddRow({std::string("device_kernel<grouped::m_fp8::GemmKernel>")});
  clash.AddRow({std::string("device_kernel<grouped::fp8_ptp::GemmKernel>")});
  clash.AddRow({std::string("device_kernel<grouped::fp8_ptp::GemmKernel>")});  // again
  // 21 first characters + "..." would print both as "device_kernel<grouped...", and 14 first
  // + "..." + 7 last as "device_kernel<...Kernel>"; 7 first and 14 last tell them apart.
  const std::string apart = RenderConsoleTable(clash, 24);
  EXPECT_NE(apart.find("device_...8::GemmKernel>\ndevice_...p::GemmKernel>\n"
                       "device_...p::GemmKernel>\n"),
            std::string::npos)
      << apart;
  // No UTF-8 character is cut in two: every byte sequence still decodes.
  const std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_EQ(last, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...\n") << last;
}

TEST(TableTest, ConsolePrintsOneWideRowAsAListOfFields) {
  std::vector<Column> columns;
  std::vector<Cell> row;
  for (int i = 0; i < 8; ++i) {
    columns.push_back({"c" + std::to_string(i), "a rather long header " + std::to_string(i), 2});
    row.push_back(1.0 + i);
  }
  Table t("launch", "Kernel launch statistics", columns);
  t.AddRow(row);
  t.AddNote("one note");
  const std::string text = RenderConsoleTable(t);
  // 8 columns of 22 characters and 7 gaps of 2: 190 characters, over the 120 of a terminal.
  EXPECT_EQ(text,
            "Kernel launch statistics\n"
            "a rather long header 0  1.00\n"
            "a rather long header 1  2.00\n"
            "a rather long header 2  3.00\n"
            "a rather long header 3  4.00\n"
            "a rather long header 4  5.00\n"
            "a rather long header 5  6.00\n"
            "a rather long header 6  7.00\n"
            "a rather long header 7  8.00\n"
            "  note: one note\n");
  // Two rows, or no width limit: the usual layout.
  EXPECT_NE(RenderConsoleTable(t, 60, 0).find("a rather long header 0  a rather"),
            std::string::npos);
  t.AddRow(row);
  EXPECT_NE(RenderConsoleTable(t).find("a rather long header 0  a rather"), std::string::npos);
}

TEST(TableTest, CsvQuotesAndKeepsFullPrecision) {
  Table t = Sample();
  t.AddRow({std::string("x"), int64_t{1}, 0.1 + 0.2});
  EXPECT_EQ(
      RenderCsv(t),
      "name,count,time_ms\n\"gemm, \"\"big\"\"\",3,1.5\n<copy>,10,\nx,1,0.30000000000000004\n");
}

TEST(TableTest, JsonRoundTrip) {
  Table t = Sample();
  t.AddNote("n1");
  nlohmann::json rows = TableRowsToJson(t);
  EXPECT_EQ(rows[0]["count"], 3);
  EXPECT_TRUE(rows[1]["time_ms"].is_null());
  Table back = TableFromJson(TableToJson(t));
  EXPECT_EQ(back.name(), "kernels");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(std::get<std::string>(back.rows()[0][0]), "gemm, \"big\"");
  EXPECT_EQ(std::get<int64_t>(back.rows()[1][1]), 10);
  EXPECT_EQ(back.notes().at(0), "n1");
}

TEST(TableTest, HtmlEscapesAndHasNoExternalReferences) {
  Table t = Sample();
  BarChart chart{"time", "ms", {{"a<b", 2.0}, {"c", 1.0}}};
  std::string page =
      RenderHtmlPage({"R & D", {{.heading = "Kernels", .charts = {chart}, .tables = {&t}}}});
  EXPECT_NE(page.find("<title>R &amp; D</title>"), std::string::npos);
  EXPECT_NE(page.find("&lt;copy&gt;"), std::string::npos);
  EXPECT_NE(page.find("width=\"420.0\""), std::string::npos);  // largest bar spans the plot
  EXPECT_NE(page.find("width=\"210.0\""), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
}

// A name of thousands of characters in a cell made its row hundreds of pixels tall: cells are
// cut as the console cuts them, with the whole text in the cell's title (shown on hover).
TEST(TableTest, HtmlCellsAreShortenedAsOnTheConsoleWithTheWholeTextOnHover) {
  Table t("kernels", "Kernels", {{"name", "kernel", 0}, {"op", "launched by", 0}});
  const std::string tail_a(200, 'a'), tail_b(200, 'b');
  const std::string long_a = "ck_tile::kentry<" + tail_a + ">::Kargs";
  const std::string long_b = "ck_tile::kentry<" + tail_b + ">::Kargs";
  t.AddRow({long_a, std::string("te_fused_attn")});
  t.AddRow({long_b, std::string("te_fused_attn")});
  const std::string html = RenderHtmlTable(t);
  const std::vector<std::string> shown = ShortenColumn({long_a, long_b}, kHtmlCellWidth);
  ASSERT_NE(shown[0], shown[1]);
  EXPECT_EQ(shown[0].size(), kHtmlCellWidth);
  EXPECT_NE(html.find("<td title=\"" + EscapeHtml(long_a) + "\">" + EscapeHtml(shown[0]) + "</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td title=\"" + EscapeHtml(long_b) + "\">" + EscapeHtml(shown[1]) + "</td>"),
            std::string::npos);
  // A short cell has no title.
  EXPECT_NE(html.find("<td class=\"s\">te_fused_attn</td>"), std::string::npos) << html;
  // A page's cell text (a kernel name without its parameter list) is what is cut; the title
  // keeps the text of the table.
  Table named("kernels", "Kernels", {{"name", "kernel", 0}});
  named.AddRow({std::string("void gemm<128>(float*, int)")});
  const auto without_parameters = [](const Column&, const std::string& text) {
    return text.substr(5, text.find('(') - 5);
  };
  EXPECT_NE(
      RenderHtmlTable(named, without_parameters)
          .find("<td class=\"s\" title=\"void gemm&lt;128&gt;(float*, int)\">gemm&lt;128&gt;</td>"),
      std::string::npos)
      << RenderHtmlTable(named, without_parameters);
  // The machine outputs keep every character.
  EXPECT_NE(TableToJson(t).dump().find(long_a), std::string::npos);
  // Prose (a warning) is read whole: it wraps, and keeps that through serialisation.
  Table warnings("warnings", "Warnings", {{"warning", "warning", 0, true}});
  const std::string sentence = "GPU activities are left out of the GPU timeline: " + tail_a;
  warnings.AddRow({sentence});
  const Table back = TableFromJson(TableToJson(warnings));
  ASSERT_TRUE(back.columns()[0].prose);
  EXPECT_NE(RenderHtmlTable(back).find("<td>" + sentence + "</td>"), std::string::npos);
}

TEST(TableTest, ABarChartDrawsEachBarInItsColour) {
  BarChart chart{"time", "ms", {{"GEMM", 2.0}, {"attention", 1.0}}, {"#4a78c2", "#c44e52"}};
  const std::string svg = RenderBarChartSvg(chart);
  EXPECT_NE(svg.find("class=\"b\" style=\"fill:#4a78c2\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("class=\"b\" style=\"fill:#c44e52\""), std::string::npos) << svg;
}

TEST(TableTest, APageOfThreeOrMoreSectionsOpensWithItsContents) {
  Table t = Sample();  // named "kernels"
  const std::string two = RenderHtmlPage({"T", {{.heading = "A"}, {.heading = "B"}}});
  EXPECT_EQ(two.find("<nav"), std::string::npos);
  const std::string three = RenderHtmlPage(
      {"T", {{.heading = "A", .tables = {&t}}, {.heading = "B"}, {.heading = "C & D"}}});
  const size_t nav = three.find("<nav class=\"toc\">");
  ASSERT_NE(nav, std::string::npos);
  EXPECT_LT(nav, three.find("<section"));
  EXPECT_NE(three.find("<a href=\"#section-3\">C &amp; D</a>"), std::string::npos);
  EXPECT_NE(three.find("<section id=\"section-3\">"), std::string::npos);
  // A table's entry links to its heading's id, the table's name.
  EXPECT_NE(three.find("<a href=\"#kernels\">"), std::string::npos);
  EXPECT_NE(three.find("<h3 id=\"kernels\">"), std::string::npos);
}

TEST(TableTest, AHistogramDrawsOneColumnPerBinScaledToTheTallest) {
  ColumnChart chart;
  chart.title = "short kernels";
  chart.x_unit = "us";
  chart.y_unit = "kernels";
  chart.start = 0;
  chart.end = 10;
  chart.columns = {4, 0, 2, 1};
  const std::string svg = RenderColumnChartSvg(chart);
  // Three non-empty bins (an empty one draws nothing); 4 bins over a 600 px plot: 150 px
  // apart; the tallest spans the 140 px plot, 2 of 4 half of it.
  size_t rects = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1))
    ++rects;
  EXPECT_EQ(rects, 3u);
  EXPECT_NE(svg.find("height=\"140.0\""), std::string::npos);
  EXPECT_NE(svg.find("height=\"70.0\""), std::string::npos);
  EXPECT_NE(svg.find("x=\"356.0\""), std::string::npos);  // bin 2: 56 + 2 x 150
  EXPECT_NE(svg.find("<title>5-7.5 us: 2 kernels</title>"), std::string::npos);
}

TEST(TableTest, HtmlPageDataCannotCloseItsScriptElement) {
  HtmlPage page("T");
  page.data = {{"name", "</script><!--<x>"}};
  page.script = "draw(DATA);";
  std::string html = RenderHtmlPage(page);
  // The data element and the script element: two closing tags, none from the data.
  size_t closes = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1))
    ++closes;
  EXPECT_EQ(closes, 2u);
  EXPECT_NE(html.find(R"({"name":"\u003c/script>\u003c!--\u003cx>"})"), std::string::npos);
  EXPECT_NE(html.find("<script>draw(DATA);</script></body>"), std::string::npos);
  EXPECT_NE(html.find("<div id=\"app\"></div>"), std::string::npos);
  // A table page has no script and no app element.
  EXPECT_EQ(RenderHtmlPage({"T"}).find("<div id=\"app\">"), std::string::npos);
}

// A CSV output is written whole or not at all: a failure part-way leaves neither a new
// directory nor a changed file, and no temporary directory behind.
TEST(TableTest, CsvOutputIsAllOrNothing) {
  const auto parent = std::filesystem::temp_directory_path() / "sextant_csv_atomic_test";
  std::filesystem::remove_all(parent);
  std::filesystem::create_directory(parent);
  const Table good = Sample();
  // Its file would go in a folder of the output that nothing makes: writing it fails after
  // kernels.csv is written.
  const Table unwritable("no_such_folder/x", "x", {{"a", "a", 0}});
  const auto out = parent / "out";
  EXPECT_THROW(WriteCsvDirectory({&good, &unwritable}, out.string()), UserError);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(std::filesystem::is_empty(parent)) << "a temporary directory is left behind";
  // Into an existing output: the earlier file is kept as it was.
  std::filesystem::create_directory(out);
  std::ofstream(out / "kernels.csv") << "earlier\n";
  EXPECT_THROW(WriteCsvDirectory({&good, &unwritable}, out.string()), UserError);
  std::ifstream in(out / "kernels.csv");
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_EQ(kept.str(), "earlier\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out),
                          std::filesystem::directory_iterator()),
            1);
  std::filesystem::remove_all(parent);
}

// Folders of an earlier run with more ranks, and files of an earlier run inside the folders
// this one writes, are named as well as top-level files.
TEST(TableTest, CsvOutputNamesEveryLeftoverFolderAndFile) {
  const auto dir = std::filesystem::temp_directory_path() / "sextant_csv_leftover_test";
  std::filesystem::remove_all(dir);
  const Table t = Sample();
  EXPECT_TRUE(
      WriteCsvFolders({{"", {&t}}, {"rank0", {&t}}, {"rank1", {&t}}, {"rank2", {&t}}}, dir.string())
          .empty());
  std::ofstream(dir / "rank0" / "old_table.csv") << "a\n1\n";
  std::filesystem::create_directory(dir / "notes");  // no CSV files: not this tool's
  const std::vector<std::string> leftover =
      WriteCsvFolders({{"", {&t}}, {"rank0", {&t}}, {"rank1", {&t}}}, dir.string());
  EXPECT_EQ(leftover, (std::vector<std::string>{"rank0/old_table.csv", "rank2/"}));
  EXPECT_TRUE(std::filesystem::exists(dir / "rank2" / "kernels.csv"));
  EXPECT_EQ(LeftoverCsvWarning("out", leftover),
            "out also holds 1 CSV file and 1 folder of CSV files this output did not write "
            "(rank0/old_table.csv, rank2/): they come from an earlier run, not from these inputs");
  // The single-report layout written over the per-rank one: every rank folder is named.
  EXPECT_EQ(WriteCsvDirectory({&t}, dir.string()),
            (std::vector<std::string>{"rank0/", "rank1/", "rank2/"}));
  std::filesystem::remove_all(dir);
}

TEST(TableTest, WritesCsvDirectoryAndWorkbook) {
  auto dir = std::filesystem::temp_directory_path() / "sextant_report_test";
  std::filesystem::remove_all(dir);
  Table t = Sample();
  EXPECT_TRUE(WriteCsvDirectory({&t}, dir.string()).empty());
  // A file of an earlier report that this one does not write is named, not deleted.
  std::ofstream(dir / "old_table.csv") << "a\n1\n";
  const std::vector<std::string> leftover = WriteCsvDirectory({&t}, dir.string());
  EXPECT_EQ(leftover, std::vector<std::string>{"old_table.csv"});
  EXPECT_TRUE(std::filesystem::exists(dir / "old_table.csv"));
  EXPECT_NE(LeftoverCsvWarning("out", leftover).find("out also holds 1 CSV file"),
            std::string::npos);
  EXPECT_EQ(LeftoverCsvWarning("out", {}), "");
  // The directory is made, not a chain of them: a missing parent is a mistyped path.
  EXPECT_THROW(WriteCsvDirectory({&t}, (dir / "missing" / "csv").string()), UserError);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  std::ifstream in(dir / "kernels.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), RenderCsv(t));
  auto xlsx = dir / "r.xlsx";
  WriteXlsx({&t, &t}, xlsx.string());
  std::ifstream book(xlsx, std::ios::binary);
  char magic[2] = {};
  book.read(magic, 2);
  EXPECT_EQ(std::string(magic, 2), "PK");  // xlsx is a zip container
  std::filesystem::remove_all(dir);
}

// A table of 2.5 MB is written in pieces: the file holds exactly what RenderCsv renders,
// every row once, quoting intact across the pieces' seams.
TEST(TableTest, ALargeTableIsWrittenInPiecesThatAddUp) {
  auto dir = std::filesystem::temp_directory_path() / "sextant_report_large_csv_test";
  std::filesystem::remove_all(dir);
  Table t("calls", "Calls", {{"name", "name", 0}, {"dims", "dims", 0}, {"us", "us", 3}});
  for (int i = 0; i < 60'000; ++i)
    t.AddRow({"kernel_" + std::to_string(i), "[[" + std::to_string(i) + ", 64], \"x\"]", i * 0.5});
  const std::string expected = RenderCsv(t);
  ASSERT_GT(expected.size(), 2u << 20);
  WriteCsvDirectory({&t}, dir.string());
  std::ifstream in(dir / "calls.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), expected);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sextant
