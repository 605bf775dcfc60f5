#include "snapshot/snapshot_report.h"

#include <gtest/gtest.h>

#include "report/html_writer.h"

namespace sextant {
namespace {

std::string Fixture(const char* name) {
  return std::string(SEXTANT_SOURCE_DIR) + "/tests/data/snapshot/" + name;
}

TEST(SnapshotReportTest, JsonHasTheSpecKeys) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  nlohmann::json j = SnapshotJson(s, a);
  ASSERT_EQ(j["devices"].size(), 2u);
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["device"], 0);
  EXPECT_EQ(d["peak_allocated_bytes"], 5900000);
  EXPECT_EQ(d["peak_reserved_bytes"], 9437184);
  EXPECT_EQ(d["peak_time_us"], 1700);
  EXPECT_EQ(d["cached_free_bytes"], 3670016);
  ASSERT_EQ(d["top_allocations_at_peak"].size(), 5u);
  EXPECT_EQ(d["top_allocations_at_peak"][0]["size"], 2000000);
  // The call site first, as the "site" label names it.
  EXPECT_EQ(d["top_allocations_at_peak"][0]["frames"][0]["filename"], "/home/u/proj/model.py");
  EXPECT_EQ(d["top_allocations_at_peak"][0]["frames"][0]["line"], 20);
  EXPECT_EQ(d["ooms"][0]["largest_free_block_bytes"], 2097152);
}

TEST(SnapshotReportTest, TextNamesPeakStateAndOom) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  std::string text = SnapshotText(s, AnalyzeSnapshot(s));
  EXPECT_NE(
      text.find("peak allocated                5.6 MiB  of requested sizes, at entry 7 (+0.001 s)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("OOM at entry 9 (+0.001 s): requested 8.0 MiB, driver reported 1.0 MiB free"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("forward (proj/model.py:20)"), std::string::npos);
  // Its peak reserved (9 MiB) is above the allocated peak: no remark about segment events.
  EXPECT_EQ(text.find("no segment events"), std::string::npos);
  // Where replay leaves reserved below allocated (no segment events), the text says why.
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  a.devices[0].peak_reserved_bytes = a.devices[0].peak_allocated_bytes / 2;
  EXPECT_NE(SnapshotText(s, a).find("the trace records no segment events"), std::string::npos);
}

TEST(SnapshotReportTest, DownsamplingKeepsThePeakAndEnds) {
  std::vector<TimelinePoint> points;
  for (int i = 0; i < 10000; ++i) points.push_back({i, i, (i * 7919) % 1000, 0});
  points[5001].allocated_bytes = 5000;
  auto kept = DownsampleTimeline(points, 100);
  EXPECT_LE(kept.size(), 100u);
  EXPECT_EQ(kept.front().entry_index, 0);
  EXPECT_EQ(kept.back().entry_index, 9999);
  bool has_peak = false;
  for (const auto& p : kept) has_peak |= p.entry_index == 5001;
  EXPECT_TRUE(has_peak);
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_LT(kept[i - 1].entry_index, kept[i].entry_index);
}

TEST(SnapshotReportTest, HtmlIsSelfContainedAndEscapesData) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  s.frames[0].name = "</script><script>alert(1)</script>";
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  std::string html = SnapshotHtml(s, a, nullptr);
  // Nothing is fetched: no external script, stylesheet, import or request.
  for (const char* remote : {"https://", "<script src", "<link", "import ", "fetch("}) {
    EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  }
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(html.find("\"peak_allocated_bytes\":5900000"), std::string::npos);
  EXPECT_NE(html.find("function lineChart"), std::string::npos);
  EXPECT_EQ(EscapeHtml("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
}

}  // namespace
}  // namespace sextant
