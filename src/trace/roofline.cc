#include "trace/roofline.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "trace/kernel_category.h"
#include "trace/op_arguments.h"

namespace sextant {
namespace {

bool Is(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// `out_bpe`: the output's element size when it differs from the inputs' (0: the same).
std::optional<OpCost> Gemm(double batch, double m, double n, double k, bool bias, int bpe,
                           int out_bpe = 0) {
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) return std::nullopt;
  OpCost c;
  c.family = "GEMM";
  c.matrix = true;
  c.bytes_per_element = bpe;
  c.flops = batch * (2 * m * n * k + (bias ? m * n : 0));
  c.bytes = batch * ((m * k + k * n + (bias ? n : 0)) * bpe + m * n * (out_bpe ? out_bpe : bpe));
  c.gemm = {batch, m, n, k};
  return c;
}

struct AttentionLayout {
  int q = 0;            // index of the query tensor in Input Dims
  bool bnhd = false;    // [B, N, H, D] (flash_attn) instead of [B, H, N, D] (aten SDPA)
  int causal_arg = -1;  // index of is_causal in Concrete Inputs
  bool backward = false;
};

OpCost Streaming(std::string family, double flops, double bytes, int bpe) {
  OpCost c;
  c.family = std::move(family);
  c.flops = flops;
  c.bytes = bytes;
  c.bytes_per_element = bpe;
  return c;
}

std::optional<AttentionLayout> AttentionOp(std::string_view name) {
  // Argument positions from the op schemas in PyTorch's native_functions.yaml and
  // flash_attn's Python bindings.
  if (name == "aten::scaled_dot_product_attention") return AttentionLayout{0, false, 5, false};
  if (name == "aten::_scaled_dot_product_flash_attention")
    return AttentionLayout{0, false, 4, false};
  if (name == "aten::_scaled_dot_product_efficient_attention")
    return AttentionLayout{0, false, 6, false};
  if (name == "aten::_scaled_dot_product_cudnn_attention")
    return AttentionLayout{0, false, 6, false};
  if (name == "aten::_flash_attention_forward") return AttentionLayout{0, true, 8, false};
  if (name == "flash_attn::_flash_attn_forward") return AttentionLayout{0, true, 5, false};
  if (name == "aten::_scaled_dot_product_flash_attention_backward")
    return AttentionLayout{1, false, 11, true};
  if (name == "flash_attn::_flash_attn_backward") return AttentionLayout{1, true, 11, true};
  return std::nullopt;
}

}  // namespace

std::optional<OpCost> ModelOpCost(std::string_view name, std::string_view input_dims,
                                  std::string_view input_types, std::string_view concrete_inputs) {
  std::vector<Shape> dims = ParseInputDims(input_dims);
  std::vector<std::string> types = ParseStringList(input_types);
  if (dims.empty() || types.empty()) return std::nullopt;
  std::optional<int> bpe_opt = BytesPerElement(types[0]);
  if (!bpe_opt) return std::nullopt;
  const int bpe = *bpe_opt;
  auto dim = [&](size_t arg) -> const Shape& {
    static const Shape kEmpty;
    return arg < dims.size() ? dims[arg] : kEmpty;
  };

  if (name == "aten::mm" || name == "aten::_scaled_mm") {
    const Shape &a = dim(0), &b = dim(1);
    // A record whose inner dimensions disagree did not run this GEMM: its FLOPs are unknown.
    if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return std::nullopt;
    bool bias = name == "aten::_scaled_mm" && dims.size() > 2 && dim(2).size() == 1;
    int out_bpe = 0;
    if (name == "aten::_scaled_mm") {
      // The product of 8-bit inputs is written wider: in the dtype of the `.out` overload's
      // out tensor (its ninth argument) when the record has one, else 16-bit (TraceLens's
      // aten_scaled_mm assumes "for fp8 the output dtype is fp16").
      if (dims.size() >= 9 && dim(8).size() == 2 && types.size() >= 9) {
        out_bpe = BytesPerElement(types[8]).value_or(0);
      }
      if (out_bpe == 0 && bpe == 1) out_bpe = 2;
    }
    return Gemm(1, a[0], b[1], a[1], bias, bpe, out_bpe);
  }
  if (name == "aten::addmm") {
    const Shape &a = dim(1), &b = dim(2);
    if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return std::nullopt;
    return Gemm(1, a[0], b[1], a[1], true, bpe);
  }
  if (name == "aten::bmm" || name == "aten::baddbmm") {
    size_t off = name == "aten::baddbmm" ? 1 : 0;
    const Shape &a = dim(off), &b = dim(off + 1);
    if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1]) return std::nullopt;
    return Gemm(a[0], a[1], b[2], a[2], off == 1, bpe);
  }
  // Vendor GEMMs of ROCm inference stacks: x[M, K] · w[N, K]ᵀ (+ bias[N]). Argument layouts
  // from TraceLens's extension perf models (PerfModel/extensions/perf_model_extensions.py:
  // vllm_rocm_unquantized_gemm takes (x, weight, bias); gemm_a16w16 takes (x, w, bias,
  // dtype, ...)).
  if (name == "vllm::rocm_unquantized_gemm" || name == "aiter::gemm_a16w16") {
    const Shape &x = dim(0), &w = dim(1);
    if (x.size() != 2 || w.size() != 2 || x[1] != w[1]) return std::nullopt;
    const bool bias = dims.size() > 2 && !dim(2).empty();
    return Gemm(1, x[0], w[0], x[1], bias, bpe);
  }
  if (name == "aten::linear") {
    const Shape &x = dim(0), &w = dim(1);
    // aten::linear(input, weight, bias=None): more arguments is not this op's record.
    if (dims.size() > 3 || x.empty() || w.size() != 2 || x.back() != w[1]) return std::nullopt;
    bool bias = dims.size() > 2 && dim(2).size() == 1;
    return Gemm(1, static_cast<double>(NumElements(x) / x.back()), w[0], w[1], bias, bpe);
  }
  if (name == "aten::matmul") {
    const Shape &a = dim(0), &b = dim(1);
    // aten::matmul(self, other[, out]): [..., M, K] x [..., K, N].
    if (dims.size() > 3 || a.size() < 2 || b.size() < 2 || a.back() != b[b.size() - 2])
      return std::nullopt;
    double batch_a = static_cast<double>(NumElements(Shape(a.begin(), a.end() - 2)));
    double batch_b = static_cast<double>(NumElements(Shape(b.begin(), b.end() - 2)));
    return Gemm(std::max(batch_a, batch_b), a[a.size() - 2], b.back(), a.back(), false, bpe);
  }
  if (auto layout = AttentionOp(name)) {
    const Shape &q = dim(layout->q), &k = dim(layout->q + 1), &v = dim(layout->q + 2);
    if (q.size() != 4 || k.size() != 4 || v.size() != 4) return std::nullopt;
    double B = q[0], Hq = layout->bnhd ? q[2] : q[1], Nq = layout->bnhd ? q[1] : q[2], d_qk = q[3];
    double Hkv = layout->bnhd ? k[2] : k[1], Nkv = layout->bnhd ? k[1] : k[2], d_v = v[3];
    std::vector<std::string> concrete = ParseStringList(concrete_inputs);
    bool causal = false;
    if (layout->causal_arg >= 0 && static_cast<size_t>(layout->causal_arg) < concrete.size()) {
      causal = ParseBool(concrete[layout->causal_arg]).value_or(false);
    }
    OpCost c;
    c.family = "attention";
    c.matrix = true;
    c.bytes_per_element = bpe;
    double forward = 2 * B * Hq * Nq * Nkv * (d_qk + d_v);
    if (causal) {
      forward /= 2;
      c.note = "causal: FLOPs halved";
    }
    double q_size = B * Nq * Hq * d_qk, k_size = B * Nkv * Hkv * d_qk, v_size = B * Nkv * Hkv * d_v,
           o_size = B * Nq * Hq * d_v;
    if (layout->backward) {
      c.flops = 2.5 * forward;
      c.bytes = (2 * q_size + 2 * k_size + 2 * v_size + o_size) * bpe;
    } else {
      c.flops = forward;
      c.bytes = (q_size + k_size + v_size + o_size) * bpe;
    }
    if (c.flops <= 0) return std::nullopt;
    c.attention = {B, Hq, Hkv, Nq, Nkv, d_qk, d_v, causal, layout->backward};
    return c;
  }
  if (Is(name, {"aten::add", "aten::add_", "aten::mul", "aten::mul_", "aten::sub", "aten::sub_",
                "aten::div", "aten::div_"})) {
    double n1 = dim(0).empty() ? 0 : static_cast<double>(NumElements(dim(0)));
    double n2 = dim(1).empty() ? 0 : static_cast<double>(NumElements(dim(1)));
    double out = std::max(n1, n2);
    if (out <= 0) return std::nullopt;
    return Streaming("elementwise", out, (n1 + n2 + out) * bpe, bpe);
  }
  if (Is(name, {"aten::relu", "aten::relu_", "aten::gelu", "aten::silu", "aten::silu_",
                "aten::sigmoid", "aten::tanh", "aten::exp", "aten::neg", "aten::rsqrt",
                "aten::sqrt", "aten::abs", "aten::copy_", "aten::clamp", "aten::pow"})) {
    double n = dim(0).empty() ? 0 : static_cast<double>(NumElements(dim(0)));
    if (n <= 0) return std::nullopt;
    // copy_(self, src) converts: src read in its own dtype, self written in its (int32 into
    // int64 moves 12 bytes an element, not 16).
    const int read_bpe =
        name == "aten::copy_" && types.size() > 1 ? BytesPerElement(types[1]).value_or(bpe) : bpe;
    return Streaming("elementwise", n, n * (bpe + read_bpe), bpe);
  }
  if (Is(name, {"aten::layer_norm", "aten::native_layer_norm", "aten::batch_norm",
                "aten::native_batch_norm", "aten::cudnn_batch_norm", "aten::group_norm",
                "aten::native_group_norm", "aten::instance_norm"})) {
    const Shape& x = dim(0);
    if (x.size() < 2) return std::nullopt;
    bool channels_last_dim = name.find("layer_norm") != std::string_view::npos;
    double n = static_cast<double>(NumElements(x));
    double channels = channels_last_dim ? x.back() : x[1];
    return Streaming("norm", 8 * n, (2 * n + 2 * channels) * bpe, bpe);
  }
  if (Is(name, {"aten::rms_norm", "aten::_fused_rms_norm"})) {
    const Shape& x = dim(0);
    if (x.empty() || x.back() <= 0) return std::nullopt;
    double n = static_cast<double>(NumElements(x)), channels = x.back();
    return Streaming("norm", (n / channels) * (2 * channels + 2) + 2 * n, (2 * n + channels) * bpe,
                     bpe);
  }
  return std::nullopt;
}

bool IsHostDeviceCopyName(std::string_view name) {
  // Kineto: "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)"; HIP's
  // activity names spell the direction out ("CopyHostToDevice", "CopyDeviceToHost").
  for (std::string_view direction : {"HtoD", "DtoH", "HostToDevice", "DeviceToHost"}) {
    if (name.find(direction) != std::string_view::npos) return true;
  }
  return false;
}

double RooflinePeakTflops(const GpuSpec& gpu, bool matrix, int bytes_per_element,
                          bool tensor_float32) {
  auto peak = [&](DType dtype) { return gpu.Supports(dtype) ? gpu.PeakTflops(dtype) : 0.0; };
  if (!matrix) return gpu.VectorFp32Tflops();
  if (bytes_per_element >= 4) {
    return tensor_float32 && gpu.Supports(DType::kTF32) ? peak(DType::kTF32) : peak(DType::kFP32);
  }
  if (bytes_per_element == 1 && gpu.Supports(DType::kFP8)) return peak(DType::kFP8);
  return gpu.Supports(DType::kBF16) ? peak(DType::kBF16) : peak(DType::kFP16);
}

std::vector<RooflineRow> ComputeRoofline(const TraceData& trace, const OpKernelTimes& times,
                                         const GpuSpec* gpu) {
  struct Key {
    uint32_t name, dims, types;
    bool operator<(const Key& o) const {
      return std::tie(name, dims, types) < std::tie(o.name, o.dims, o.types);
    }
  };
  std::map<Key, RooflineRow> rows;
  std::vector<char> modelled(trace.cpu.size(), 0);
  // An op whose GPU work copies between host and device ("Memcpy HtoD (Pageable -> Device)")
  // is timed by the host link, not by HBM: it has no place on the device's roofline.
  std::vector<char> crosses_host(trace.cpu.size(), 0);
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind != GpuKind::kMemcpy || g.op < 0 || !IsHostDeviceCopyName(trace.Name(g.name)))
      continue;
    for (int32_t i = g.op; i >= 0 && !crosses_host[i]; i = trace.cpu[i].parent) crosses_host[i] = 1;
  }
  // PyTorch multiplies FP32 matrices on TF32 tensor cores when allowed
  // (torch.backends.cuda.matmul.allow_tf32; cuDNN convolutions by default): the kernel's
  // name says so, and such an op is rated against the TF32 peak instead of the FP32 one.
  std::vector<char> tensor_float32(trace.cpu.size(), 0);
  NameTest is_tf32(trace, IsTensorFloat32KernelName);
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind != GpuKind::kKernel || g.op < 0 || !is_tf32(g.name)) continue;
    for (int32_t i = g.op; i >= 0 && !tensor_float32[i]; i = trace.cpu[i].parent)
      tensor_float32[i] = 1;
  }
  // Calls repeat a few hundred shapes: each (op, dims, types, concrete inputs) is modelled once.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, std::optional<OpCost>> costs;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    // Parents precede children, so an enclosing modelled op is already marked.
    bool inside_modelled = ev.parent >= 0 && modelled[ev.parent];
    if (inside_modelled) {
      modelled[i] = 1;
      continue;
    }
    if (ev.kind != CpuKind::kOp) continue;
    const CpuArgs& args = trace.Args(ev);
    if (args.input_dims == 0 || times.subtree_ns[i] == 0 || crosses_host[i]) continue;
    auto [known, inserted] =
        costs.try_emplace({ev.name, args.input_dims, args.input_types, args.concrete_inputs});
    if (inserted) {
      known->second = ModelOpCost(trace.Name(ev.name), trace.Name(args.input_dims),
                                  trace.Name(args.input_types), trace.Name(args.concrete_inputs));
    }
    const std::optional<OpCost>& cost = known->second;
    if (!cost) continue;
    modelled[i] = 1;
    RooflineRow& row = rows[{ev.name, args.input_dims, args.input_types}];
    if (row.count == 0) {
      row.name = std::string(trace.Name(ev.name));
      row.input_dims = std::string(trace.Name(args.input_dims));
      row.input_types = std::string(trace.Name(args.input_types));
      row.family = cost->family;
      row.note = cost->note;
      row.flops_per_call = cost->flops;
      row.bytes_per_call = cost->bytes;
      row.gemm = cost->gemm;
      row.attention = cost->attention;
      row.bytes_per_element = cost->bytes_per_element;
      row.matrix = cost->matrix;
    }
    if (row.matrix && row.bytes_per_element >= 4 && tensor_float32[i]) ++row.tensor_float32_calls;
    row.count++;
    row.kernel_ns += times.subtree_ns[i];
  }
  std::vector<RooflineRow> out;
  for (auto& [key, row] : rows) {
    double seconds = row.kernel_ns * 1e-9;
    double flops = row.flops_per_call * row.count, bytes = row.bytes_per_call * row.count;
    row.achieved_tflops = seconds > 0 ? flops / seconds / 1e12 : 0;
    row.achieved_tbps = seconds > 0 ? bytes / seconds / 1e12 : 0;
    row.intensity = bytes > 0 ? flops / bytes : 0;
    // Rated against TF32 only where every call ran TF32 kernels: a row mixing TF32 and SIMT
    // calls (allow_tf32 switched during the run) keeps the FP32 roof, which is never too high.
    row.tensor_float32 = row.count > 0 && row.tensor_float32_calls == row.count;
    if (gpu) {
      row.peak_tflops =
          RooflinePeakTflops(*gpu, row.matrix, row.bytes_per_element, row.tensor_float32);
    }
    if (row.tensor_float32) {
      row.note += std::string(row.note.empty() ? "" : "; ") + "FP32 on TF32 tensor cores";
    }
    if (gpu && row.peak_tflops > 0 && gpu->hbm_bandwidth > 0) {
      double compute_s = flops / (row.peak_tflops * 1e12);
      double memory_s = bytes / gpu->hbm_bandwidth;
      row.bound = compute_s >= memory_s ? "compute" : "memory";
      row.roofline_ns = std::max(compute_s, memory_s) * 1e9;
      row.roofline_fraction = row.kernel_ns > 0 ? row.roofline_ns / row.kernel_ns : 0;
    }
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const RooflineRow& a, const RooflineRow& b) {
    return a.kernel_ns != b.kernel_ns ? a.kernel_ns > b.kernel_ns : a.name < b.name;
  });
  return out;
}

}  // namespace sextant
