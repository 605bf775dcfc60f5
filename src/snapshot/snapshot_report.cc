#include "snapshot/snapshot_report.h"

#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "report/html_writer.h"
#include "snapshot/call_site.h"
#include "snapshot/page_scripts.h"
#include "util/units.h"

namespace sextant {
namespace {

// "1 segment", "3 segments".
template <typename N>
std::string Counted(N n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

using nlohmann::json;

std::string SignedBytes(int64_t bytes) {
  return bytes > 0 ? "+" + FormatBytes(bytes) : FormatBytes(bytes);
}

// "Device 0", or "Device 0 (base) vs device 1 (new)" when each file held another device.
std::string ComparisonHeading(const DeviceComparison& d) {
  return d.new_device == d.device
             ? fmt::format("Device {}", d.device)
             : fmt::format("Device {} (base) vs device {} (new)", d.device, d.new_device);
}

// The summary rows of one device's comparison, as the console and the HTML page show them:
// label, base, new, change.
std::vector<std::array<std::string, 4>> ComparisonSummaryRows(const DeviceComparison& d) {
  std::vector<std::array<std::string, 4>> rows;
  auto row = [&](const char* label, int64_t b, int64_t n) {
    rows.push_back({label, FormatBytes(b), FormatBytes(n), SignedBytes(n - b)});
  };
  row("peak allocated", d.base_peak_bytes, d.new_peak_bytes);
  row("peak reserved", d.base_peak_reserved_bytes, d.new_peak_reserved_bytes);
  row("reserved at snapshot", d.base_reserved_bytes, d.new_reserved_bytes);
  row("cached free", d.base_cached_free_bytes, d.new_cached_free_bytes);
  row("  of it fragmentation", d.base_inactive_split_bytes, d.new_inactive_split_bytes);
  return rows;
}

// Seconds since the first timestamped entry, or the entry index when there are no timestamps.
std::string WhenText(const DeviceAnalysis& d, int64_t index, int64_t time_us) {
  if (index < 0) return "before the first trace entry";
  if (d.has_timestamps && time_us >= 0 && d.timeline.size() > 1 && d.timeline[1].time_us >= 0) {
    return fmt::format("at entry {} (+{:.3f} s)", index,
                       static_cast<double>(time_us - d.timeline[1].time_us) / 1e6);
  }
  return fmt::format("at entry {}", index);
}

json FramesJson(const MemorySnapshot& s, const std::vector<FrameId>& frames) {
  json out = json::array();
  for (FrameId id : frames) {
    const StackFrame& f = s.frames[id];
    out.push_back({{"name", f.name}, {"filename", f.filename}, {"line", f.line}});
  }
  return out;
}

json SitesJson(const MemorySnapshot& s, const std::vector<CallSiteTotal>& sites, size_t top) {
  json out = json::array();
  for (size_t i = 0; i < sites.size() && i < top; ++i) {
    out.push_back({{"size", sites[i].bytes},
                   {"count", sites[i].count},
                   {"site", sites[i].site},
                   {"frames", FramesJson(s, sites[i].frames)}});
  }
  return out;
}

// The call sites past the first `top`, summed: what the listed ones leave out of the total.
json OtherSitesJson(const std::vector<CallSiteTotal>& sites, size_t top) {
  int64_t bytes = 0, count = 0;
  for (size_t i = top; i < sites.size(); ++i) bytes += sites[i].bytes, count += sites[i].count;
  return {
      {"sites", sites.size() > top ? sites.size() - top : 0}, {"size", bytes}, {"count", count}};
}

void SitesTable(std::string& out, const std::vector<CallSiteTotal>& sites, int64_t total,
                size_t top) {
  out += fmt::format("  {:>11}  {:>6}  {:>6}  {}\n", "bytes", "share", "count", "call site");
  for (size_t i = 0; i < sites.size() && i < top; ++i) {
    double share = total > 0 ? 100.0 * static_cast<double>(sites[i].bytes) / total : 0.0;
    out += fmt::format("  {:>11}  {:>5.1f}%  {:>6}  {}\n", FormatBytes(sites[i].bytes), share,
                       sites[i].count, sites[i].site);
  }
  if (sites.size() > top) {
    int64_t rest = 0, count = 0;
    for (size_t i = top; i < sites.size(); ++i) rest += sites[i].bytes, count += sites[i].count;
    out += fmt::format("  {:>11}  {:>5.1f}%  {:>6}  ({} more call sites)\n", FormatBytes(rest),
                       total > 0 ? 100.0 * static_cast<double>(rest) / total : 0.0, count,
                       sites.size() - top);
  }
}

// Band stacks are interned per (stack, known only from its free) pair, frames per frame.
class StackTable {
 public:
  explicit StackTable(const MemorySnapshot& s) : s_(s) {}
  size_t Index(StackId stack, bool of_free) {
    auto [it, inserted] = index_.emplace(std::make_pair(stack, of_free), stacks_.size());
    if (inserted) {
      // From the call-site frame outwards: the frames inside it are allocator and dispatch
      // plumbing, counted in `inner_frames`.
      std::vector<FrameId> visible = VisibleFrames(s_, stack, kMaxVisibleFrames);
      auto site = std::find(visible.begin(), visible.end(), CallSiteFrame(s_, stack));
      if (site == visible.end()) site = visible.begin();
      json frames = json::array();
      for (auto f = site; f != visible.end() && frames.size() < kBandFrames; ++f) {
        frames.push_back(Frame(*f));
      }
      stacks_.push_back(
          {{"site", of_free ? "<allocated before recording began>" : CallSiteLabel(s_, stack)},
           {"of_free", of_free},
           {"inner_frames", site - visible.begin()},
           {"frames", std::move(frames)}});
    }
    return it->second;
  }
  json TakeStacks() { return std::move(stacks_); }
  json TakeFrames() { return std::move(frames_); }

 private:
  static constexpr size_t kBandFrames = 12;
  static constexpr size_t kMaxVisibleFrames = 256;
  size_t Frame(FrameId id) {
    auto [it, inserted] = frame_index_.emplace(id, frames_.size());
    if (inserted) {
      const StackFrame& f = s_.frames[id];
      frames_.push_back({f.name, f.filename, f.line});
    }
    return it->second;
  }
  const MemorySnapshot& s_;
  std::map<std::pair<StackId, bool>, size_t> index_;
  std::map<FrameId, size_t> frame_index_;
  json stacks_ = json::array();
  json frames_ = json::array();
};

}  // namespace

json ActiveTimelineJson(const MemorySnapshot& s, const DeviceAnalysis& d,
                        const SnapshotReportOptions& o) {
  ActiveTimeline t = BuildActiveTimeline(
      s, d, {.max_bands = o.active_bands, .max_offset_changes = o.active_offset_changes});
  static const std::vector<TraceEntry> kNoEntries;
  const auto& trace = d.device >= 0 && d.device < static_cast<int64_t>(s.device_traces.size())
                          ? s.device_traces[d.device]
                          : kNoEntries;
  // Times in microseconds since the first trace entry, as the page plots them; -1: none.
  const int64_t t0 = trace.empty() ? -1 : trace.front().time_us;
  auto time_of = [&](int64_t entry) -> int64_t {
    if (t0 < 0 || entry < 0 || entry >= static_cast<int64_t>(trace.size())) return -1;
    return trace[entry].time_us >= t0 ? trace[entry].time_us - t0 : -1;
  };
  StackTable stacks(s);
  json bands = json::array();
  for (const ActiveBand& b : t.bands) {
    // The offset at allocation, then the entries where the band drops: each by the size of
    // the band freed at that entry.
    json offsets = json::array({b.offsets.front().offset_bytes});
    for (size_t i = 1; i < b.offsets.size(); ++i) offsets.push_back(b.offsets[i].entry_index);
    bands.push_back({b.address, b.size, stacks.Index(b.stack, b.before_trace), b.alloc_entry,
                     time_of(b.alloc_entry), b.free_entry, time_of(b.free_entry),
                     std::move(offsets)});
  }
  json merged = json::array();
  for (const TimelinePoint& p : DownsampleTimeline(d.timeline, o.max_points)) {
    merged.push_back({p.entry_index, t.merged_bytes[static_cast<size_t>(p.entry_index + 1)]});
  }
  return {
      {"allocations", t.allocations},
      {"bands_drawn", t.bands.size()},
      {"merged_allocations", t.merged_allocations},
      {"smallest_drawn_bytes", t.smallest_drawn_bytes},
      {"largest_merged_bytes", t.largest_merged_bytes},
      {"t0_us", t0},
      {"band_columns",
       {"address", "size", "stack", "alloc_entry", "alloc_us", "free_entry", "free_us", "offsets"}},
      {"bands", std::move(bands)},
      {"stacks", stacks.TakeStacks()},
      {"frames", stacks.TakeFrames()},
      {"merged", std::move(merged)}};
}

std::vector<TimelinePoint> DownsampleTimeline(const std::vector<TimelinePoint>& points,
                                              size_t max_points) {
  if (points.size() <= max_points || max_points < 4) return points;
  size_t buckets = (max_points - 2) / 2;
  size_t per = (points.size() - 2 + buckets - 1) / buckets;
  std::vector<TimelinePoint> out;
  out.reserve(max_points);
  out.push_back(points.front());
  for (size_t start = 1; start + 1 < points.size(); start += per) {
    size_t end = std::min(start + per, points.size() - 1);
    size_t lo = start, hi = start;
    for (size_t i = start; i < end; ++i) {
      if (points[i].allocated_bytes < points[lo].allocated_bytes) lo = i;
      if (points[i].allocated_bytes > points[hi].allocated_bytes) hi = i;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  }
  out.push_back(points.back());
  return out;
}

std::string SnapshotText(const MemorySnapshot& s, const SnapshotAnalysis& a,
                         const SnapshotReportOptions& o) {
  std::string out = fmt::format("Memory snapshot {}{}\n", a.source,
                                a.legacy_schema ? " (PyTorch 2.0-era schema: block history)" : "");
  if (a.devices.empty()) out += "  no segments and no trace entries: nothing to analyse\n";
  for (const auto& d : a.devices) {
    out += fmt::format("\nDevice {}: {}", d.device,
                       Counted(d.trace_entries, "trace entry", "trace entries"));
    std::string actions;
    for (size_t i = 0; i < d.action_counts.size(); ++i) {
      if (d.action_counts[i] == 0) continue;
      if (!actions.empty()) actions += ", ";
      actions +=
          fmt::format("{} {}", TraceActionName(static_cast<TraceAction>(i)), d.action_counts[i]);
    }
    out += actions.empty() ? "\n" : " (" + actions + ")\n";
    out += fmt::format("  {:<26}{:>11}  of requested sizes, {}\n", "peak allocated",
                       FormatBytes(d.peak_allocated_bytes),
                       WhenText(d, d.peak_entry_index, d.peak_time_us));
    // Without segment events (expandable segments map memory without them) the reserved
    // level is known at snapshot time only, and can read below what was allocated.
    out += fmt::format("  {:<26}{:>11}{}\n", "peak reserved", FormatBytes(d.peak_reserved_bytes),
                       d.peak_reserved_bytes < d.peak_allocated_bytes
                           ? "  (below the allocated peak: the trace records no segment events, "
                             "so reserved memory is known only at snapshot time)"
                           : "");
    out += fmt::format("  {:<26}{:>11}  ({} made before recording began)\n",
                       "allocated at trace start", FormatBytes(d.initial_allocated_bytes),
                       Counted(d.allocations_before_trace, "allocation", "allocations"));
    out += "At snapshot time\n";
    out += fmt::format("  {:<26}{:>11}  in {} ({} large, {} small)\n", "reserved",
                       FormatBytes(d.reserved_bytes), Counted(d.segments, "segment", "segments"),
                       d.large_segments, d.small_segments);
    out += fmt::format(
        "  {:<26}{:>11}  in {} blocks (rounded block sizes); requested {}, pending free {}\n",
        "allocated", FormatBytes(d.allocated_bytes), d.active_blocks,
        FormatBytes(d.requested_bytes), FormatBytes(d.pending_free_bytes));
    out += fmt::format("  {:<26}{:>11}  (reserved - allocated, in {} free blocks)\n", "cached free",
                       FormatBytes(d.cached_free_bytes), d.blocks - d.active_blocks);
    out += fmt::format(
        "  {:<26}{:>11}  (free space in segments still in use: empty_cache() cannot return it)\n",
        "  of it fragmentation", FormatBytes(d.inactive_split_bytes));
    out += fmt::format("  {:<26}{:>11}\n", "largest free block",
                       FormatBytes(d.largest_free_block_bytes));
    if (d.replay_mismatch_bytes != 0) {
      out += fmt::format(
          "  note: replaying the trace ends {} away from the recorded state; the file is not "
          "self-consistent\n",
          SignedBytes(d.replay_mismatch_bytes));
    }
    out += fmt::format("Call sites alive at the peak ({})\n",
                       Counted(d.alive_at_peak.size(), "allocation", "allocations"));
    SitesTable(out, d.sites_at_peak, d.peak_allocated_bytes, o.top_sites);
    if (!d.segment_summaries.empty()) {
      out += "Segments with the most free space\n";
      out += fmt::format("  {:>16}  {:>11}  {:>11}  {:>11}  {:>11}  {:>6}  {:<5}  {}\n", "address",
                         "size", "allocated", "free", "largest free", "blocks", "type", "stream");
      for (size_t i = 0; i < d.segment_summaries.size() && i < o.top_segments; ++i) {
        const auto& g = d.segment_summaries[i];
        out += fmt::format("  {:>#16x}  {:>11}  {:>11}  {:>11}  {:>11}  {:>6}  {:<5}  {}\n",
                           g.address, FormatBytes(g.total_size), FormatBytes(g.allocated_bytes),
                           FormatBytes(g.free_bytes), FormatBytes(g.largest_free_bytes), g.blocks,
                           g.segment_type.empty() ? "-" : g.segment_type, g.stream);
      }
    }
    for (const auto& oom : d.ooms) {
      out += fmt::format(
          "OOM {}: requested {}, driver reported {} free; allocated {}, reserved {}, largest "
          "free cached block {}\n  from {}\n",
          WhenText(d, oom.entry_index, oom.time_us), FormatBytes(oom.requested_bytes),
          oom.device_free_bytes >= 0 ? FormatBytes(oom.device_free_bytes) : "?",
          FormatBytes(oom.allocated_bytes), FormatBytes(oom.reserved_bytes),
          oom.largest_free_block_bytes >= 0 ? FormatBytes(oom.largest_free_block_bytes) : "?",
          CallSiteLabel(s, oom.stack));
    }
  }
  return out;
}

json SnapshotJson(const MemorySnapshot& s, const SnapshotAnalysis& a,
                  const SnapshotReportOptions& o) {
  json devices = json::array();
  for (const auto& d : a.devices) {
    json actions = json::object();
    for (size_t i = 0; i < d.action_counts.size(); ++i) {
      if (d.action_counts[i])
        actions[TraceActionName(static_cast<TraceAction>(i))] = d.action_counts[i];
    }
    json segments = json::array();
    for (size_t i = 0; i < d.segment_summaries.size() && i < o.top_segments; ++i) {
      const auto& g = d.segment_summaries[i];
      segments.push_back({{"address", g.address},
                          {"total_size", g.total_size},
                          {"allocated_bytes", g.allocated_bytes},
                          {"free_bytes", g.free_bytes},
                          {"largest_free_bytes", g.largest_free_bytes},
                          {"blocks", g.blocks},
                          {"segment_type", g.segment_type},
                          {"stream", g.stream},
                          {"is_expandable", g.is_expandable}});
    }
    json ooms = json::array();
    for (const auto& oom : d.ooms) {
      ooms.push_back({{"entry_index", oom.entry_index},
                      {"time_us", oom.time_us},
                      {"requested_bytes", oom.requested_bytes},
                      {"device_free_bytes", oom.device_free_bytes},
                      {"allocated_bytes", oom.allocated_bytes},
                      {"reserved_bytes", oom.reserved_bytes},
                      {"largest_free_block_bytes", oom.largest_free_block_bytes},
                      {"site", CallSiteLabel(s, oom.stack)},
                      {"frames", FramesJson(s, VisibleFrames(s, oom.stack, 8))}});
    }
    devices.push_back({
        {"device", d.device},
        {"peak_allocated_bytes", d.peak_allocated_bytes},
        {"peak_reserved_bytes", d.peak_reserved_bytes},
        {"peak_time_us", d.peak_time_us},
        {"peak_entry_index", d.peak_entry_index},
        {"top_allocations_at_peak", SitesJson(s, d.sites_at_peak, o.top_sites)},
        {"other_allocations_at_peak", OtherSitesJson(d.sites_at_peak, o.top_sites)},
        {"cached_free_bytes", d.cached_free_bytes},
        {"inactive_split_bytes", d.inactive_split_bytes},
        {"active_blocks", d.active_blocks},
        {"reserved_bytes", d.reserved_bytes},
        {"allocated_bytes", d.allocated_bytes},
        {"requested_bytes", d.requested_bytes},
        {"pending_free_bytes", d.pending_free_bytes},
        {"largest_free_block_bytes", d.largest_free_block_bytes},
        {"segments", d.segments},
        {"blocks", d.blocks},
        {"trace_entries", d.trace_entries},
        {"actions", actions},
        {"initial_allocated_bytes", d.initial_allocated_bytes},
        {"allocations_before_trace", d.allocations_before_trace},
        {"replay_mismatch_bytes", d.replay_mismatch_bytes},
        {"segments_most_free", segments},
        {"top_allocations_at_snapshot", SitesJson(s, d.sites_at_snapshot, o.top_sites)},
        {"ooms", ooms},
        {"active_timeline", ActiveTimelineJson(s, d, o)},
    });
  }
  return {{"source", a.source},
          {"schema", a.legacy_schema ? "legacy" : "current"},
          {"devices", devices}};
}

std::string ComparisonText(const SnapshotComparison& c, const SnapshotReportOptions& o) {
  std::string out =
      fmt::format("Comparison: base {}\n            new  {}\n", c.base_source, c.new_source);
  for (const auto& d : c.devices) {
    out += fmt::format("\n{}\n  {:<22}{:>11}  {:>11}  {:>12}\n", ComparisonHeading(d), "", "base",
                       "new", "change");
    for (const auto& [label, b, n, change] : ComparisonSummaryRows(d)) {
      out += fmt::format("  {:<22}{:>11}  {:>11}  {:>12}\n", label, b, n, change);
    }
    out += "Call sites at the peak, largest change first\n";
    out += fmt::format("  {:>11}  {:>11}  {:>12}  {}\n", "base", "new", "change", "call site");
    for (size_t i = 0; i < d.sites_at_peak.size() && i < o.top_sites; ++i) {
      const auto& x = d.sites_at_peak[i];
      out += fmt::format("  {:>11}  {:>11}  {:>12}  {}\n", FormatBytes(x.base_bytes),
                         FormatBytes(x.new_bytes), SignedBytes(x.delta_bytes()), x.site);
    }
  }
  return out;
}

json ComparisonJson(const SnapshotComparison& c, const SnapshotReportOptions& o) {
  json devices = json::array();
  for (const auto& d : c.devices) {
    json sites = json::array();
    for (size_t i = 0; i < d.sites_at_peak.size() && i < o.top_sites; ++i) {
      const auto& x = d.sites_at_peak[i];
      sites.push_back({{"site", x.site},
                       {"base_bytes", x.base_bytes},
                       {"new_bytes", x.new_bytes},
                       {"delta_bytes", x.delta_bytes()},
                       {"base_count", x.base_count},
                       {"new_count", x.new_count}});
    }
    devices.push_back({{"device", d.device},
                       {"new_device", d.new_device},
                       {"base_peak_allocated_bytes", d.base_peak_bytes},
                       {"new_peak_allocated_bytes", d.new_peak_bytes},
                       {"base_peak_reserved_bytes", d.base_peak_reserved_bytes},
                       {"new_peak_reserved_bytes", d.new_peak_reserved_bytes},
                       {"base_reserved_bytes", d.base_reserved_bytes},
                       {"new_reserved_bytes", d.new_reserved_bytes},
                       {"base_cached_free_bytes", d.base_cached_free_bytes},
                       {"base_inactive_split_bytes", d.base_inactive_split_bytes},
                       {"new_inactive_split_bytes", d.new_inactive_split_bytes},
                       {"new_cached_free_bytes", d.new_cached_free_bytes},
                       {"sites_at_peak", sites}});
  }
  return {{"base", c.base_source}, {"new", c.new_source}, {"devices", devices}};
}

std::string SnapshotHtml(const MemorySnapshot& s, const SnapshotAnalysis& a,
                         const SnapshotComparison* c, const SnapshotReportOptions& o,
                         const SnapshotAnalysis* compared) {
  json data = SnapshotJson(s, a, o);
  const auto points_of = [&](const DeviceAnalysis& device) {
    json points = json::array();
    for (const auto& p : DownsampleTimeline(device.timeline, o.max_points)) {
      points.push_back({p.entry_index, p.time_us, p.allocated_bytes, p.reserved_bytes});
    }
    return points;
  };
  for (size_t i = 0; i < a.devices.size(); ++i) {
    data["devices"][i]["timeline"] = points_of(a.devices[i]);
    if (c == nullptr || compared == nullptr) continue;
    // The new file's device paired with this one (by id, or the only one of each file).
    for (const auto& pair : c->devices) {
      if (pair.device != a.devices[i].device) continue;
      for (const auto& other : compared->devices) {
        if (other.device == pair.new_device && other.timeline.size() > 1) {
          data["devices"][i]["compare_timeline"] = points_of(other);
        }
      }
    }
  }
  if (c != nullptr && compared != nullptr) {
    data["compare_name"] = std::filesystem::path(c->new_source).filename().string();
  }
  HtmlPage page = ChartPage("Memory snapshot: " + a.source, data, kSnapshotPageScript);
  // The comparison is what --compare asks for: it opens the page, in the console's tables,
  // before the base file's own timelines.
  std::deque<Table> tables;
  if (c) {
    page.data["comparison"] = ComparisonJson(*c, o);
    const auto name = [](const std::string& p) {
      return std::filesystem::path(p).filename().string();
    };
    for (const auto& d : c->devices) {
      HtmlSection section{fmt::format("Comparison: {} vs base {} ({})", name(c->new_source),
                                      name(c->base_source), ComparisonHeading(d))};
      const std::string id = fmt::format("comparison_device{}", d.device);
      Table& summary = tables.emplace_back(id, "Memory, base vs new",
                                           std::vector<Column>{{"quantity", "", 0},
                                                               {"base", "base", 0},
                                                               {"new", "new", 0},
                                                               {"change", "change", 0}});
      for (const auto& [label, b, n, change] : ComparisonSummaryRows(d)) {
        summary.AddRow({label, b, n, change});
      }
      Table& sites =
          tables.emplace_back(id + "_sites", "Call sites at the peak, largest change first",
                              std::vector<Column>{{"base", "base", 0},
                                                  {"new", "new", 0},
                                                  {"change", "change", 0},
                                                  {"site", "call site", 0}});
      for (size_t i = 0; i < d.sites_at_peak.size() && i < o.top_sites; ++i) {
        const auto& x = d.sites_at_peak[i];
        sites.AddRow({FormatBytes(x.base_bytes), FormatBytes(x.new_bytes),
                      SignedBytes(x.delta_bytes()), x.site});
      }
      section.tables = {&summary, &sites};
      page.sections.push_back(std::move(section));
    }
  }
  return RenderHtmlPage(page);
}

}  // namespace sextant
