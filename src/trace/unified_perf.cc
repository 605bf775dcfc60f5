#include "trace/unified_perf.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "trace/gpu_timeline.h"
#include "trace/intervals.h"
#include "trace/iteration_annotation.h"
#include "trace/op_arguments.h"
#include "trace/op_category.h"

namespace sextant {
namespace {

constexpr double kNotANumber = std::numeric_limits<double>::quiet_NaN();

// A parameter value as Python prints it inside a dict: numbers, booleans, None and tuples as
// the sheet shows them, anything else as a quoted string.
std::string DictValue(const std::string& text) {
  if (text.empty()) return "None";
  if (text == "True" || text == "False" || text == "None" || text.front() == '(' ||
      text.front() == '[') {
    return text;
  }
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc() && end == text.data() + text.size()) return text;
  return "'" + text + "'";
}

std::string ParamsDict(const PricedCall& call, std::string_view op) {
  std::vector<size_t> order;
  for (size_t i = 0; i < call.names.size() && i < call.params.size(); ++i) {
    // A parameter this op does not have (a forward norm's output_mask) is not in its dict.
    if (call.params[i].empty() && call.names[i] == call.optional_param) continue;
    // The batch of a GEMM: first in a batched GEMM's model (TraceLens's aten_bmm,
    // aten_baddbmm), last in aten_mm's and aten_addmm's.
    if (call.sheet == "GEMM" && call.names[i] == "B") {
      if (call.params[i].empty()) continue;
      if (op == "aten::bmm" || op == "aten::baddbmm") {
        order.insert(order.begin(), i);
        continue;
      }
      order.push_back(i);
    } else {
      order.push_back(i);
    }
  }
  std::string out = "{";
  for (size_t i : order) {
    if (out.size() > 1) out += ", ";
    out += "'" + std::string(call.names[i]) + "': " + DictValue(call.params[i]);
  }
  return out + "}";
}

// One collected call: an op, or a kernel no collected op covers (synthetic).
struct UnifiedCall {
  int32_t cpu = -1;  // the op, or the synthetic row's parent (an op or a runtime call)
  bool synthetic = false;
  std::vector<uint32_t> kernels;  // indices into trace.gpu, by start
};

// The union length of intervals sorted by start (one call's kernels), without a copy.
int64_t UnionLengthOfSorted(const std::vector<uint32_t>& kernels, const TraceData& trace) {
  int64_t total = 0, begin = 0, end = INT64_MIN;
  for (uint32_t k : kernels) {
    const GpuEvent& g = trace.gpu[k];
    if (g.ts_ns > end) {
      if (end != INT64_MIN) total += end - begin;
      begin = g.ts_ns;
      end = g.end_ns();
    } else {
      end = std::max(end, g.end_ns());
    }
  }
  if (end != INT64_MIN) total += end - begin;
  return total;
}

struct UnifiedGroup {
  UnifiedPerfRow row;
  std::vector<double> duration, kernel, tflops, tbps;
  std::vector<std::pair<uint32_t, int64_t>> positions;  // the first call's kernels
  std::vector<std::vector<double>> position_us;
  int64_t kernel_ns = 0;  // exact, for the order of rows
  size_t order = 0;
  bool priced = false;  // the row holds a priced call's FLOPs, bytes and parameters
};

}  // namespace

std::vector<UnifiedPerfRow> SummarizeUnifiedPerf(const TraceData& trace,
                                                 const std::vector<uint32_t>& events,
                                                 const std::vector<uint8_t>& recompute_cpu) {
  const size_t n = trace.cpu.size();
  if (std::none_of(trace.cpu.begin(), trace.cpu.end(),
                   [](const CpuEvent& ev) { return ev.kind == CpuKind::kOp; }))
    return {};
  NameTest is_comm(trace, IsCommunicationKernelName);
  // One byte of flags per event, and the per-event arrays of the op tree freed before those
  // of the kernels' calls are made: a million events cost a few bytes each here, all of them
  // memory first touched by this function.
  constexpr uint8_t kLaunches = 1;       // launched GPU activities itself
  constexpr uint8_t kComm = 2;           // a collective among its own or its subtree's
  constexpr uint8_t kModelled = 4;       // an op with a perf model
  constexpr uint8_t kModelledBelow = 8;  // a modelled op below it launched something
  constexpr uint8_t kCollected = 16;     // taken whole as one call
  constexpr uint8_t kOp = 32;            // an op (not a runtime call or an annotation)
  std::vector<uint8_t> flags(n, 0);
  // The events' parents, copied in this function's one pass over the event store: the passes
  // below read these 4 bytes an event instead of the events themselves. Children follow their
  // parents in trace.cpu; the few passes that rely on it check.
  std::vector<int32_t> parent(n);
  {
    NameTest has_model_name(trace, HasPerfModel);
    for (size_t i = 0; i < n; ++i) {
      const CpuEvent& ev = trace.cpu[i];
      parent[i] = ev.parent;
      if (ev.kind == CpuKind::kOp) flags[i] = has_model_name(ev.name) ? kOp | kModelled : kOp;
    }
  }
  std::vector<int32_t> order;
  {
    // GPU activities each op launched itself, and in its subtree; collectives among them.
    std::vector<uint32_t> subtree(n, 0);
    for (uint32_t i : events) {
      const GpuEvent& g = trace.gpu[i];
      if (g.op < 0) continue;
      subtree[g.op]++;
      flags[g.op] |= kLaunches;
      if (is_comm(g.name)) flags[g.op] |= kComm;
    }
    // One backward pass fills every subtree.
    for (size_t i = n; i-- > 0;) {
      const int32_t p = parent[i];
      if (p < 0) continue;
      subtree[p] += subtree[i];
      const bool modelled_launch = (flags[i] & kModelled) && subtree[i] > 0;
      flags[p] |= (flags[i] & (kComm | kModelledBelow)) | (modelled_launch ? kModelledBelow : 0);
    }
    // The op tree: each op's nearest enclosing op (other events are transparent). An op's
    // children, in trace order, are children[child_start[op] .. child_start[op + 1]): one
    // array for all, not a vector per event.
    std::vector<int32_t> parent_op(n, -1);  // every event's EnclosingOp
    std::vector<uint32_t> child_start(n + 1, 0);
    std::vector<int32_t> roots;
    for (size_t i = 0; i < n; ++i) {
      int32_t p = parent[i];
      if (p >= 0 && !(flags[p] & kOp)) {
        if (static_cast<size_t>(p) < i) {
          p = parent_op[p];  // the parent's own, found already
        } else {
          while (p >= 0 && !(flags[p] & kOp)) p = parent[p];
        }
      }
      parent_op[i] = p;
      if (!(flags[i] & kOp)) continue;
      if (p >= 0)
        child_start[p]++;
      else
        roots.push_back(static_cast<int32_t>(i));
    }
    // Counts to the ends of the ranges; filling each range from its end, last child first,
    // leaves child_start[op] at the range's beginning.
    for (size_t i = 1; i <= n; ++i) child_start[i] += child_start[i - 1];
    std::vector<int32_t> children(child_start[n]);
    for (size_t i = n; i-- > 0;) {
      if ((flags[i] & kOp) && parent_op[i] >= 0)
        children[--child_start[parent_op[i]]] = static_cast<int32_t>(i);
    }
    std::vector<int32_t>().swap(parent_op);
    // From each root down: an op with a perf model is taken whole; else, when some op below
    // has one, its children are visited; else an op launching kernels itself is taken whole
    // (not when it launches collectives); else its children are visited.
    std::vector<int32_t> stack(roots.rbegin(), roots.rend());
    while (!stack.empty()) {
      const int32_t i = stack.back();
      stack.pop_back();
      if (subtree[i] == 0) continue;
      bool take = false, descend = false;
      if (flags[i] & kModelled) {
        take = true;
      } else if (flags[i] & kModelledBelow) {
        descend = true;
      } else if (flags[i] & kLaunches) {
        take = !(flags[i] & kComm);
      } else {
        descend = true;
      }
      if (take) {
        flags[i] |= kCollected;
        order.push_back(i);
      }
      if (descend) {
        for (uint32_t c = child_start[i + 1]; c-- > child_start[i];) stack.push_back(children[c]);
      }
    }
  }
  // Calls whose model reads the step annotation (inference attention); the annotations are
  // found once the first such call comes.
  NameTest reads_annotation(trace, PerfModelReadsAnnotation);
  std::optional<StepAnnotations> steps;
  // Each event's nearest collected ancestor (or itself), in place of its parent: a parent
  // before it is done already; one after it (out of order) counts as none.
  std::vector<int32_t>& covered_by = parent;
  for (size_t i = 0; i < n; ++i) {
    const int32_t p = covered_by[i];
    covered_by[i] = (flags[i] & kCollected)                ? static_cast<int32_t>(i)
                    : p >= 0 && static_cast<size_t>(p) < i ? covered_by[p]
                                                           : -1;
  }
  std::vector<UnifiedCall> calls(order.size());
  std::vector<int32_t> call_of(n, -1);
  for (size_t c = 0; c < order.size(); ++c) {
    calls[c].cpu = order[c];
    call_of[order[c]] = static_cast<int32_t>(c);
  }
  std::vector<uint32_t> by_start(events);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](uint32_t a, uint32_t b) { return trace.gpu[a].ts_ns < trace.gpu[b].ts_ns; });
  // Each op's first kernel of its own: TraceLens names an op's category from it when the
  // op's name does not (its kernel launchers carry their direct kernels).
  std::vector<int32_t> first_direct(n, -1);
  std::vector<UnifiedCall> synthetic;
  for (uint32_t i : by_start) {
    const GpuEvent& g = trace.gpu[i];
    if (g.op >= 0 && first_direct[g.op] < 0) first_direct[g.op] = static_cast<int32_t>(i);
    if (g.op >= 0 && covered_by[g.op] >= 0) {
      calls[call_of[covered_by[g.op]]].kernels.push_back(i);
      continue;
    }
    if (is_comm(g.name)) continue;
    // Not under a collected op: a row of its own under its innermost op, else under the
    // runtime call that launched it.
    const int32_t parent = g.op >= 0 ? g.op : g.launcher;
    if (parent < 0) continue;
    UnifiedCall s;
    s.cpu = parent;
    s.synthetic = true;
    s.kernels = {i};
    synthetic.push_back(std::move(s));
  }
  for (UnifiedCall& s : synthetic) calls.push_back(std::move(s));

  // A group is one (name, category, process and thread, four argument records, recompute),
  // as TraceLens groups its rows. Each part is the id of its text in a pool of its own: a
  // million calls cost integer keys, not strings built, parsed and compared per call.
  using GroupKey = std::array<uint32_t, 8>;
  std::map<GroupKey, UnifiedGroup> groups;
  StringPool names, categories, places;
  ArgumentReprs reprs(trace);
  constexpr uint32_t kUnseen = UINT32_MAX;
  std::vector<uint32_t> name_of_id(trace.strings.size(), kUnseen);
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> synthetic_name;  // (parent, kernel) names
  std::map<std::array<uint32_t, 3>, uint32_t> category_of;  // (name index, op name, kernel name)
  std::vector<uint32_t> place_of_thread(trace.threads.size(), kUnseen);
  std::map<std::array<uint32_t, 6>, std::optional<PricedCall>> priced_by_record;
  for (size_t c = 0; c < calls.size(); ++c) {
    const UnifiedCall& call = calls[c];
    if (call.kernels.empty()) continue;
    const CpuEvent& ev = trace.cpu[call.cpu];
    const bool has_model = !call.synthetic && (flags[call.cpu] & kModelled);
    const std::optional<PricedCall>* priced = nullptr;
    if (has_model) {
      uint32_t annotation = 0;
      if (reads_annotation(ev.name)) {
        if (!steps) steps.emplace(trace);
        annotation = steps->Of(call.cpu);
      }
      const CpuArgs& a = trace.Args(ev);
      const std::array<uint32_t, 6> record = {ev.name,         a.input_dims,      a.input_types,
                                              a.input_strides, a.concrete_inputs, annotation};
      auto [it, fresh] = priced_by_record.try_emplace(record);
      if (fresh) it->second = PriceCall(trace, ev, annotation ? trace.Name(annotation) : "");
      // A call its model cannot price (no shapes recorded, arguments it does not read) stays
      // a modelled row without FLOPs or bytes: TraceLens keeps such a row and its kernel time.
      priced = &it->second;
    }
    uint32_t name = 0;
    if (call.synthetic) {
      const uint32_t kernel = trace.gpu[call.kernels.front()].name;
      auto [it, fresh] = synthetic_name.try_emplace({ev.name, kernel}, 0);
      if (fresh) {
        it->second = names.Intern(std::string(trace.Name(ev.name)) + "->" +
                                  std::string(trace.Name(kernel)) + " (Synthetic Op)");
      }
      name = it->second;
    } else {
      uint32_t& index = name_of_id[ev.name];
      if (index == kUnseen) index = names.Intern(trace.Name(ev.name));
      name = index;
    }
    // A synthetic row copies its parent op, own kernels included; its name is in no table.
    const int32_t own = first_direct[call.cpu];
    const uint32_t own_name = own >= 0 ? trace.gpu[own].name : 0;
    auto [category_at, new_category] = category_of.try_emplace({name, ev.name, own_name}, 0);
    if (new_category) {
      const std::string_view first_kernel = own >= 0 ? trace.Name(own_name) : "";
      category_at->second = categories.Intern(
          trace.xla_pid >= 0 ? TraceLensJaxCategory(first_kernel, trace.Name(ev.name))
                             : TraceLensOpCategory(names.Get(name), first_kernel));
    }
    uint32_t& place = place_of_thread[ev.thread];
    if (place == kUnseen) {
      place = places.Intern(std::string(trace.ProcessName(ev.thread)) + '\x1f' +
                            std::string(trace.ProcessLabel(ev.thread)) + '\x1f' +
                            std::string(trace.ThreadName(ev.thread)));
    }
    // The argument records shown: the op's own, or a synthetic row's parent op's (a runtime
    // call has none).
    const CpuArgs& args = ev.kind == CpuKind::kOp ? trace.Args(ev) : trace.cpu_args.Get(0);
    const bool recompute = !recompute_cpu.empty() && recompute_cpu[call.cpu] != 0;
    const GroupKey group_key = {name,
                                category_at->second,
                                place,
                                reprs.Of(args.input_dims),
                                reprs.Of(args.input_types),
                                reprs.Of(args.input_strides),
                                reprs.Of(args.concrete_inputs),
                                recompute ? 1u : 0u};
    auto [it, fresh] = groups.try_emplace(group_key);
    UnifiedGroup& group = it->second;
    if (fresh) {
      UnifiedPerfRow& row = group.row;
      row.name = names.Get(name);
      row.category = categories.Get(category_at->second);
      row.recompute = recompute;
      row.thread = ev.thread;
      row.input_dims = reprs.Text(group_key[3]);
      row.input_types = reprs.Text(group_key[4]);
      row.input_strides = reprs.Text(group_key[5]);
      row.concrete_inputs = reprs.Text(group_key[6]);
      row.first_cpu = call.cpu;
      group.order = c;
      row.has_perf_model = has_model;
      row.gflops = row.mib = row.flops_per_byte = kNotANumber;
    }
    // The first priced call's numbers (pandas' "first" skips the calls without: an attention
    // call outside any step has none, a later one inside a step has them).
    const PricedCall* price = priced != nullptr && priced->has_value() ? &**priced : nullptr;
    if (price != nullptr && !group.priced) {
      group.priced = true;
      group.row.gflops = price->flops / 1e9;
      group.row.mib = price->bytes / (1 << 20);
      if (price->bytes > 0) group.row.flops_per_byte = price->flops / price->bytes;
      group.row.perf_params = ParamsDict(*price, trace.Name(ev.name));
    }
    // The call's GPU busy time: its kernels' union (TraceLens's GPUEventAnalyser busy_time),
    // so that kernels overlapping on two streams count once. They are in order of start.
    const int64_t kernel_ns = UnionLengthOfSorted(call.kernels, trace);
    group.kernel_ns += kernel_ns;
    if (fresh) {
      for (uint32_t k : call.kernels)
        group.positions.push_back({trace.gpu[k].name, trace.gpu[k].stream});
      group.position_us.resize(group.positions.size());
    }
    if (call.kernels.size() == group.positions.size()) {
      for (size_t k = 0; k < call.kernels.size(); ++k)
        group.position_us[k].push_back(static_cast<double>(trace.gpu[call.kernels[k]].dur_ns) /
                                       1e3);
    }
    const double us = static_cast<double>(kernel_ns) / 1e3;
    group.duration.push_back(static_cast<double>(ev.dur_ns) / 1e3);
    group.kernel.push_back(us);
    if (has_model) {
      const bool rated = price != nullptr && us > 0;
      group.tflops.push_back(rated ? price->flops / 1e12 / (us / 1e6) : kNotANumber);
      group.tbps.push_back(rated ? price->bytes / 1e12 / (us / 1e6) : kNotANumber);
    }
  }
  std::vector<UnifiedGroup*> sorted;
  for (auto& [key, group] : groups) {
    UnifiedPerfRow& row = group.row;
    row.duration_us = SummarizeCalls(std::move(group.duration));
    row.kernel_us = SummarizeCalls(std::move(group.kernel));
    row.tflops = SummarizeCalls(std::move(group.tflops));
    row.tbps = SummarizeCalls(std::move(group.tbps));
    for (size_t k = 0; k < group.positions.size(); ++k) {
      const size_t calls = group.position_us[k].size();
      UnifiedPerfKernel kernel{std::string(trace.Name(group.positions[k].first)),
                               group.positions[k].second,
                               SummarizeCalls(std::move(group.position_us[k]))};
      // numpy's std: over n, not n - 1.
      if (calls >= 1) {
        kernel.us.std = calls == 1
                            ? 0.0
                            : kernel.us.std * std::sqrt((calls - 1.0) / static_cast<double>(calls));
      }
      row.kernels.push_back(std::move(kernel));
    }
    std::stable_sort(row.kernels.begin(), row.kernels.end(), [](const auto& a, const auto& b) {
      if (a.us.sum != b.us.sum) return a.us.sum < b.us.sum;
      return a.name < b.name;
    });
    sorted.push_back(&group);
  }
  // Largest kernel total first (in whole nanoseconds: summed microsecond doubles would order
  // equal totals by rounding noise); ties by the first call's position in the trace.
  std::sort(sorted.begin(), sorted.end(), [&](const UnifiedGroup* a, const UnifiedGroup* b) {
    if (a->kernel_ns != b->kernel_ns) return a->kernel_ns > b->kernel_ns;
    const CpuEvent& x = trace.cpu[a->row.first_cpu];
    const CpuEvent& y = trace.cpu[b->row.first_cpu];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    return a->order < b->order;
  });
  std::vector<UnifiedPerfRow> out;
  out.reserve(sorted.size());
  for (UnifiedGroup* g : sorted) out.push_back(std::move(g->row));
  return out;
}

}  // namespace sextant
