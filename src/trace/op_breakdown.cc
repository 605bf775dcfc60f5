#include "trace/op_breakdown.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "trace/gpu_timeline.h"
#include "trace/intervals.h"

namespace sextant {

OpKernelTimes ComputeOpKernelTimes(const TraceData& trace) {
  return ComputeOpKernelTimes(trace, TimelineEvents(trace));
}

OpKernelTimes ComputeOpKernelTimes(const TraceData& trace, const std::vector<uint32_t>& events) {
  OpKernelTimes t;
  const size_t n = trace.cpu.size();
  t.kernel_count.assign(n, 0);
  // The timeline's activities only: a memset whose launch carries no flow is outside
  // TraceLens's op tree too, so op times agree with its ops_summary. Times are busy times
  // (the union of the kernels' intervals), as TraceLens's GPUEventAnalyser takes them.
  std::vector<GroupedInterval> direct;
  direct.reserve(events.size());
  for (uint32_t i : events) {
    const GpuEvent& g = trace.gpu[i];
    if (g.op < 0) continue;
    direct.push_back({static_cast<uint32_t>(g.op), {g.ts_ns, g.end_ns()}});
    t.kernel_count[g.op]++;
  }
  t.direct_ns = UnionLengthByGroup(direct, n);
  // Children follow their parents in trace.cpu (sorted by thread, start), so one backward
  // pass accumulates every subtree, and a subtree is the index range [i, last[i]].
  t.subtree_ns = t.direct_ns;
  std::vector<size_t> last(n);
  for (size_t i = 0; i < n; ++i) last[i] = i;
  for (size_t i = n; i-- > 0;) {
    const int32_t parent = trace.cpu[i].parent;
    if (parent < 0) continue;
    t.subtree_ns[parent] += t.subtree_ns[i];
    last[parent] = std::max(last[parent], last[i]);
  }
  // Summed subtrees are exact unless kernels of two different ops of one tree overlap; find
  // the trees where they do and take their ops' subtrees as unions. A tree is rooted at its
  // outermost op: kernels of other top-level ops (another stream's) do not count.
  std::vector<uint32_t> root(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t parent = trace.cpu[i].parent;
    root[i] = parent >= 0 && trace.cpu[root[parent]].kind == CpuKind::kOp
                  ? root[parent]
                  : static_cast<uint32_t>(i);
  }
  std::vector<GroupedInterval> by_root = direct;
  std::vector<int64_t> root_sum(n, 0);
  for (GroupedInterval& item : by_root) {
    item.group = root[item.group];
    root_sum[item.group] += item.span.end - item.span.begin;
  }
  const std::vector<int64_t> root_busy = UnionLengthByGroup(by_root, n);
  std::vector<uint8_t> overlapping_tree(n, 0);
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    if (root_busy[i] < root_sum[i]) overlapping_tree[i] = any = 1;
  }
  if (!any) return t;
  // Kernels ordered by the index of their op: a subtree's kernels are one run of them.
  std::vector<GroupedInterval> by_op;
  for (const GroupedInterval& item : direct) {
    if (overlapping_tree[root[item.group]]) by_op.push_back(item);
  }
  std::stable_sort(
      by_op.begin(), by_op.end(),
      [](const GroupedInterval& a, const GroupedInterval& b) { return a.group < b.group; });
  std::vector<Interval> spans;
  for (size_t i = 0; i < n; ++i) {
    if (!overlapping_tree[root[i]] || t.subtree_ns[i] == 0) continue;
    auto from =
        std::lower_bound(by_op.begin(), by_op.end(), static_cast<uint32_t>(i),
                         [](const GroupedInterval& a, uint32_t op) { return a.group < op; });
    spans.clear();
    for (auto it = from; it != by_op.end() && it->group <= last[i]; ++it) spans.push_back(it->span);
    t.subtree_ns[i] = TotalLength(MergeIntervals(spans));
  }
  return t;
}

namespace {

int32_t ParentOp(const TraceData& trace, int32_t idx) {
  int32_t p = trace.cpu[idx].parent;
  while (p >= 0 && trace.cpu[p].kind != CpuKind::kOp) p = trace.cpu[p].parent;
  return p;
}

// For each CPU event, the call it belongs to: an op nested in an op of its own name
// (aten::arange -> aten::arange(out=), aten::to -> aten::to) is part of the outermost such
// op's call (TraceLens counts it once); every other event is its own call.
std::vector<int32_t> SameNameOutermostOp(const TraceData& trace) {
  std::vector<int32_t> call(trace.cpu.size());
  // Parents precede children, so a parent's call is known when its child is reached.
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    call[i] = static_cast<int32_t>(i);
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp) continue;
    int32_t parent = ParentOp(trace, static_cast<int32_t>(i));
    if (parent >= 0 && trace.cpu[parent].name == ev.name) call[i] = call[parent];
  }
  return call;
}

}  // namespace

std::vector<OpStats> SummarizeOps(const TraceData& trace, const OpKernelTimes& times,
                                  bool by_shape) {
  struct Key {
    uint32_t name, dims, types;
    bool operator<(const Key& o) const {
      return std::tie(name, dims, types) < std::tie(o.name, o.dims, o.types);
    }
  };
  struct Acc {
    OpStats stats;
    std::unordered_map<uint32_t, int64_t> parents;
  };
  std::map<Key, Acc> groups;
  // An op that calls itself is one call (SameNameOutermostOp): the inner one's kernels count
  // as the outermost one's direct kernels, and the inner one is not counted again.
  const std::vector<int32_t> call = SameNameOutermostOp(trace);
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp || times.subtree_ns[i] == 0) continue;
    if (call[i] != static_cast<int32_t>(i)) {
      const CpuEvent& outer = trace.cpu[call[i]];
      Key key{outer.name, by_shape ? outer.input_dims : 0u, by_shape ? outer.input_types : 0u};
      OpStats& s = groups[key].stats;
      s.direct_kernel_ns += times.direct_ns[i];
      s.kernels += times.kernel_count[i];
      continue;
    }
    int32_t parent = ParentOp(trace, static_cast<int32_t>(i));
    Key key{ev.name, by_shape ? ev.input_dims : 0u, by_shape ? ev.input_types : 0u};
    Acc& acc = groups[key];
    OpStats& s = acc.stats;
    if (s.count == 0) {
      s.name = std::string(trace.Name(ev.name));
      s.input_dims = std::string(trace.Name(key.dims));
      s.input_types = std::string(trace.Name(key.types));
      s.category = CategorizeOpName(s.name, &s.category_known);
    }
    s.count++;
    s.cpu_ns += ev.dur_ns;
    s.direct_kernel_ns += times.direct_ns[i];
    s.subtree_kernel_ns += times.subtree_ns[i];
    s.kernels += times.kernel_count[i];
    acc.parents[parent >= 0 ? trace.cpu[parent].name : 0]++;
  }
  std::vector<OpStats> out;
  out.reserve(groups.size());
  for (auto& [key, acc] : groups) {
    auto best = std::max_element(acc.parents.begin(), acc.parents.end(), [](auto& a, auto& b) {
      return a.second < b.second || (a.second == b.second && a.first > b.first);
    });
    acc.stats.parent = std::string(trace.Name(best->first));
    out.push_back(std::move(acc.stats));
  }
  std::sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) {
    if (a.direct_kernel_ns != b.direct_kernel_ns) return a.direct_kernel_ns > b.direct_kernel_ns;
    if (a.subtree_kernel_ns != b.subtree_kernel_ns)
      return a.subtree_kernel_ns > b.subtree_kernel_ns;
    return std::tie(a.name, a.input_dims) < std::tie(b.name, b.input_dims);
  });
  return out;
}

std::vector<OpPathStats> SummarizeOpTree(const TraceData& trace, const OpKernelTimes& times,
                                         int max_depth) {
  std::map<std::string, OpPathStats> by_path;
  std::vector<std::string_view> chain;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp || times.subtree_ns[i] == 0) continue;
    chain.clear();
    for (int32_t p = static_cast<int32_t>(i); p >= 0; p = ParentOp(trace, p)) {
      chain.push_back(trace.Name(trace.cpu[p].name));
    }
    int depth = static_cast<int>(chain.size()) - 1;
    if (depth >= max_depth) continue;  // already counted in its ancestors' subtree time
    std::string path;
    for (size_t k = chain.size(); k-- > 0;) {
      if (!path.empty()) path += " > ";
      path += chain[k];
    }
    OpPathStats& s = by_path[path];
    s.path = path;
    s.depth = depth;
    s.count++;
    s.direct_kernel_ns += times.direct_ns[i];
    s.subtree_kernel_ns += times.subtree_ns[i];
  }
  std::vector<OpPathStats> out;
  for (auto& [path, stats] : by_path) out.push_back(std::move(stats));
  return out;
}

}  // namespace sextant
