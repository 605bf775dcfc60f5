#include "trace/gemm_calls.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "trace/op_arguments.h"
#include "trace/roofline.h"

namespace sextant {
namespace {

// Where each primitive keeps A and B among its inputs (TraceLens's get_param_details).
struct GemmPrimitive {
  std::string_view name;
  size_t a;  // index of A; B follows it
};
constexpr GemmPrimitive kPrimitives[] = {{"aten::mm", 0},
                                         {"aten::addmm", 1},
                                         {"aten::_scaled_mm", 0},
                                         {"aten::bmm", 0},
                                         {"aten::baddbmm", 1}};

// The Python tuple of one element of a JSON list of lists ("[[512, 1], [1, 512]]", 1 ->
// "(1, 512)"), or "None".
std::string ElementRepr(std::string_view raw_list, size_t index) {
  if (raw_list.empty()) return "None";
  std::vector<Shape> shapes = ParseInputDims(raw_list);
  if (index >= shapes.size()) return "None";
  std::string text = "[";
  for (size_t i = 0; i < shapes[index].size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shapes[index][i]);
  }
  return PythonRepr(text + "]");
}

}  // namespace

CallStats SummarizeCalls(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  CallStats s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    s.mean = s.median = s.std = s.min = s.max = nan;
    return s;
  }
  std::sort(values.begin(), values.end());
  for (double v : values) s.sum += v;
  const size_t n = values.size();
  s.mean = s.sum / static_cast<double>(n);
  s.median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  s.min = values.front();
  s.max = values.back();
  if (n < 2) {
    s.std = std::numeric_limits<double>::quiet_NaN();  // pandas' sample std of one value
  } else {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

std::vector<GemmCallGroup> SummarizeGemmCalls(const TraceData& trace, const OpKernelTimes& times,
                                              const std::vector<uint8_t>& recompute_cpu) {
  // The primitive of each op name id, or none.
  std::map<uint32_t, const GemmPrimitive*> primitive_of;
  struct Acc {
    GemmCallGroup group;
    std::vector<double> kernel_us, tflops, tbps;
  };
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, bool, std::string, std::string,
                      std::string, int64_t, bool>,
           Acc>
      groups;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp) continue;
    auto [known, fresh] = primitive_of.try_emplace(ev.name, nullptr);
    if (fresh) {
      for (const auto& p : kPrimitives)
        if (trace.Name(ev.name) == p.name) known->second = &p;
    }
    const GemmPrimitive* p = known->second;
    if (p == nullptr) continue;
    const std::string_view dims = trace.Name(ev.input_dims), types = trace.Name(ev.input_types);
    std::optional<OpCost> cost = ModelOpCost(p->name, dims, types, trace.Name(ev.concrete_inputs));
    if (!cost) continue;  // shapes not recorded, or not a matrix product
    const std::vector<std::string> type_list = ParseStringList(types);
    std::string dtype_a_b = "(";
    for (size_t t = p->a; t < p->a + 2; ++t) {
      if (t > p->a) dtype_a_b += ", ";
      dtype_a_b += t < type_list.size() ? PythonRepr("\"" + type_list[t] + "\"") : "None";
    }
    dtype_a_b += ")";
    const std::string_view strides = trace.Name(ev.input_strides);
    const bool recompute = !recompute_cpu.empty() && recompute_cpu[i];
    const auto& g = cost->gemm;
    auto key =
        std::make_tuple(std::string(p->name), static_cast<int64_t>(g.m), static_cast<int64_t>(g.n),
                        static_cast<int64_t>(g.k), cost->flops > 2 * g.batch * g.m * g.n * g.k,
                        ElementRepr(strides, p->a), ElementRepr(strides, p->a + 1), dtype_a_b,
                        static_cast<int64_t>(g.batch), recompute);
    Acc& acc = groups[key];
    GemmCallGroup& group = acc.group;
    if (acc.kernel_us.empty()) {
      std::tie(group.name, group.m, group.n, group.k, group.bias, group.stride_a, group.stride_b,
               group.dtype_a_b, group.batch, group.recompute) = key;
      group.input_dims = PythonRepr(dims, PythonSequence::kList);
      group.input_types = PythonRepr(types, PythonSequence::kList);
      group.input_strides = PythonRepr(strides, PythonSequence::kList);
      group.concrete_inputs = PythonRepr(trace.Name(ev.concrete_inputs), PythonSequence::kList);
      group.gflops = cost->flops / 1e9;
      group.bytes = cost->bytes;
    }
    const double us = static_cast<double>(times.subtree_ns[i]) / 1e3;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    acc.kernel_us.push_back(us);
    acc.tflops.push_back(us > 0 ? cost->flops / 1e12 / (us / 1e6) : nan);
    acc.tbps.push_back(us > 0 ? cost->bytes / 1e12 / (us / 1e6) : nan);
  }
  std::vector<GemmCallGroup> out;
  for (auto& [key, acc] : groups) {
    acc.group.kernel_us = SummarizeCalls(std::move(acc.kernel_us));
    acc.group.tflops = SummarizeCalls(std::move(acc.tflops));
    acc.group.tbps = SummarizeCalls(std::move(acc.tbps));
    out.push_back(std::move(acc.group));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.kernel_us.sum > b.kernel_us.sum; });
  return out;
}

}  // namespace sextant
