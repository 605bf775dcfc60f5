#include "trace/annotation_summary.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <string_view>
#include <unordered_map>

namespace sextant {
namespace {

constexpr std::string_view kIterationPrefix = "ProfilerStep#";

}  // namespace

std::vector<AnnotationStats> SummarizeAnnotations(const TraceData& trace,
                                                  const std::vector<uint32_t>& gpu_indices) {
  const size_t n = trace.cpu.size();
  // Nearest enclosing annotation of each CPU event (itself for an annotation), and for each
  // annotation the next one above it: parents precede children, so one pass fills both.
  std::vector<int32_t> annotation_at(n, -1), annotation_above(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const CpuEvent& ev = trace.cpu[i];
    const int32_t inherited = ev.parent >= 0 ? annotation_at[ev.parent] : -1;
    bool counted =
        ev.kind == CpuKind::kAnnotation && !trace.Name(ev.name).starts_with(kIterationPrefix);
    if (counted) {
      annotation_above[i] = inherited;
      annotation_at[i] = static_cast<int32_t>(i);
    } else {
      annotation_at[i] = inherited;
    }
  }
  // The backward runs on autograd's own thread, outside the ranges the training loop opens
  // around it (DualPipe's "attn(B)" is recorded on the main thread, its kernels are launched
  // from the engine's). A launch with no range of its own thread inherits the innermost range
  // open at that moment on the thread of the same process holding the most ranges.
  std::unordered_map<uint32_t, std::vector<int32_t>> ranges_by_thread;  // starts ascending
  for (size_t i = 0; i < n; ++i) {
    if (annotation_at[i] == static_cast<int32_t>(i)) {
      ranges_by_thread[trace.cpu[i].thread].push_back(static_cast<int32_t>(i));
    }
  }
  for (auto& [thread, ranges] : ranges_by_thread) {
    std::stable_sort(ranges.begin(), ranges.end(),
                     [&](int32_t a, int32_t b) { return trace.cpu[a].ts_ns < trace.cpu[b].ts_ns; });
  }
  const std::vector<int32_t>* main_ranges = nullptr;
  uint32_t main_thread = 0;
  for (const auto& [thread, ranges] : ranges_by_thread) {
    if (main_ranges == nullptr || ranges.size() > main_ranges->size() ||
        (ranges.size() == main_ranges->size() && thread < main_thread)) {
      main_ranges = &ranges;
      main_thread = thread;
    }
  }
  auto enclosing = [&](const CpuEvent& launch) -> int32_t {
    const int32_t own = annotation_at[&launch - trace.cpu.data()];
    if (own >= 0 || main_ranges == nullptr || launch.thread == main_thread ||
        trace.threads[launch.thread].pid != trace.threads[main_thread].pid) {
      return own;
    }
    // Last range starting at or before the launch, then out through its enclosing ranges
    // (ranges on one thread nest) to the first that is still open.
    auto it = std::upper_bound(main_ranges->begin(), main_ranges->end(), launch.ts_ns,
                               [&](int64_t ts, int32_t r) { return ts < trace.cpu[r].ts_ns; });
    if (it == main_ranges->begin()) return -1;
    for (int32_t a = *std::prev(it); a >= 0; a = annotation_above[a]) {
      if (trace.cpu[a].end_ns() > launch.ts_ns) return a;
    }
    return -1;
  };
  struct Instance {
    int64_t kernels = 0, kernel_ns = 0, first = INT64_MAX, last = INT64_MIN;
  };
  std::unordered_map<int32_t, Instance> instances;
  for (uint32_t gi : gpu_indices) {
    const GpuEvent& g = trace.gpu[gi];
    if (g.launcher < 0) continue;
    for (int32_t a = enclosing(trace.cpu[g.launcher]); a >= 0; a = annotation_above[a]) {
      Instance& in = instances[a];
      ++in.kernels;
      in.kernel_ns += g.dur_ns;
      in.first = std::min(in.first, g.ts_ns);
      in.last = std::max(in.last, g.end_ns());
    }
  }
  std::unordered_map<uint32_t, AnnotationStats> by_name;
  // A range nested in one of its own name (a recursive `record_function`) is part of that
  // call, not a second one: counted once, its time and kernels through the outer instance.
  std::vector<char> repeats_outer(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (annotation_at[i] != static_cast<int32_t>(i)) continue;
    for (int32_t a = annotation_above[i]; !repeats_outer[i] && a >= 0; a = annotation_above[a]) {
      repeats_outer[i] = trace.cpu[a].name == trace.cpu[i].name;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (annotation_at[i] != static_cast<int32_t>(i) || repeats_outer[i]) continue;
    const CpuEvent& ev = trace.cpu[i];
    AnnotationStats& s = by_name[ev.name];
    if (s.count == 0) s.name = std::string(trace.Name(ev.name));
    ++s.count;
    s.cpu_ns += ev.dur_ns;
    auto it = instances.find(static_cast<int32_t>(i));
    if (it == instances.end()) continue;
    s.kernels += it->second.kernels;
    s.kernel_ns += it->second.kernel_ns;
    s.gpu_span_ns += it->second.last - it->second.first;
  }
  std::vector<AnnotationStats> out;
  out.reserve(by_name.size());
  for (auto& [id, s] : by_name) out.push_back(std::move(s));
  std::sort(out.begin(), out.end(), [](const AnnotationStats& a, const AnnotationStats& b) {
    if (a.kernel_ns != b.kernel_ns) return a.kernel_ns > b.kernel_ns;
    return a.name < b.name;
  });
  return out;
}

}  // namespace sextant
