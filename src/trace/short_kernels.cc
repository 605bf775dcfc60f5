#include "trace/short_kernels.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "trace/op_arguments.h"

namespace sextant {
namespace {

// numpy.histogram with `bins` equal bins over [min, max] (numpy/lib/_histograms_impl.py): edges
// from linspace (i x step + first, the last edge exactly max), a value's bin from its scaled
// offset corrected by one against the edges, and max itself in the last bin. A single value
// gets the range [v - 0.5, v + 0.5].
std::vector<ShortKernelBin> Histogram(const std::vector<double>& values, int bins) {
  if (values.empty() || bins < 1) return {};
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  double first = *lo, last = *hi;
  if (first == last) {
    first -= 0.5;
    last += 0.5;
  }
  std::vector<double> edges(static_cast<size_t>(bins) + 1);
  const double step = (last - first) / bins;
  for (int i = 0; i < bins; ++i) edges[static_cast<size_t>(i)] = i * step + first;
  edges[static_cast<size_t>(bins)] = last;
  std::vector<ShortKernelBin> out(static_cast<size_t>(bins));
  for (int i = 0; i < bins; ++i) {
    out[static_cast<size_t>(i)].start_us = edges[static_cast<size_t>(i)];
    out[static_cast<size_t>(i)].end_us = edges[static_cast<size_t>(i) + 1];
  }
  const double norm = bins / (last - first);
  for (double v : values) {
    int i = static_cast<int>((v - first) * norm);
    if (i >= bins) i = bins - 1;
    if (i < 0) i = 0;
    if (v < edges[static_cast<size_t>(i)] && i > 0) {
      --i;
    } else if (i != bins - 1 && v >= edges[static_cast<size_t>(i) + 1]) {
      ++i;
    }
    ++out[static_cast<size_t>(i)].count;
  }
  return out;
}

}  // namespace

ShortKernelStudy StudyShortKernels(const TraceData& trace, double threshold_us, int bins) {
  ShortKernelStudy out;
  out.threshold_us = threshold_us;
  out.bins = bins;
  bool has_ops = false;
  for (const CpuEvent& c : trace.cpu) has_ops = has_ops || c.kind == CpuKind::kOp;

  std::vector<double> durations_us;
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;
  std::map<Key, ShortKernelGroup> groups;
  std::unordered_map<uint32_t, std::string> reprs;  // interned record -> its Python repr
  auto repr = [&](uint32_t id) -> const std::string& {
    auto it = reprs.find(id);
    if (it == reprs.end()) it = reprs.emplace(id, PythonRepr(trace.Name(id))).first;
    return it->second;
  };
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind != GpuKind::kKernel) continue;
    const double us = static_cast<double>(g.dur_ns) / 1e3;
    if (!(us < threshold_us)) continue;
    ++out.kernels;
    out.total_ns += g.dur_ns;
    durations_us.push_back(us);
    Key key{0, 0, 0, 0, g.name};
    if (has_ops) {
      // Grouped only with every record of its op present, as pandas' groupby drops a row
      // with a missing key.
      if (g.op < 0) continue;
      const CpuEvent& op = trace.cpu[static_cast<size_t>(g.op)];
      const CpuArgs& args = trace.Args(op);
      if (args.input_dims == 0 || args.input_strides == 0 || args.concrete_inputs == 0) continue;
      key = {op.name, args.input_dims, args.input_strides, args.concrete_inputs, g.name};
    }
    ShortKernelGroup& s = groups[key];
    if (s.count == 0) {
      s.name = std::string(trace.Name(g.name));
      if (has_ops) {
        s.parent_op = std::string(trace.Name(std::get<0>(key)));
        s.input_dims = repr(std::get<1>(key));
        s.input_strides = repr(std::get<2>(key));
        s.concrete_inputs = repr(std::get<3>(key));
      }
    }
    ++s.count;
    s.total_ns += g.dur_ns;
  }
  out.histogram = Histogram(durations_us, bins);
  out.groups.reserve(groups.size());
  for (auto& [key, s] : groups) out.groups.push_back(std::move(s));
  std::sort(
      out.groups.begin(), out.groups.end(),
      [](const ShortKernelGroup& a, const ShortKernelGroup& b) {
        if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
        return std::tie(a.parent_op, a.input_dims, a.input_strides, a.concrete_inputs, a.name) <
               std::tie(b.parent_op, b.input_dims, b.input_strides, b.concrete_inputs, b.name);
      });
  return out;
}

}  // namespace sextant
