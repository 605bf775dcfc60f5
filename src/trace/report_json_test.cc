#include "trace/report_json.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "trace/trace_runner.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

std::string Streamed(const TraceReport& report) {
  std::string text;
  JsonStream out([&](std::string_view piece) { text += piece; });
  WriteReportJson(report, out);
  return text;
}

// Eight Kineto ranks with cross-rank tables, and an XPlane profile of two GPUs with its
// xla_activities rows: the text written row by row is what nlohmann prints of the same tree,
// each rank holds its own rows of every per-rank table, the tables over all ranks sit at the
// top.
TEST(ReportJsonTest, RowsGoUnderTheirRanksAsNlohmannWouldPrintThem) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  for (const std::vector<std::string>& files :
       {ExpandTraceDirectories({CorpusPath("traces/param/dlrm_kineto_8rank")}),
        std::vector<std::string>{
            CorpusPath("traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                       "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb")}}) {
    const TraceReport report = CombineReports(AnalyzeTraceFiles(files, ReportOptions{}, 2));
    const std::string text = Streamed(report);
    const nlohmann::json json = nlohmann::json::parse(text);
    EXPECT_EQ(json.dump(1), text) << files[0];
    ASSERT_EQ(json["ranks"].size(), report.ranks.size());
    for (const Table& table : report.tables) {
      if (table.name() == "ranks") continue;
      if (table.ColumnIndex("rank") < 0 || RowsAreRanks(table.name())) {
        EXPECT_EQ(json[table.name()].size(), table.size()) << table.name();
        continue;
      }
      // Under each rank, its own rows, in the table's order.
      const size_t column = static_cast<size_t>(table.ColumnIndex("rank"));
      std::map<int64_t, size_t> rows;
      for (const auto& row : table.rows()) ++rows[std::get<int64_t>(row[column])];
      const std::string key = table.name() == "iterations" ? "iteration_times" : table.name();
      if (table.name() == "launch" || table.name() == "iteration_stats") continue;
      for (const auto& rank : json["ranks"]) {
        ASSERT_TRUE(rank.contains(key)) << key;
        EXPECT_EQ(rank[key].size(), rows[rank["rank"].get<int64_t>()]) << key;
        for (const auto& row : rank[key]) EXPECT_EQ(row["rank"], rank["rank"]) << key;
      }
    }
    EXPECT_EQ(ReportToJson(report), json);
  }
}

}  // namespace
}  // namespace sextant
