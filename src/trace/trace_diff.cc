#include "trace/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "hardware/hardware_library.h"
#include "trace/kernel_category.h"
#include "trace/kernel_summary.h"
#include "trace/op_breakdown.h"
#include "trace/roofline.h"

namespace sextant {

std::string DiffStatus(int64_t base_count, int64_t new_count, int64_t base_ns, int64_t new_ns) {
  if (base_count == 0 && new_count > 0) return "new";
  if (new_count == 0 && base_count > 0) return "vanished";
  int64_t delta = new_ns - base_ns;
  if (std::llabs(delta) <= 1000 || std::llabs(delta) * 100 <= std::max<int64_t>(base_ns, 1))
    return "unchanged";
  // Run a different number of times: "slower" only when each call got slower too (by more
  // than 5%), else the change is in how often it ran.
  if (base_count != new_count && base_count > 0 && new_count > 0) {
    const double per_call_change = (static_cast<double>(new_ns) / new_count) /
                                       std::max(1.0, static_cast<double>(base_ns) / base_count) -
                                   1;
    const bool same_way = delta > 0 ? per_call_change > 0.05 : per_call_change < -0.05;
    if (!same_way) return new_count > base_count ? "more calls" : "fewer calls";
  }
  return delta > 0 ? "slower" : "faster";
}

namespace {

// The architecture a trace's device name identifies: the library GPU's ("gfx942", "sm_90"),
// or, for an XPlane profile that names only "AMD GPU (compute capability 9.4)", the prefix
// it implies ("gfx94": ROCm reports gfx942 as 9.4, gfx950 as 9.5; CUDA 9.0 is sm_90).
std::string ArchitectureOf(std::string_view device_name) {
  if (const GpuSpec* gpu = FindGpuForDevice(device_name)) return gpu->arch;
  constexpr std::string_view kCapability = "compute capability ";
  const size_t at = device_name.find(kCapability);
  if (at == std::string_view::npos) return "";
  std::string_view cc = device_name.substr(at + kCapability.size());
  const size_t dot = cc.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= cc.size()) return "";
  const std::string major(cc.substr(0, dot)), minor(cc.substr(dot + 1, 1));
  const bool amd = device_name.find("AMD") != std::string_view::npos;
  return amd ? "gfx" + major + minor : "sm_" + major + minor;
}

// Two device names of one architecture (an XPlane profile and a PyTorch trace of the same
// MI300X name it differently): one's architecture is, or begins, the other's.
bool SameArchitecture(std::string_view a, std::string_view b) {
  const std::string x = ArchitectureOf(a), y = ArchitectureOf(b);
  if (x.empty() || y.empty()) return false;
  return x.starts_with(y) || y.starts_with(x);
}

// `base_weight` and `new_weight` put the counts on the times' footing: with times per
// iteration, each count times the other trace's iteration count keeps the per-iteration ratio
// (the status compares time per call, which totals over per-iteration times would distort).
void Finish(std::vector<DiffRow>& rows, int64_t base_weight, int64_t new_weight) {
  for (DiffRow& r : rows) {
    r.status =
        DiffStatus(r.base_count * base_weight, r.new_count * new_weight, r.base_ns, r.new_ns);
  }
  std::sort(rows.begin(), rows.end(), [](const DiffRow& a, const DiffRow& b) {
    int64_t da = std::llabs(a.delta_ns()), db = std::llabs(b.delta_ns());
    return da != db ? da > db : a.name < b.name;
  });
}

// The timeline's durations (not its first start and last end), which scale and add up.
constexpr int64_t GpuTimeline::*kTimelineDurations[] = {
    &GpuTimeline::total_ns,         &GpuTimeline::computation_ns,
    &GpuTimeline::communication_ns, &GpuTimeline::exposed_communication_ns,
    &GpuTimeline::memcpy_ns,        &GpuTimeline::exposed_memcpy_ns,
    &GpuTimeline::memset_ns,        &GpuTimeline::busy_ns,
    &GpuTimeline::idle_ns};

void ScaleTimeline(GpuTimeline& t, double scale) {
  for (int64_t GpuTimeline::*field : kTimelineDurations) {
    t.*field = static_cast<int64_t>(std::llround(static_cast<double>(t.*field) * scale));
  }
}

// 100 x delta / base; empty where base is 0.
Cell DeltaPercent(double base, double delta) {
  if (base == 0) return std::monostate{};
  return 100.0 * delta / base;
}
Cell DeltaPercent(int64_t base, int64_t delta) {
  return DeltaPercent(static_cast<double>(base), static_cast<double>(delta));
}

}  // namespace

TraceDiff DiffTraces(const TraceData& base, const TraceData& next) {
  TraceDiff diff;
  diff.base_path = base.path;
  diff.new_path = next.path;
  const TimelineSelection base_selection = SelectTimelineEvents(base);
  const TimelineSelection new_selection = SelectTimelineEvents(next);
  diff.base_timeline = ComputeGpuTimeline(base, base_selection.events);
  diff.new_timeline = ComputeGpuTimeline(next, new_selection.events);
  // The readers' warnings (a file cut short) and an empty GPU side, named by side.
  for (const auto& [side, trace] : {std::pair<const char*, const TraceData*>{"base", &base},
                                    std::pair<const char*, const TraceData*>{"new", &next}}) {
    for (const std::string& w : trace->warnings)
      diff.warnings.push_back(side + (": " + WarningAboutFile(trace->path, w)));
    if (trace->gpu.empty()) {
      diff.warnings.push_back(fmt::format(
          "{}: no GPU activity in {} events: every GPU figure of this side is 0{}", side,
          trace->total_events, trace->truncated ? " (the file is cut short)" : ""));
    }
  }
  for (const std::string& w : TimelineExclusionWarnings(base_selection))
    diff.warnings.push_back("base: " + w);
  for (const std::string& w : TimelineExclusionWarnings(new_selection))
    diff.warnings.push_back("new: " + w);
  if (!base.device_name.empty() && !next.device_name.empty() &&
      base.device_name != next.device_name &&
      !SameArchitecture(base.device_name, next.device_name)) {
    diff.warnings.push_back(fmt::format(
        "the traces come from different GPUs ({} vs {}): differences mix hardware and code",
        base.device_name, next.device_name));
  }
  if (base.world_size > 0 && next.world_size > 0 && base.world_size != next.world_size) {
    diff.warnings.push_back(fmt::format("the traces come from runs of {} and {} ranks",
                                        base.world_size, next.world_size));
  }
  double base_scale = 1.0, new_scale = 1.0;
  const size_t bi = base.iterations.size(), ni = next.iterations.size();
  diff.base_iterations = bi;
  diff.new_iterations = ni;
  int64_t count_weight_base = 1, count_weight_new = 1;
  if (bi > 0 && ni > 0 && bi != ni) {
    diff.per_iteration = true;
    base_scale = 1.0 / static_cast<double>(bi);
    new_scale = 1.0 / static_cast<double>(ni);
    count_weight_base = static_cast<int64_t>(ni);
    count_weight_new = static_cast<int64_t>(bi);
    diff.warnings.push_back(fmt::format(
        "base profiles {} iterations and new {}: times are compared per iteration", bi, ni));
    ScaleTimeline(diff.base_timeline, base_scale);
    ScaleTimeline(diff.new_timeline, new_scale);
  } else if ((bi == 0) != (ni == 0)) {
    diff.warnings.push_back(fmt::format(
        "only the {} trace marks iterations (ProfilerStep#N): totals may cover different work",
        bi > 0 ? "base" : "new"));
  }
  auto scaled = [](int64_t ns, double scale) {
    return static_cast<int64_t>(std::llround(static_cast<double>(ns) * scale));
  };
  // Kernels and memory operations by name, over the activities the GPU timeline counts: work
  // queued before a profiled window (more of it on one rank than another) would otherwise show
  // as calls that one side made and the other did not.
  auto in_window = [](const TraceData& trace, const TimelineSelection& selection) {
    std::map<std::string, std::pair<int64_t, int64_t>> by_name;  // count, GPU time
    for (uint32_t index : selection.events) {
      const GpuEvent& g = trace.gpu[index];
      auto& [count, ns] = by_name[std::string(trace.Name(g.name))];
      ++count;
      ns += g.dur_ns;
    }
    return by_name;
  };
  std::map<std::string, DiffRow> kernels;
  for (const auto& [name, stats] : in_window(base, base_selection)) {
    DiffRow& r = kernels[name];
    r.name = name;
    r.base_count = stats.first;
    r.base_ns = scaled(stats.second, base_scale);
  }
  for (const auto& [name, stats] : in_window(next, new_selection)) {
    DiffRow& r = kernels[name];
    r.name = name;
    r.new_count = stats.first;
    r.new_ns = scaled(stats.second, new_scale);
  }
  for (auto& [name, row] : kernels) diff.kernels.push_back(std::move(row));
  Finish(diff.kernels, count_weight_base, count_weight_new);
  std::map<std::string, DiffRow> categories;
  auto by_category = [&](const TraceData& trace, const TimelineSelection& selection, bool is_base,
                         double scale) {
    for (uint32_t index : selection.events) {
      const GpuEvent& g = trace.gpu[index];
      const std::string name(CategoryName(CategorizeGpuEvent(trace, g)));
      DiffRow& r = categories[name];
      r.name = name;
      (is_base ? r.base_count : r.new_count) += 1;
      (is_base ? r.base_ns : r.new_ns) += g.dur_ns;
    }
    for (auto& [name, r] : categories) {
      int64_t& ns = is_base ? r.base_ns : r.new_ns;
      if (is_base ? r.base_count : r.new_count) ns = scaled(ns, scale);
    }
  };
  by_category(base, base_selection, true, base_scale);
  by_category(next, new_selection, false, new_scale);
  for (auto& [name, row] : categories) diff.kernel_categories.push_back(std::move(row));
  Finish(diff.kernel_categories, count_weight_base, count_weight_new);

  const OpKernelTimes base_times = ComputeOpKernelTimes(base);
  const OpKernelTimes new_times = ComputeOpKernelTimes(next);
  std::map<std::string, DiffRow> ops;
  for (const auto& o : SummarizeOps(base, base_times, false)) {
    DiffRow& r = ops[o.name];
    r.name = o.name;
    r.base_count = o.count;
    r.base_ns = scaled(o.direct_kernel_ns, base_scale);
    r.base_cpu_ns = scaled(o.cpu_ns, base_scale);
  }
  for (const auto& o : SummarizeOps(next, new_times, false)) {
    DiffRow& r = ops[o.name];
    r.name = o.name;
    r.new_count = o.count;
    r.new_ns = scaled(o.direct_kernel_ns, new_scale);
    r.new_cpu_ns = scaled(o.cpu_ns, new_scale);
  }
  for (auto& [name, row] : ops) diff.ops.push_back(std::move(row));
  Finish(diff.ops, count_weight_base, count_weight_new);

  // The same ops by input shape: a regression confined to one shape (a GEMM that lost its
  // tuned kernel, a sequence length that fell off a fast path) shows here and not by name.
  std::map<std::pair<std::string, std::string>, DiffRow> shapes;
  for (const auto& o : SummarizeOps(base, base_times, true)) {
    DiffRow& r = shapes[{o.name, o.input_dims}];
    r.name = o.name;
    r.shape = o.input_dims;
    r.base_count += o.count;
    r.base_ns += scaled(o.direct_kernel_ns, base_scale);
    r.base_cpu_ns += scaled(o.cpu_ns, base_scale);
  }
  for (const auto& o : SummarizeOps(next, new_times, true)) {
    DiffRow& r = shapes[{o.name, o.input_dims}];
    r.name = o.name;
    r.shape = o.input_dims;
    r.new_count += o.count;
    r.new_ns += scaled(o.direct_kernel_ns, new_scale);
    r.new_cpu_ns += scaled(o.cpu_ns, new_scale);
  }
  for (auto& [key, row] : shapes) {
    if (row.base_ns > 0 || row.new_ns > 0) diff.op_shapes.push_back(std::move(row));
  }
  Finish(diff.op_shapes, count_weight_base, count_weight_new);
  // Two different workloads share few (op, input shape) pairs: every row is then "new" or
  // "vanished", and the totals compare unlike work.
  {
    int64_t base_all = 0, new_all = 0, base_shared = 0, new_shared = 0;
    for (const DiffRow& r : diff.op_shapes) {
      base_all += r.base_ns;
      new_all += r.new_ns;
      if (r.base_count > 0 && r.new_count > 0) {
        base_shared += r.base_ns;
        new_shared += r.new_ns;
      }
    }
    if (base_all > 0 && new_all > 0) {
      const double base_share = static_cast<double>(base_shared) / static_cast<double>(base_all);
      const double new_share = static_cast<double>(new_shared) / static_cast<double>(new_all);
      if (std::min(base_share, new_share) < 0.5) {
        diff.warnings.push_back(fmt::format(
            "ops with the same name and input shapes in both traces hold only {:.0f}% of base's "
            "and {:.0f}% of new's op kernel time: these look like different workloads (model, "
            "batch or sequence), so most rows are new or vanished",
            100 * base_share, 100 * new_share));
      }
    }
  }

  // Modelled ops (GEMMs, attention, elementwise, norms) by signature: the achieved rate says
  // whether a time change is the same work done slower or different work.
  std::map<std::tuple<std::string, std::string, std::string>, DiffRow> rates;
  for (const auto& row : ComputeRoofline(base, base_times, nullptr)) {
    DiffRow& r = rates[{row.name, row.input_dims, row.input_types}];
    r.name = row.name;
    r.shape = row.input_dims;
    r.types = row.input_types;
    r.base_count = row.count;
    r.base_ns = scaled(row.kernel_ns, base_scale);
    r.base_tflops = row.achieved_tflops;
    r.base_tbps = row.achieved_tbps;
  }
  for (const auto& row : ComputeRoofline(next, new_times, nullptr)) {
    DiffRow& r = rates[{row.name, row.input_dims, row.input_types}];
    r.name = row.name;
    r.shape = row.input_dims;
    r.types = row.input_types;
    r.new_count = row.count;
    r.new_ns = scaled(row.kernel_ns, new_scale);
    r.new_tflops = row.achieved_tflops;
    r.new_tbps = row.achieved_tbps;
  }
  for (auto& [key, row] : rates) diff.roofline.push_back(std::move(row));
  Finish(diff.roofline, count_weight_base, count_weight_new);
  return diff;
}

std::vector<Table> DiffTables(const TraceDiff& diff, size_t top) {
  auto us = [](int64_t ns) { return static_cast<double>(ns) / 1e3; };
  Cell (*const pct)(int64_t, int64_t) = DeltaPercent;
  std::vector<Table> tables;
  Table timeline(
      "timeline_diff",
      diff.per_iteration ? "GPU timeline per iteration: base vs new" : "GPU timeline: base vs new",
      {{"type", "type", 0},
       {"base_ms", "base (ms)", 3},
       {"new_ms", "new (ms)", 3},
       {"delta_ms", "delta (ms)", 3},
       {"delta_percent", "delta (%)", 1}});
  const auto base_rows = TraceLensTimelineRows(diff.base_timeline);
  const auto new_rows = TraceLensTimelineRows(diff.new_timeline);
  for (size_t i = 0; i < base_rows.size(); ++i) {
    const int64_t base_ns = base_rows[i].second, new_ns = new_rows[i].second;
    timeline.AddRow({std::string(base_rows[i].first), base_ns / 1e6, new_ns / 1e6,
                     (new_ns - base_ns) / 1e6, pct(base_ns, new_ns - base_ns)});
  }
  tables.push_back(std::move(timeline));
  // `shape`: a column for DiffRow::shape with this header (nullptr: none); `cpu`: the CPU
  // time columns of op rows.
  // Iteration counts that differ put the times on a per-iteration footing; the call counts
  // stay what each trace holds, which a reader dividing one by the other must know.
  const std::string per_iteration_note =
      diff.per_iteration
          ? fmt::format(
                "times per iteration (base over {}, new over {} iterations); counts are "
                "each trace's totals",
                diff.base_iterations, diff.new_iterations)
          : std::string();
  auto rows_table = [&](const char* name, const char* title, const std::vector<DiffRow>& list,
                        const char* what, const char* shape, bool cpu) {
    std::vector<Column> cols = {{"name", what, 0}};
    if (shape) cols.push_back({"shape", shape, 0});
    for (const Column& c : std::initializer_list<Column>{{"status", "status", 0},
                                                         {"base_count", "base count", 0},
                                                         {"new_count", "new count", 0},
                                                         {"base_us", "base (us)", 1},
                                                         {"new_us", "new (us)", 1},
                                                         {"delta_us", "delta (us)", 1},
                                                         {"delta_percent", "delta (%)", 1}}) {
      cols.push_back(c);
    }
    if (cpu) {
      cols.push_back({"base_cpu_ms", "base CPU (ms)", 3});
      cols.push_back({"new_cpu_ms", "new CPU (ms)", 3});
    }
    if (diff.per_iteration) {
      for (Column& c : cols) {
        if (c.key == "base_us") c.header = "base (us/iter)";
        if (c.key == "new_us") c.header = "new (us/iter)";
        if (c.key == "delta_us") c.header = "delta (us/iter)";
      }
    }
    Table t(name, title, cols);
    if (!per_iteration_note.empty()) t.AddNote(per_iteration_note);
    for (size_t i = 0; i < list.size() && (top == 0 || i < top); ++i) {
      const DiffRow& r = list[i];
      std::vector<Cell> cells = {r.name};
      if (shape) cells.emplace_back(std::in_place_type<std::string>, r.shape);
      for (Cell& c :
           std::vector<Cell>{r.status, r.base_count, r.new_count, us(r.base_ns), us(r.new_ns),
                             us(r.delta_ns()), pct(r.base_ns, r.delta_ns())}) {
        cells.push_back(std::move(c));
      }
      if (cpu) {
        // Constructed in place: a moved temporary variant trips GCC 12's
        // -Wmaybe-uninitialized on the (inactive) string member.
        cells.emplace_back(std::in_place_type<double>, r.base_cpu_ns / 1e6);
        cells.emplace_back(std::in_place_type<double>, r.new_cpu_ns / 1e6);
      }
      t.AddRow(std::move(cells));
    }
    std::map<std::string, int> counts;
    for (const auto& r : list) counts[r.status]++;
    std::string note;
    for (const auto& [status, count] : counts)
      note += (note.empty() ? "" : ", ") + std::to_string(count) + " " + status;
    if (!note.empty()) t.AddNote(note);
    return t;
  };
  tables.push_back(rows_table("kernel_category_diff", "Kernel categories by time change (GPU time)",
                              diff.kernel_categories, "category", nullptr, false));
  tables.push_back(rows_table("kernel_diff", "Kernels by time change (GPU time)", diff.kernels,
                              "kernel", nullptr, false));
  tables.push_back(
      rows_table("op_diff", "Ops by change in direct kernel time", diff.ops, "op", nullptr, true));
  tables.push_back(rows_table("op_shape_diff",
                              "Ops by input shape, by change in direct kernel time", diff.op_shapes,
                              "op", "input dims", false));

  auto rate = [](double tflops) -> Cell {
    if (tflops <= 0) return std::monostate{};
    return tflops;
  };
  Table roofline("roofline_diff",
                 "Modelled ops by signature: achieved TFLOP/s, TB/s and time, base vs new",
                 {{"name", "op", 0},
                  {"shape", "input dims", 0},
                  {"types", "input types", 0},
                  {"status", "status", 0},
                  {"base_count", "base count", 0},
                  {"new_count", "new count", 0},
                  {"base_tflops", "base TFLOP/s", 2},
                  {"new_tflops", "new TFLOP/s", 2},
                  {"base_tbps", "base TB/s", 3},
                  {"new_tbps", "new TB/s", 3},
                  {"base_us", "base (us)", 1},
                  {"new_us", "new (us)", 1},
                  {"delta_us", "delta (us)", 1}});
  if (!per_iteration_note.empty()) roofline.AddNote(per_iteration_note);
  for (size_t i = 0; i < diff.roofline.size() && (top == 0 || i < top); ++i) {
    const DiffRow& r = diff.roofline[i];
    roofline.AddRow({r.name, r.shape, r.types, r.status, r.base_count, r.new_count,
                     rate(r.base_tflops), rate(r.new_tflops), rate(r.base_tbps), rate(r.new_tbps),
                     us(r.base_ns), us(r.new_ns), us(r.delta_ns())});
  }
  roofline.AddNote(
      "TFLOP/s is the rate that bounds GEMMs and attention; elementwise and norm ops move bytes, "
      "so compare their TB/s (rates from the roofline's FLOP and byte counts per call)");
  tables.push_back(std::move(roofline));
  return tables;
}

namespace {

std::vector<DiffRow> TraceDiff::*const kRowLists[] = {&TraceDiff::kernel_categories,
                                                      &TraceDiff::kernels, &TraceDiff::ops,
                                                      &TraceDiff::op_shapes, &TraceDiff::roofline};

void AddTimeline(GpuTimeline& sum, const GpuTimeline& t) {
  for (int64_t GpuTimeline::*field : kTimelineDurations) sum.*field += t.*field;
}

}  // namespace

void RankDiffAccumulator::Add(int64_t rank, const TraceDiff& pair) {
  if (timelines_.empty()) {
    base_path_ = pair.base_path;
    new_path_ = pair.new_path;
    base_iterations_ = pair.base_iterations;
    new_iterations_ = pair.new_iterations;
  }
  per_iteration_ = per_iteration_ || pair.per_iteration;
  timelines_.push_back({rank, pair.base_timeline, pair.new_timeline});
  for (size_t t = 0; t < std::size(kRowLists); ++t) {
    for (const DiffRow& r : pair.*kRowLists[t]) {
      Sum& sum = tables_[t][{r.name, r.shape, r.types}];
      DiffRow& s = sum.row;
      if (s.name.empty()) {
        s.name = r.name;
        s.shape = r.shape;
        s.types = r.types;
      }
      s.base_count += r.base_count;
      s.new_count += r.new_count;
      s.base_ns += r.base_ns;
      s.new_ns += r.new_ns;
      s.base_cpu_ns += r.base_cpu_ns;
      s.new_cpu_ns += r.new_cpu_ns;
      // Rates weighted by the time they were achieved over.
      if (r.base_tflops > 0 || r.base_tbps > 0) {
        s.base_tflops += r.base_tflops * static_cast<double>(r.base_ns);
        s.base_tbps += r.base_tbps * static_cast<double>(r.base_ns);
        sum.base_rate_ns += static_cast<double>(r.base_ns);
      }
      if (r.new_tflops > 0 || r.new_tbps > 0) {
        s.new_tflops += r.new_tflops * static_cast<double>(r.new_ns);
        s.new_tbps += r.new_tbps * static_cast<double>(r.new_ns);
        sum.new_rate_ns += static_cast<double>(r.new_ns);
      }
    }
  }
  for (const std::string& w : pair.warnings) {
    auto it = std::find_if(warnings_.begin(), warnings_.end(),
                           [&](const auto& entry) { return entry.first == w; });
    if (it == warnings_.end()) {
      warnings_.push_back({w, {rank}});
    } else {
      it->second.push_back(rank);
    }
  }
}

bool RankDiffAccumulator::Has(int64_t rank) const {
  return std::any_of(timelines_.begin(), timelines_.end(),
                     [rank](const RankTimeline& t) { return t.rank == rank; });
}

TraceDiff RankDiffAccumulator::Mean() const {
  TraceDiff mean;
  const size_t n = timelines_.size();
  if (n == 0) return mean;
  mean.base_path = base_path_;
  mean.new_path = new_path_;
  mean.per_iteration = per_iteration_;
  mean.base_iterations = base_iterations_;
  mean.new_iterations = new_iterations_;
  for (const RankTimeline& r : timelines_) {
    AddTimeline(mean.base_timeline, r.base);
    AddTimeline(mean.new_timeline, r.next);
  }
  ScaleTimeline(mean.base_timeline, 1.0 / static_cast<double>(n));
  ScaleTimeline(mean.new_timeline, 1.0 / static_cast<double>(n));
  auto per_rank = [n](int64_t ns) {
    return static_cast<int64_t>(std::llround(static_cast<double>(ns) / static_cast<double>(n)));
  };
  // Counts stay totals over the ranks: the status compares time per call, so both sides'
  // counts are put on the same footing as in DiffTraces (per iteration when it is).
  const int64_t weight_base = per_iteration_ ? static_cast<int64_t>(new_iterations_) : 1;
  const int64_t weight_new = per_iteration_ ? static_cast<int64_t>(base_iterations_) : 1;
  for (size_t t = 0; t < std::size(kRowLists); ++t) {
    std::vector<DiffRow>& rows = mean.*kRowLists[t];
    for (const auto& [key, sum] : tables_[t]) {
      DiffRow r = sum.row;
      r.base_ns = per_rank(r.base_ns);
      r.new_ns = per_rank(r.new_ns);
      r.base_cpu_ns = per_rank(r.base_cpu_ns);
      r.new_cpu_ns = per_rank(r.new_cpu_ns);
      r.base_tflops = sum.base_rate_ns > 0 ? r.base_tflops / sum.base_rate_ns : 0;
      r.base_tbps = sum.base_rate_ns > 0 ? r.base_tbps / sum.base_rate_ns : 0;
      r.new_tflops = sum.new_rate_ns > 0 ? r.new_tflops / sum.new_rate_ns : 0;
      r.new_tbps = sum.new_rate_ns > 0 ? r.new_tbps / sum.new_rate_ns : 0;
      rows.push_back(std::move(r));
    }
    Finish(rows, weight_base * static_cast<int64_t>(n), weight_new * static_cast<int64_t>(n));
  }
  // Warnings that differ between ranks only in their figures ("354 GPU activities ... left
  // out" on one, "557" on another) are said once, with the first rank's figures.
  auto pattern = [](const std::string& w) {
    std::string p;
    for (char c : w) {
      const bool figure = (c >= '0' && c <= '9') || c == '.';
      if (!figure) {
        p += c;
      } else if (p.empty() || p.back() != '#') {
        p += '#';
      }
    }
    return p;
  };
  // The first text seen, its rank, and every rank of the group.
  std::vector<std::tuple<std::string, int64_t, std::vector<int64_t>>> grouped;
  std::vector<std::string> patterns;
  std::vector<bool> varies;
  for (const auto& [warning, ranks] : warnings_) {
    const std::string p = pattern(warning);
    auto it = std::find(patterns.begin(), patterns.end(), p);
    if (it == patterns.end()) {
      patterns.push_back(p);
      grouped.push_back({warning, ranks.front(), ranks});
      varies.push_back(false);
    } else {
      auto& group_ranks = std::get<2>(grouped[static_cast<size_t>(it - patterns.begin())]);
      group_ranks.insert(group_ranks.end(), ranks.begin(), ranks.end());
      varies[static_cast<size_t>(it - patterns.begin())] = true;
    }
  }
  for (size_t g = 0; g < grouped.size(); ++g) {
    auto& [warning, first_rank, ranks] = grouped[g];
    std::sort(ranks.begin(), ranks.end());
    const std::string figures =
        varies[g] ? fmt::format(" (rank {}'s figures; other ranks' differ)", first_rank) : "";
    if (ranks.size() == n) {
      mean.warnings.push_back(varies[g] ? fmt::format("every rank: {}{}", warning, figures)
                                        : warning);
    } else {
      mean.warnings.push_back(fmt::format("rank{} {}: {}{}", ranks.size() > 1 ? "s" : "",
                                          fmt::join(ranks, ", "), warning, figures));
    }
  }
  mean.warnings.push_back(fmt::format(
      "{} ranks compared rank by rank: times are the mean rank's, call counts the totals", n));
  return mean;
}

Table RankDiffAccumulator::RankTimelineTable() const {
  Table t("rank_timeline_diff", "GPU time per rank: base vs new",
          {{"rank", "rank", 0},
           {"base_total_ms", "base span (ms)", 3},
           {"new_total_ms", "new span (ms)", 3},
           {"total_delta_percent", "span delta (%)", 1},
           {"base_busy_ms", "base busy (ms)", 3},
           {"new_busy_ms", "new busy (ms)", 3},
           {"busy_delta_percent", "busy delta (%)", 1},
           {"base_exposed_comm_ms", "base exposed comm (ms)", 3},
           {"new_exposed_comm_ms", "new exposed comm (ms)", 3},
           {"exposed_comm_delta_percent", "exposed comm delta (%)", 1}});
  auto pct = [](int64_t base, int64_t next) { return DeltaPercent(base, next - base); };
  std::vector<const RankTimeline*> by_rank;
  for (const RankTimeline& r : timelines_) by_rank.push_back(&r);
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [](const RankTimeline* a, const RankTimeline* b) { return a->rank < b->rank; });
  for (const RankTimeline* rank : by_rank) {
    const RankTimeline& r = *rank;
    t.AddRow({r.rank, r.base.total_ns / 1e6, r.next.total_ns / 1e6,
              pct(r.base.total_ns, r.next.total_ns), r.base.busy_ns / 1e6, r.next.busy_ns / 1e6,
              pct(r.base.busy_ns, r.next.busy_ns), r.base.exposed_communication_ns / 1e6,
              r.next.exposed_communication_ns / 1e6,
              pct(r.base.exposed_communication_ns, r.next.exposed_communication_ns)});
  }
  if (per_iteration_) t.AddNote("times per iteration");
  return t;
}

void RankDiffAccumulator::AddCollectives(std::vector<CollectiveInstance> base,
                                         std::vector<CollectiveInstance> next) {
  base_collectives_.push_back(std::move(base));
  new_collectives_.push_back(std::move(next));
}

std::vector<Table> RankDiffAccumulator::CrossRankTables() const {
  if (base_collectives_.size() < 2) return {};
  const std::vector<CrossRankCollective> base = MatchCollectivesAcrossRanks(base_collectives_);
  const std::vector<CrossRankCollective> next = MatchCollectivesAcrossRanks(new_collectives_);
  auto pct = [](double from, double to) { return DeltaPercent(from, to - from); };

  Table waits("straggler_diff", "Waiting at collectives per rank: base vs new",
              {{"rank", "rank", 0},
               {"base_total_wait_us", "base wait for the last (us)", 1},
               {"new_total_wait_us", "new wait for the last (us)", 1},
               {"wait_delta_percent", "wait delta (%)", 1},
               {"base_times_last", "base arrived last", 0},
               {"new_times_last", "new arrived last", 0},
               {"base_collectives", "base collectives", 0},
               {"new_collectives", "new collectives", 0}});
  std::map<int64_t, std::pair<const RankStraggling*, const RankStraggling*>> by_rank;
  const std::vector<RankStraggling> base_waits = SummarizeStragglers(base, {});
  const std::vector<RankStraggling> new_waits = SummarizeStragglers(next, {});
  for (const RankStraggling& r : base_waits) by_rank[r.rank].first = &r;
  for (const RankStraggling& r : new_waits) by_rank[r.rank].second = &r;
  for (const auto& [rank, pair] : by_rank) {
    const auto& [b, n] = pair;
    const double bw = b ? b->total_wait_us : 0, nw = n ? n->total_wait_us : 0;
    waits.AddRow({rank, b ? Cell(bw) : Cell(), n ? Cell(nw) : Cell(),
                  b && n ? Cell(pct(bw, nw)) : Cell(), b ? Cell(b->times_last) : Cell(),
                  n ? Cell(n->times_last) : Cell(), b ? Cell(b->collectives) : Cell(),
                  n ? Cell(n->collectives) : Cell()});
  }
  waits.AddNote(
      "a rank's wait for the last = the latest start of a synchronising collective minus its "
      "own start, summed; the rank that waits least is the one the others wait for");

  Table sync("collective_sync_diff", "Collectives across ranks: base vs new",
             {{"collective", "collective", 0},
              {"dtype", "dtype", 0},
              {"in_nelems", "in elements", 0},
              {"base_count", "base count", 0},
              {"new_count", "new count", 0},
              {"base_latency_us", "base latency mean (us)", 1},
              {"new_latency_us", "new latency mean (us)", 1},
              {"latency_delta_percent", "latency delta (%)", 1},
              {"base_start_skew_us", "base start skew mean (us)", 1},
              {"new_start_skew_us", "new start skew mean (us)", 1}});
  using Key = std::tuple<std::string, std::string, int64_t>;
  std::map<Key, std::pair<CollectiveSyncSummary, CollectiveSyncSummary>> groups;
  std::vector<Key> order;  // the base's order (largest total latency first), then the new's
  for (const auto& [side, matched] : {std::pair{0, &base}, std::pair{1, &next}}) {
    for (CollectiveSyncSummary& c : SummarizeImplicitSyncCollectives(*matched)) {
      const Key key{c.name, c.dtype, c.in_nelems};
      auto [it, inserted] = groups.try_emplace(key);
      if (inserted) order.push_back(key);
      (side == 0 ? it->second.first : it->second.second) = std::move(c);
    }
  }
  for (const Key& key : order) {
    const auto& [b, n] = groups.at(key);
    auto mean = [](const CallStats& s) { return s.n > 0 ? Cell(s.mean) : Cell(); };
    sync.AddRow({std::get<0>(key), std::get<1>(key),
                 std::get<2>(key) >= 0 ? Cell(std::get<2>(key)) : Cell(), b.latency_us.n,
                 n.latency_us.n, mean(b.latency_us), mean(n.latency_us),
                 b.latency_us.n > 0 && n.latency_us.n > 0
                     ? Cell(pct(b.latency_us.mean, n.latency_us.mean))
                     : Cell(),
                 mean(b.start_skew_us), mean(n.start_skew_us)});
  }
  sync.AddNote(
      "latency: the shortest duration over ranks (the transfer once the last rank arrived); "
      "start skew: latest minus earliest start");
  std::vector<Table> out;
  if (!waits.empty()) out.push_back(std::move(waits));
  if (!sync.empty()) out.push_back(std::move(sync));
  return out;
}

}  // namespace sextant
