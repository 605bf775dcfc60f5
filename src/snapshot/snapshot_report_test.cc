#include "snapshot/snapshot_report.h"

#include <fmt/format.h>
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

// With --compare, the page shows the console's summary of the two files (peak allocated and
// reserved, reserved at snapshot, cached free, fragmentation) and the call sites, per device.
TEST(SnapshotReportTest, HtmlShowsTheComparisonSummary) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
  SnapshotComparison c;
  c.base_source = "/runs/fp32.pickle";
  c.new_source = "/runs/bf16.pickle";
  DeviceComparison d;
  d.device = 0;
  d.new_device = 1;
  d.base_peak_bytes = 1 * kMiB;
  d.new_peak_bytes = 3 * kMiB;
  d.base_peak_reserved_bytes = 2 * kMiB;
  d.new_peak_reserved_bytes = 4 * kMiB;
  d.base_reserved_bytes = 2 * kMiB;
  d.new_reserved_bytes = 1 * kMiB;
  d.base_cached_free_bytes = 1 * kMiB;
  d.new_cached_free_bytes = 0;
  d.base_inactive_split_bytes = 512 * kKiB;
  d.new_inactive_split_bytes = 512 * kKiB;
  d.sites_at_peak.push_back({"einsum (model.py:3)", 0, 2 * kMiB, 0, 1});
  c.devices.push_back(d);
  const std::string html = SnapshotHtml(s, a, &c);
  auto row = [](std::vector<std::string> cells) {
    std::string out = "<tr>";
    for (const auto& cell : cells) out += "<td class=\"s\">" + cell + "</td>";
    return out + "</tr>";
  };
  EXPECT_NE(html.find("<h2>Comparison: bf16.pickle vs base fp32.pickle (Device 0 (base) vs "
                      "device 1 (new))</h2>"),
            std::string::npos)
      << html.substr(0, 3000);
  for (const auto& expected : {row({"peak allocated", "1.0 MiB", "3.0 MiB", "+2.0 MiB"}),
                               row({"peak reserved", "2.0 MiB", "4.0 MiB", "+2.0 MiB"}),
                               row({"reserved at snapshot", "2.0 MiB", "1.0 MiB", "-1.0 MiB"}),
                               row({"cached free", "1.0 MiB", "0 B", "-1.0 MiB"}),
                               row({"  of it fragmentation", "512.0 KiB", "512.0 KiB", "0 B"}),
                               row({"0 B", "2.0 MiB", "+2.0 MiB", "einsum (model.py:3)"})}) {
    EXPECT_NE(html.find(expected), std::string::npos) << expected;
  }
  // The numbers stay in the page's data too.
  EXPECT_NE(html.find("\"new_peak_allocated_bytes\":3145728"), std::string::npos);
  // Without the new file's analysis the chart has the base file's lines only.
  EXPECT_EQ(html.find("\"compare_timeline\""), std::string::npos);
}

// With the new file's analysis, each paired device's chart gets its allocated and reserved
// lines too: here the fixture is compared with itself, device 0 with device 0, and the page
// carries that device's timeline a second time, under the new file's name.
TEST(SnapshotReportTest, HtmlDrawsTheComparedFilesTimelines) {
  MemorySnapshot s = LoadMemorySnapshot(Fixture("two_devices_oom.pickle"));
  SnapshotAnalysis a = AnalyzeSnapshot(s);
  ASSERT_GE(a.devices.size(), 1u);
  ASSERT_GT(a.devices[0].timeline.size(), 1u);
  SnapshotComparison c;
  c.base_source = "/runs/fp32.pickle";
  c.new_source = "/runs/bf16.pickle";
  DeviceComparison d;
  d.device = a.devices[0].device;
  d.new_device = a.devices[0].device;
  c.devices.push_back(d);
  const std::string html = SnapshotHtml(s, a, &c, SnapshotReportOptions{}, &a);
  EXPECT_NE(html.find("\"compare_name\":\"bf16.pickle\""), std::string::npos);
  const TimelinePoint& first = a.devices[0].timeline.front();
  EXPECT_NE(html.find(fmt::format("\"compare_timeline\":[[{},{},{},{}]", first.entry_index,
                                  first.time_us, first.allocated_bytes, first.reserved_bytes)),
            std::string::npos);
  EXPECT_NE(html.find("'allocated, ' + DATA.compare_name"), std::string::npos);
}

}  // namespace
}  // namespace sextant
