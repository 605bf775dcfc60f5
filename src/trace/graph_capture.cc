#include "trace/graph_capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

namespace sextant {
namespace {

// One node of a captured graph: what it runs and the op that recorded it.
struct CapturedNode {
  std::string_view kernel;  // kernel name, "" when the capture does not name it
  GpuKind kind = GpuKind::kKernel;
  int32_t op = -1;  // index into the capture trace's cpu, -1 outside any op
};

struct CapturedGraph {
  const TraceData* trace = nullptr;
  std::vector<CapturedNode> nodes;
};

bool NameHas(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The launch calls between each BeginCapture and EndCapture of a thread, in order. Calls that
// only query the runtime (GetCaptureInfo, PointerGetAttribute, ...) record no node.
void FindCapturedGraphs(const TraceData& t, std::vector<CapturedGraph>& out) {
  uint32_t thread = UINT32_MAX;
  bool open = false;
  for (size_t i = 0; i < t.cpu.size(); ++i) {
    const CpuEvent& ev = t.cpu[i];
    if (ev.kind != CpuKind::kRuntime) continue;
    if (ev.thread != thread) {
      thread = ev.thread;
      open = false;
    }
    std::string_view name = t.Name(ev.name);
    if (NameHas(name, "StreamBeginCapture")) {
      out.push_back({&t, {}});
      open = true;
      continue;
    }
    if (NameHas(name, "StreamEndCapture")) {
      open = false;
      continue;
    }
    if (!open) continue;
    CapturedNode node;
    node.op = EnclosingOp(t, static_cast<int32_t>(i));
    if (const uint32_t kernel = t.Args(ev).launched_kernel; kernel != 0) {
      node.kernel = t.Name(kernel);
    } else if (NameHas(name, "Memcpy")) {
      node.kind = GpuKind::kMemcpy;
    } else if (NameHas(name, "Memset")) {
      node.kind = GpuKind::kMemset;
    } else if (!NameHas(name, "Launch")) {
      continue;
    }
    out.back().nodes.push_back(node);
  }
}

// Whether a replayed activity is the captured node: same kernel name (when the capture names
// it), or the same kind of memory operation. ROCm replays fills as kernels named
// "...fillBuffer..." for a captured memset.
bool NodeMatches(const CapturedNode& node, const TraceData& replay, const GpuEvent& g) {
  std::string_view name = replay.Name(g.name);
  if (node.kind == GpuKind::kMemcpy) return g.kind == GpuKind::kMemcpy || NameHas(name, "Memcpy");
  if (node.kind == GpuKind::kMemset) {
    return g.kind == GpuKind::kMemset || NameHas(name, "Memset") || NameHas(name, "fillBuffer");
  }
  if (node.kernel.empty()) return g.kind == GpuKind::kKernel;
  return node.kernel == name;
}

// For each replayed kernel (in time order) the captured node it replays, or an empty result.
// First in order, skipping captured nodes that did not replay (a profiler can drop a few);
// then, for graphs on several streams whose kernels interleave in time, by name: the k-th
// replayed kernel of a name is the k-th captured node of that name.
std::vector<int32_t> Align(const CapturedGraph& graph, const TraceData& replay,
                           const std::vector<uint32_t>& kernels) {
  if (graph.nodes.size() < kernels.size()) return {};
  std::vector<int32_t> node_of(kernels.size(), -1);
  size_t n = 0;
  bool in_order = true;
  for (size_t k = 0; k < kernels.size() && in_order; ++k) {
    const GpuEvent& g = replay.gpu[kernels[k]];
    while (n < graph.nodes.size() && !NodeMatches(graph.nodes[n], replay, g)) ++n;
    if (n == graph.nodes.size()) {
      in_order = false;
    } else {
      node_of[k] = static_cast<int32_t>(n++);
    }
  }
  if (in_order) return node_of;
  if (graph.nodes.size() != kernels.size()) return {};
  std::map<std::string_view, std::vector<int32_t>> nodes_by_name;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    nodes_by_name[graph.nodes[i].kernel].push_back(static_cast<int32_t>(i));
  }
  std::map<std::string_view, size_t> used;
  for (size_t k = 0; k < kernels.size(); ++k) {
    std::string_view name = replay.Name(replay.gpu[kernels[k]].name);
    auto it = nodes_by_name.find(name);
    if (it == nodes_by_name.end() || used[name] >= it->second.size()) return {};
    node_of[k] = it->second[used[name]++];
  }
  return node_of;
}

// Copies captured ops into the replay trace: names and argument texts re-interned, parents
// mapped, one replay thread per capture thread. Ancestors first, so parents precede children.
class OpImporter {
 public:
  explicit OpImporter(TraceData& replay) : replay_(replay) {}

  int32_t Import(const TraceData& capture, int32_t op) {
    if (op < 0) return -1;
    auto key = std::make_pair(&capture, op);
    if (auto it = imported_.find(key); it != imported_.end()) return it->second;
    int32_t parent = Import(capture, EnclosingOp(capture, op));
    const CpuEvent& src = capture.cpu[op];
    CpuEvent ev = src;
    ev.parent = parent;
    // Its CPU time was spent recording the graph, not in the profiled replay.
    ev.dur_ns = 0;
    ev.collective = -1;  // the capture's collectives are not this trace's
    ev.external_id = -1;
    ev.name = Reintern(capture, src.name);
    CpuArgs args = capture.Args(src);
    args.input_dims = Reintern(capture, args.input_dims);
    args.input_types = Reintern(capture, args.input_types);
    args.input_strides = Reintern(capture, args.input_strides);
    args.concrete_inputs = Reintern(capture, args.concrete_inputs);
    ev.args = replay_.cpu_args.Intern(args);
    ev.thread = Thread(capture, src.thread);
    replay_.cpu.push_back(ev);
    int32_t index = static_cast<int32_t>(replay_.cpu.size() - 1);
    imported_.emplace(key, index);
    return index;
  }
  size_t count() const { return imported_.size(); }

 private:
  uint32_t Reintern(const TraceData& capture, uint32_t id) {
    return id == 0 ? 0 : replay_.strings.Intern(capture.Name(id));
  }
  uint32_t Thread(const TraceData& capture, uint32_t thread) {
    auto key = std::make_pair(&capture, thread);
    if (auto it = threads_.find(key); it != threads_.end()) return it->second;
    replay_.threads.push_back(capture.threads[thread]);
    uint32_t index = static_cast<uint32_t>(replay_.threads.size() - 1);
    threads_.emplace(key, index);
    return index;
  }

  TraceData& replay_;
  std::map<std::pair<const TraceData*, int32_t>, int32_t> imported_;
  std::map<std::pair<const TraceData*, uint32_t>, uint32_t> threads_;
};

}  // namespace

GraphAttribution AttributeGraphReplays(TraceData& replay,
                                       const std::vector<const TraceData*>& captures) {
  GraphAttribution a;
  std::vector<CapturedGraph> graphs;
  for (const TraceData* c : captures) FindCapturedGraphs(*c, graphs);
  a.graphs_captured = graphs.size();

  // Replayed kernels per graph launch, in time order (trace.gpu is sorted by start).
  std::vector<int32_t> launches;
  std::unordered_map<int32_t, std::vector<uint32_t>> kernels_of;
  for (uint32_t i = 0; i < replay.gpu.size(); ++i) {
    int32_t l = replay.gpu[i].launcher;
    if (l < 0 || !replay.cpu[l].graph_launch) continue;
    auto& list = kernels_of[l];
    if (list.empty()) launches.push_back(l);
    list.push_back(i);
  }
  std::sort(launches.begin(), launches.end(),
            [&](int32_t x, int32_t y) { return replay.cpu[x].ts_ns < replay.cpu[y].ts_ns; });
  a.launches = launches.size();

  OpImporter importer(replay);
  size_t unmatched_kernels = 0;
  // Decode loops replay the same graph thousands of times: a launch whose kernel-name sequence
  // was seen before takes the graph found then, so the search over graphs runs once per
  // distinct replay. A budget of node comparisons bounds what a hostile pair of files costs.
  std::map<std::vector<uint32_t>, size_t> graph_of_sequence;  // kernel names -> graph or npos
  constexpr size_t kNoGraph = static_cast<size_t>(-1);
  constexpr size_t kComparisonBudget = size_t{1} << 28;
  size_t comparisons = 0;
  bool budget_spent = false;
  auto try_graph = [&](size_t gi, const std::vector<uint32_t>& kernels) {
    comparisons += graphs[gi].nodes.size() + kernels.size();
    return Align(graphs[gi], replay, kernels);
  };
  for (size_t li = 0; li < launches.size(); ++li) {
    const std::vector<uint32_t>& kernels = kernels_of[launches[li]];
    a.kernels += kernels.size();
    std::vector<uint32_t> sequence;
    sequence.reserve(kernels.size());
    for (uint32_t k : kernels) sequence.push_back(replay.gpu[k].name);
    std::vector<int32_t> node_of;
    const CapturedGraph* match = nullptr;
    auto known = graph_of_sequence.find(sequence);
    // Graphs are usually replayed in the order they were captured (piecewise graphs: one per
    // piece); try that one first, then the one this sequence matched before, then every one.
    if (graphs.size() == launches.size()) {
      node_of = try_graph(li, kernels);
      if (!node_of.empty()) match = &graphs[li];
    }
    if (match == nullptr && known != graph_of_sequence.end()) {
      if (known->second != kNoGraph) {
        node_of = try_graph(known->second, kernels);
        if (!node_of.empty()) match = &graphs[known->second];
      }
    } else if (match == nullptr) {
      size_t found = kNoGraph;
      for (size_t gi = 0; gi < graphs.size() && comparisons < kComparisonBudget; ++gi) {
        node_of = try_graph(gi, kernels);
        if (!node_of.empty()) {
          found = gi;
          match = &graphs[gi];
          break;
        }
      }
      if (comparisons >= kComparisonBudget) budget_spent = true;
      graph_of_sequence.emplace(std::move(sequence), found);
    }
    if (match == nullptr) {
      unmatched_kernels += kernels.size();
      continue;
    }
    ++a.launches_matched;
    for (size_t k = 0; k < kernels.size(); ++k) {
      int32_t op = importer.Import(*match->trace, match->nodes[node_of[k]].op);
      if (op < 0) continue;
      replay.gpu[kernels[k]].op = op;
      ++a.kernels_attributed;
    }
  }
  a.ops_imported = importer.count();
  replay.graph_kernels_attributed += a.kernels_attributed;
  if (budget_spent) {
    replay.warnings.push_back(
        "graph matching stopped early: the capture traces hold too many graphs for the replays' "
        "distinct kernel sequences");
  }
  if (a.launches_matched < a.launches) {
    replay.warnings.push_back(fmt::format(
        "{} of {} graph launches ({} kernels) match no captured graph of the {} in the capture "
        "traces: their kernels keep the op around the launch",
        a.launches - a.launches_matched, a.launches, unmatched_kernels, a.graphs_captured));
  }
  return a;
}

}  // namespace sextant
