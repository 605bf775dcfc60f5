#include "snapshot/watch_report.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

WatchResult TwoSamples() {
  WatchResult r;
  r.command = {"python", "train.py"};
  r.source = "sysfs:/sys/class/drm";
  r.interval_ms = 100;
  r.exit_status = 0;
  r.wall_ms = 150;
  r.samples.push_back({0, {0, 1000, 4000, 20}});
  r.samples.push_back({0, {1, 500, 4000, -1}});
  r.samples.push_back({100, {0, 3000, 4000, 60}});
  r.samples.push_back({100, {1, 700, 4000, -1}});
  return r;
}

TEST(WatchReportTest, CsvHasOneRowPerGpuPerSample) {
  EXPECT_EQ(WatchCsv(TwoSamples()),
            "elapsed_ms,gpu,memory_used_bytes,memory_total_bytes,utilization_percent\n"
            "0,0,1000,4000,20\n0,1,500,4000,\n100,0,3000,4000,60\n100,1,700,4000,\n");
}

TEST(WatchReportTest, JsonSummarisesPerGpu) {
  nlohmann::json j = WatchJson(TwoSamples());
  EXPECT_EQ(j["samples"].size(), 4u);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["peak_memory_used_bytes"], 3000);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["mean_utilization_percent"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["max_utilization_percent"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(j["gpus"][1]["mean_utilization_percent"].get<double>(), -1.0);
  EXPECT_EQ(j["exit_status"], 0);
}

TEST(WatchReportTest, FormatFromExtension) {
  EXPECT_EQ(WatchFormatForPath("a.csv"), WatchOutputFormat::kCsv);
  EXPECT_EQ(WatchFormatForPath("a.json"), WatchOutputFormat::kJson);
  EXPECT_EQ(WatchFormatForPath("a.html"), WatchOutputFormat::kHtml);
  EXPECT_THROW(WatchFormatForPath("a.txt"), UserError);
  std::string html = RenderWatch(TwoSamples(), WatchOutputFormat::kHtml);
  EXPECT_NE(html.find("\"memory_used_bytes\":3000"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

// The page is named after the command it watched (every page was "GPU memory watch"), a long
// command line cut as a table cell is.
TEST(WatchReportTest, PageTitleNamesTheCommand) {
  EXPECT_NE(WatchHtml(TwoSamples()).find("<title>GPU memory watch: python train.py</title>"),
            std::string::npos);
  WatchResult long_command = TwoSamples();
  long_command.command.push_back("--data=" + std::string(300, 'x'));
  const std::string html = WatchHtml(long_command);
  const size_t start = html.find("<title>"), end = html.find("</title>");
  ASSERT_NE(start, std::string::npos);
  const std::string title = html.substr(start + 7, end - start - 7);
  EXPECT_EQ(title.rfind("GPU memory watch: python train.py --data=xxx", 0), 0u) << title;
  EXPECT_LT(title.size(), 160u) << title;
}

TEST(WatchReportTest, SummaryText) {
  std::string text = WatchSummaryText(TwoSamples());
  EXPECT_NE(text.find("    0      2.9 KiB      3.9 KiB      40.0%        60%"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    1        700 B      3.9 KiB          -          -"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace sextant
