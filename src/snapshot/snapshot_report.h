// Renderings of a snapshot analysis: console tables, JSON (SPEC section 1.3 keys plus more),
// and one self-contained HTML page with an interactive timeline (inline SVG and script, no
// network access).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "snapshot/active_timeline.h"
#include "snapshot/snapshot_analysis.h"
#include "snapshot/snapshot_compare.h"

namespace sextant {

struct SnapshotReportOptions {
  size_t top_sites = 10;       // call sites listed per device
  size_t top_segments = 5;     // segments with the most free space
  size_t max_points = 4000;    // timeline points kept in JSON/HTML (min and max per bucket)
  size_t active_bands = 3000;  // allocations drawn as bands of their own (active_timeline.h)
  size_t active_offset_changes = 40000;  // bound on the bands' drops, all bands together
};

std::string SnapshotText(const MemorySnapshot& snapshot, const SnapshotAnalysis& analysis,
                         const SnapshotReportOptions& options = {});
nlohmann::json SnapshotJson(const MemorySnapshot& snapshot, const SnapshotAnalysis& analysis,
                            const SnapshotReportOptions& options = {});

std::string ComparisonText(const SnapshotComparison& comparison,
                           const SnapshotReportOptions& options = {});
nlohmann::json ComparisonJson(const SnapshotComparison& comparison,
                              const SnapshotReportOptions& options = {});

// The `active_timeline` key of a device: the bands of BuildActiveTimeline as compact arrays
// (docs/memory.md), their stacks and frames, and the merged bytes at the timeline points that
// DownsampleTimeline keeps.
nlohmann::json ActiveTimelineJson(const MemorySnapshot& snapshot, const DeviceAnalysis& device,
                                  const SnapshotReportOptions& options = {});

// `comparison` may be null. `compared`, the new file's analysis when there is a comparison,
// adds its allocated and reserved lines to each paired device's chart.
std::string SnapshotHtml(const MemorySnapshot& snapshot, const SnapshotAnalysis& analysis,
                         const SnapshotComparison* comparison,
                         const SnapshotReportOptions& options = {},
                         const SnapshotAnalysis* compared = nullptr);

// Keeps the first and last points and, per bucket, the points with the lowest and highest
// allocated bytes, so a plot of the result still shows every peak.
std::vector<TimelinePoint> DownsampleTimeline(const std::vector<TimelinePoint>& points,
                                              size_t max_points);

}  // namespace sextant
