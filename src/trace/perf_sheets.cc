#include "trace/perf_sheets.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "trace/op_arguments.h"
#include "trace/roofline.h"

namespace sextant {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One call's argument records, parsed once.
struct CallArgs {
  std::string_view name;
  std::string_view raw_dims, raw_types, raw_strides, raw_concrete;
  std::vector<Shape> dims;
  std::vector<std::string> types;
  std::vector<Shape> strides;  // empty when strides were not recorded
  std::vector<std::string> concrete;
};

struct Priced {
  std::vector<std::string> params;
  double flops = 0;
  double bytes = kNaN;
};

// Python's repr of a tuple of ints: "(16, 559)", "(5,)", "()".
std::string Tuple(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ',';
  return out + ")";
}

// Python's repr of a string, or None.
std::string PyStr(const std::optional<std::string>& s) {
  return s ? PythonRepr(nlohmann::json(*s).dump()) : "None";
}

std::string PyTuple(const std::vector<std::optional<std::string>>& items) {
  std::string out = "(";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += PyStr(items[i]);
  }
  if (items.size() == 1) out += ',';
  return out + ")";
}

std::optional<std::string> TypeAt(const CallArgs& a, size_t i) {
  if (i >= a.types.size()) return std::nullopt;
  return a.types[i];
}

// GEMM: M, N, K, bias, stride_A, stride_B, dtype_A_B, B. Strides are optional (None).
std::optional<Priced> PriceGemm(const CallArgs& a) {
  std::optional<OpCost> cost = ModelOpCost(a.name, a.raw_dims, a.raw_types, a.raw_concrete);
  if (!cost || cost->family != "GEMM") return std::nullopt;
  // A and B follow the accumulator C in addmm/baddbmm.
  const size_t first = a.name == "aten::addmm" || a.name == "aten::baddbmm" ? 1 : 0;
  auto stride = [&](size_t i) { return i < a.strides.size() ? Tuple(a.strides[i]) : ""; };
  const GemmDims& g = cost->gemm;
  const bool bias = cost->flops > 2 * g.batch * g.m * g.n * g.k;
  return Priced{
      {std::to_string(static_cast<int64_t>(g.m)), std::to_string(static_cast<int64_t>(g.n)),
       std::to_string(static_cast<int64_t>(g.k)), bias ? "True" : "False", stride(first),
       stride(first + 1), PyTuple({TypeAt(a, first), TypeAt(a, first + 1)}),
       std::to_string(static_cast<int64_t>(g.batch))},
      cost->flops,
      cost->bytes};
}

// op_shape, dtype_in_out, stride_input, stride_output. The output is the second argument
// when there is one (copy_'s source); upsampling's output shape is (N, C, *output_size).
std::optional<Priced> PriceUnary(const CallArgs& a) {
  if (a.dims.empty() || a.types.empty() || a.strides.empty()) return std::nullopt;
  Shape in = a.dims[0], op_shape = in;
  if (a.name.starts_with("aten::upsample_nearest")) {
    if (a.concrete.size() < 2 || in.size() < 2) return std::nullopt;
    std::vector<Shape> size = ParseInputDims("[" + a.concrete[1] + "]");
    if (size.size() != 1 || size[0].empty()) return std::nullopt;
    op_shape = Shape(in.begin(), in.begin() + 2);
    op_shape.insert(op_shape.end(), size[0].begin(), size[0].end());
  }
  std::optional<std::string> dtype_out;
  // TraceLens prints a missing output stride as an empty cell, but upsampling's (whose sheet
  // rows carry extra input/output shape parameters) as None.
  std::string stride_out = a.name.starts_with("aten::upsample_nearest") ? "None" : "";
  const bool has_out =
      !a.name.starts_with("aten::upsample_nearest") && a.dims.size() > 1 && !a.dims[1].empty();
  if (has_out) {
    dtype_out = TypeAt(a, 1);
    if (a.strides.size() < 2) return std::nullopt;
    stride_out = Tuple(a.strides[1]);
  }
  std::optional<int> bpe_in = TraceLensBytesPerElement(a.types[0]);
  std::optional<int> bpe_out = dtype_out ? TraceLensBytesPerElement(*dtype_out) : bpe_in;
  if (a.name.starts_with("aten::upsample_nearest")) dtype_out = a.types[0];
  const double n = static_cast<double>(NumElements(op_shape));
  const double n_in = static_cast<double>(NumElements(in));
  Priced p{{Tuple(op_shape), PyTuple({a.types[0], dtype_out}), Tuple(a.strides[0]), stride_out},
           n,
           kNaN};
  if (bpe_in && bpe_out) p.bytes = n_in * *bpe_in + n * *bpe_out;
  return p;
}

// shape_in1, shape_in2, dtype_in1_in2_out, stride_input1, stride_input2, stride_output.
// The output broadcasts the inputs; without an out= tensor its dtype is the wider input's
// (the first's when the second is a scalar).
std::optional<Priced> PriceBinary(const CallArgs& a) {
  if (a.dims.size() < 2 || a.types.size() < 2 || a.strides.size() < 2) return std::nullopt;
  const Shape &s1 = a.dims[0], &s2 = a.dims[1];
  const size_t rank = std::max(s1.size(), s2.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d1 = i + s1.size() >= rank ? s1[i + s1.size() - rank] : 1;
    const int64_t d2 = i + s2.size() >= rank ? s2[i + s2.size() - rank] : 1;
    if (d1 != d2 && d1 != 1 && d2 != 1) return std::nullopt;  // not broadcastable
    out[i] = std::max(d1, d2);
  }
  std::optional<std::string> dtype_out;
  std::string stride_out;
  if (a.dims.size() > 2 && !a.dims[2].empty()) {
    dtype_out = TypeAt(a, 2);
    if (a.strides.size() < 3) return std::nullopt;
    stride_out = Tuple(a.strides[2]);
  }
  std::optional<int> b1 = TraceLensBytesPerElement(a.types[0]),
                     b2 = TraceLensBytesPerElement(a.types[1]), bo;
  if (dtype_out) {
    bo = TraceLensBytesPerElement(*dtype_out);
  } else if (b1 && b2) {
    bo = !s1.empty() && !s2.empty() ? std::max(*b1, *b2) : *b1;
  }
  const double n1 = static_cast<double>(NumElements(s1)), n2 = static_cast<double>(NumElements(s2));
  const double n = static_cast<double>(NumElements(out));
  Priced p{{Tuple(s1), Tuple(s2), PyTuple({a.types[0], a.types[1], dtype_out}), Tuple(a.strides[0]),
            Tuple(a.strides[1]), stride_out},
           n,
           kNaN};
  if (b1 && b2 && bo) p.bytes = n1 * *b1 + n2 * *b2 + n * *bo;
  return p;
}

struct Family {
  std::string_view tracelens_name, table, title;
  std::vector<std::string_view> params;
  std::vector<std::string_view> ops;  // TraceLens's op_to_perf_model_class_map entries
  std::function<std::optional<Priced>(const CallArgs&)> price;
};

const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"GEMM",
       "gemm_calls",
       "GEMM primitive calls by shape, layout and dtype (TraceLens's GEMM sheet)",
       {"M", "N", "K", "bias", "stride_A", "stride_B", "dtype_A_B", "B"},
       {"aten::mm", "aten::addmm", "aten::_scaled_mm", "aten::bmm", "aten::baddbmm"},
       PriceGemm},
      {"UnaryElementwise",
       "unary_elementwise_calls",
       "Unary element-wise op calls by shape, dtype and strides (TraceLens's UnaryElementwise)",
       {"op_shape", "dtype_in_out", "stride_input", "stride_output"},
       {"aten::copy", "aten::copy_", "aten::clamp_min", "aten::clamp_min_", "aten::clamp_max",
        "aten::clamp_max_", "aten::sigmoid", "aten::rsqrt", "aten::silu", "aten::neg", "aten::pow",
        "aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::upsample_nearest3d"},
       PriceUnary},
      {"BinaryElementwise",
       "binary_elementwise_calls",
       "Binary element-wise op calls by shapes, dtypes and strides (TraceLens's "
       "BinaryElementwise)",
       {"shape_in1", "shape_in2", "dtype_in1_in2_out", "stride_input1", "stride_input2",
        "stride_output"},
       {"aten::div", "aten::div_", "aten::mul", "aten::mul_", "aten::add", "aten::add_",
        "aten::sigmoid_backward", "aten::threshold_backward"},
       PriceBinary},
  };
  return families;
}

}  // namespace

std::vector<std::pair<std::string_view, std::string_view>> PerfSheetNames() {
  std::vector<std::pair<std::string_view, std::string_view>> names;
  for (const Family& f : Families()) names.emplace_back(f.table, f.tracelens_name);
  return names;
}

CallStats SummarizeCalls(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  CallStats s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) {
    s.mean = s.median = s.std = s.min = s.max = kNaN;
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
    s.std = kNaN;  // pandas' sample std of one value
  } else {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

std::vector<PerfSheet> SummarizePerfSheets(const TraceData& trace, const OpKernelTimes& times,
                                           const std::vector<uint8_t>& recompute_cpu) {
  const std::vector<Family>& families = Families();
  // The family of each op name id (-1: none), decided once per name.
  std::map<uint32_t, int> family_of;
  struct Acc {
    PerfSheetGroup group;
    std::vector<double> kernel_us, tflops, tbps;
  };
  std::vector<std::map<std::tuple<std::string, std::vector<std::string>, bool>, Acc>> groups(
      families.size());
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp || ev.input_dims == 0) continue;
    auto [known, fresh] = family_of.try_emplace(ev.name, -1);
    if (fresh) {
      for (size_t f = 0; f < families.size(); ++f) {
        const auto& ops = families[f].ops;
        if (std::find(ops.begin(), ops.end(), trace.Name(ev.name)) != ops.end())
          known->second = static_cast<int>(f);
      }
    }
    if (known->second < 0) continue;
    CallArgs args;
    args.name = trace.Name(ev.name);
    args.raw_dims = trace.Name(ev.input_dims);
    args.raw_types = trace.Name(ev.input_types);
    args.raw_strides = trace.Name(ev.input_strides);
    args.raw_concrete = trace.Name(ev.concrete_inputs);
    args.dims = ParseInputDims(args.raw_dims);
    args.types = ParseStringList(args.raw_types);
    args.strides = ParseInputDims(args.raw_strides);
    args.concrete = ParseStringList(args.raw_concrete);
    // A call the family cannot price is left out, as TraceLens leaves out a call whose perf
    // model raises.
    std::optional<Priced> priced = families[known->second].price(args);
    if (!priced) continue;
    const bool recompute = !recompute_cpu.empty() && recompute_cpu[i];
    auto key = std::make_tuple(std::string(args.name), priced->params, recompute);
    Acc& acc = groups[known->second][key];
    if (acc.kernel_us.empty()) {
      PerfSheetGroup& g = acc.group;
      g.name = args.name;
      g.params = priced->params;
      g.recompute = recompute;
      g.input_dims = PythonRepr(args.raw_dims, PythonSequence::kList);
      g.input_types = PythonRepr(args.raw_types, PythonSequence::kList);
      g.input_strides = PythonRepr(args.raw_strides, PythonSequence::kList);
      g.concrete_inputs = PythonRepr(args.raw_concrete, PythonSequence::kList);
      g.gflops = priced->flops / 1e9;
      g.bytes = priced->bytes;
    }
    const double us = static_cast<double>(times.subtree_ns[i]) / 1e3;
    acc.kernel_us.push_back(us);
    acc.tflops.push_back(us > 0 ? priced->flops / 1e12 / (us / 1e6) : kNaN);
    acc.tbps.push_back(us > 0 ? priced->bytes / 1e12 / (us / 1e6) : kNaN);
  }
  std::vector<PerfSheet> sheets;
  for (size_t f = 0; f < families.size(); ++f) {
    PerfSheet sheet{
        families[f].tracelens_name, families[f].table, families[f].title, families[f].params, {}};
    for (auto& [key, acc] : groups[f]) {
      acc.group.kernel_us = SummarizeCalls(std::move(acc.kernel_us));
      acc.group.tflops = SummarizeCalls(std::move(acc.tflops));
      acc.group.tbps = SummarizeCalls(std::move(acc.tbps));
      sheet.groups.push_back(std::move(acc.group));
    }
    std::stable_sort(sheet.groups.begin(), sheet.groups.end(), [](const auto& a, const auto& b) {
      return a.kernel_us.sum > b.kernel_us.sum;
    });
    sheets.push_back(std::move(sheet));
  }
  return sheets;
}

}  // namespace sextant
