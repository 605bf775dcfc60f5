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
  // A depth-first walk of the CPU event trees: `preorder` lists events parents first, and
  // each subtree is one run of `position`s. Built only when needed: in a trace as read,
  // parents already precede their children (trace.cpu is sorted by thread and start), but ops
  // imported from a graph capture are appended in the order their kernels ran.
  // The events' parents and which of them are ops, copied in one pass over the event store:
  // the passes below read these 5 bytes an event instead of the events.
  std::vector<int32_t> parent_of(n);
  std::vector<uint8_t> is_op(n);
  bool parents_first = true;
  for (size_t i = 0; i < n; ++i) {
    const CpuEvent& ev = trace.cpu[i];
    parent_of[i] = ev.parent;
    is_op[i] = ev.kind == CpuKind::kOp;
    parents_first = parents_first && ev.parent < static_cast<int32_t>(i);
  }
  std::vector<uint32_t> preorder, position, size;
  auto walk = [&] {
    std::vector<uint32_t> child_start(n + 1, 0), children, stack;
    for (size_t i = 0; i < n; ++i) {
      if (parent_of[i] >= 0) child_start[static_cast<size_t>(parent_of[i]) + 1]++;
    }
    for (size_t i = 0; i < n; ++i) child_start[i + 1] += child_start[i];
    children.resize(child_start[n]);
    std::vector<uint32_t> next(child_start.begin(), child_start.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      const int32_t parent = parent_of[i];
      if (parent >= 0) children[next[static_cast<size_t>(parent)]++] = static_cast<uint32_t>(i);
    }
    preorder.clear();
    preorder.reserve(n);
    position.assign(n, 0);
    size.assign(n, 1);
    for (size_t r = 0; r < n; ++r) {
      if (parent_of[r] >= 0) continue;
      stack.push_back(static_cast<uint32_t>(r));
      while (!stack.empty()) {
        const uint32_t i = stack.back();
        stack.pop_back();
        position[i] = static_cast<uint32_t>(preorder.size());
        preorder.push_back(i);
        for (uint32_t c = child_start[i + 1]; c-- > child_start[i];) stack.push_back(children[c]);
      }
    }
    for (size_t k = preorder.size(); k-- > 0;) {
      const int32_t parent = parent_of[preorder[k]];
      if (parent >= 0) size[static_cast<size_t>(parent)] += size[preorder[k]];
    }
  };
  if (!parents_first) walk();
  auto parents_then_children = [&](size_t k) {
    return parents_first ? k : static_cast<size_t>(preorder[k]);
  };
  const size_t walked = parents_first ? n : preorder.size();  // events reached from a root
  // Subtrees accumulate from the children up.
  t.subtree_ns = t.direct_ns;
  for (size_t k = walked; k-- > 0;) {
    const size_t i = parents_then_children(k);
    const int32_t parent = parent_of[i];
    if (parent >= 0) t.subtree_ns[parent] += t.subtree_ns[i];
  }
  // Summed subtrees are exact unless kernels of two different ops of one tree overlap; find
  // the trees where they do and take their ops' subtrees as unions. A tree is rooted at its
  // outermost op: kernels of other top-level ops (another stream's) do not count.
  std::vector<uint32_t> root(n);
  for (size_t i = 0; i < n; ++i) root[i] = static_cast<uint32_t>(i);
  for (size_t k = 0; k < walked; ++k) {
    const size_t i = parents_then_children(k);
    const int32_t parent = parent_of[i];
    root[i] = parent >= 0 && is_op[root[parent]] ? root[parent] : static_cast<uint32_t>(i);
  }
  std::vector<GroupedInterval> by_root = direct;
  for (GroupedInterval& item : by_root) item.group = root[item.group];
  const std::vector<GroupLength> trees = UnionLengthOfEachGroup(by_root);
  by_root = {};
  // A tree whose kernels' union is shorter than their sum has two that overlap.
  std::vector<uint8_t> overlapping_tree;
  for (const GroupLength& tree : trees) {
    if (tree.union_ns >= tree.summed_ns) continue;
    if (overlapping_tree.empty()) overlapping_tree.assign(n, 0);
    overlapping_tree[tree.group] = 1;
  }
  if (overlapping_tree.empty()) return t;
  if (preorder.empty()) walk();
  // The kernels of those trees by the position of their op.
  std::vector<GroupedInterval> by_position;
  for (const GroupedInterval& item : direct) {
    if (overlapping_tree[root[item.group]])
      by_position.push_back({position[item.group], item.span});
  }
  std::stable_sort(
      by_position.begin(), by_position.end(),
      [](const GroupedInterval& a, const GroupedInterval& b) { return a.group < b.group; });
  // Every op re-reads the kernels below it: depth x kernels in all. Past a budget (only a
  // pathological nesting reaches it) the remaining ops keep their summed subtree times.
  int64_t budget = 32 * static_cast<int64_t>(by_position.size()) + (int64_t{1} << 22);
  std::vector<Interval> spans;
  for (size_t i = 0; i < n && budget > 0; ++i) {
    if (!overlapping_tree[root[i]] || t.subtree_ns[i] == 0) continue;
    const uint32_t first = position[i], end = position[i] + size[i];
    auto from =
        std::lower_bound(by_position.begin(), by_position.end(), first,
                         [](const GroupedInterval& a, uint32_t pos) { return a.group < pos; });
    spans.clear();
    for (auto it = from; it != by_position.end() && it->group < end; ++it) {
      spans.push_back(it->span);
    }
    budget -= static_cast<int64_t>(spans.size()) + 1;
    t.subtree_ns[i] = TotalLength(MergeIntervals(spans));
  }
  return t;
}

namespace {

struct OpKey {
  uint32_t name, dims, types;
  bool operator<(const OpKey& o) const {
    return std::tie(name, dims, types) < std::tie(o.name, o.dims, o.types);
  }
};
struct OpAcc {
  OpStats stats;
  std::unordered_map<uint32_t, int64_t> parents;
};
using OpGroups = std::map<OpKey, OpAcc>;

// Groups the ops with GPU work in their subtree by (name, shapes) into `by_shape` and by name
// into `by_name`, either of which may be null: one pass over the events (a scan of the whole
// event store) serves both tables.
void GroupOps(const TraceData& trace, const OpKernelTimes& times, OpGroups* by_shape,
              OpGroups* by_name) {
  // For each event, the call it belongs to: an op nested in an op of its own name
  // (aten::arange -> aten::arange(out=), aten::to -> aten::to) is part of the outermost such
  // op's call (TraceLens counts it once), the inner one's kernels counting as the outermost
  // one's direct kernels; every other event is its own call. Parents precede children, so a
  // parent's call is known when its child is reached.
  std::vector<int32_t> call(trace.cpu.size());
  auto key_of = [&](const CpuEvent& ev, bool shape) {
    const CpuArgs& args = trace.Args(ev);
    return OpKey{ev.name, shape ? args.input_dims : 0u, shape ? args.input_types : 0u};
  };
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    call[i] = static_cast<int32_t>(i);
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp) continue;
    const int32_t parent = EnclosingOp(trace, static_cast<int32_t>(i));
    if (parent >= 0 && trace.cpu[parent].name == ev.name) call[i] = call[parent];
    if (times.subtree_ns[i] == 0) continue;
    if (call[i] != static_cast<int32_t>(i)) {
      const CpuEvent& outer = trace.cpu[call[i]];
      for (OpGroups* groups : {by_shape, by_name}) {
        if (groups == nullptr) continue;
        OpStats& s = (*groups)[key_of(outer, groups == by_shape)].stats;
        s.direct_kernel_ns += times.direct_ns[i];
        s.kernels += times.kernel_count[i];
      }
      continue;
    }
    for (OpGroups* groups : {by_shape, by_name}) {
      if (groups == nullptr) continue;
      const OpKey key = key_of(ev, groups == by_shape);
      OpAcc& acc = (*groups)[key];
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
  }
}

// The rows of `groups`: each with its most frequent parent, largest direct time first.
std::vector<OpStats> OpRows(const TraceData& trace, OpGroups& groups) {
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

}  // namespace

std::vector<OpStats> SummarizeOps(const TraceData& trace, const OpKernelTimes& times,
                                  bool by_shape) {
  OpGroups groups;
  GroupOps(trace, times, by_shape ? &groups : nullptr, by_shape ? nullptr : &groups);
  return OpRows(trace, groups);
}

OpSummaries SummarizeOpsByShapeAndName(const TraceData& trace, const OpKernelTimes& times) {
  OpGroups by_shape, by_name;
  GroupOps(trace, times, &by_shape, &by_name);
  return {OpRows(trace, by_shape), OpRows(trace, by_name)};
}

std::vector<OpPathStats> SummarizeOpTree(const TraceData& trace, const OpKernelTimes& times,
                                         int max_depth) {
  // Ops whose chains of enclosing ops' names are equal share a path: one node of a tree of
  // (enclosing path, name), found once per op from its enclosing op's node instead of the path
  // being spelt out per op.
  struct Node {
    int32_t parent;  // node, -1 at the top
    uint32_t name;
    int depth;
    OpPathStats stats;
  };
  std::vector<Node> nodes;
  std::unordered_map<uint64_t, int32_t> node_of;   // (parent node + 1) << 32 | name -> node
  constexpr int32_t kUnknown = -2, kTooDeep = -3;  // -1: the top, above every node
  std::vector<int32_t> node_of_op(trace.cpu.size(), kUnknown);
  std::vector<int32_t> pending;  // ops whose node is found after their enclosing op's
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp || times.subtree_ns[i] == 0) continue;
    pending.clear();
    int32_t above = static_cast<int32_t>(i);
    while (above >= 0 && node_of_op[above] == kUnknown) {
      pending.push_back(above);
      above = EnclosingOp(trace, above);
    }
    int32_t node = above >= 0 ? node_of_op[above] : -1;
    for (size_t k = pending.size(); k-- > 0;) {
      const int32_t op = pending[k];
      if (node != kTooDeep) {
        const int depth = node < 0 ? 0 : nodes[node].depth + 1;
        if (depth >= max_depth) {
          node = kTooDeep;  // counted in its ancestors' subtree time already
        } else {
          const uint32_t name = trace.cpu[op].name;
          const uint64_t key = (static_cast<uint64_t>(node + 1) << 32) | name;
          auto [it, added] = node_of.try_emplace(key, static_cast<int32_t>(nodes.size()));
          if (added) nodes.push_back({node, name, depth, {}});
          node = it->second;
        }
      }
      node_of_op[op] = node;
    }
    if (node == kTooDeep) continue;
    OpPathStats& s = nodes[node].stats;
    s.count++;
    s.direct_kernel_ns += times.direct_ns[i];
    s.subtree_kernel_ns += times.subtree_ns[i];
  }
  std::vector<OpPathStats> out;
  for (const Node& n : nodes) {
    if (n.stats.count == 0) continue;
    OpPathStats s = n.stats;
    s.depth = n.depth;
    // Spelt from the top: "outer > ... > op".
    std::vector<std::string_view> chain;
    for (int32_t k = static_cast<int32_t>(&n - nodes.data()); k >= 0; k = nodes[k].parent)
      chain.push_back(trace.Name(nodes[k].name));
    for (size_t k = chain.size(); k-- > 0;) {
      if (!s.path.empty()) s.path += " > ";
      s.path += chain[k];
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const OpPathStats& a, const OpPathStats& b) { return a.path < b.path; });
  return out;
}

}  // namespace sextant
