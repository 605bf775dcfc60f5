#include "trace/perf_sheets.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trace/autograd_links.h"
#include "trace/intervals.h"
#include "trace/iteration_annotation.h"
#include "trace/op_arguments.h"
#include "trace/roofline.h"

namespace sextant {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Enclosing ops searched above an op or kernel. PyTorch's op stacks are tens deep; the bound
// keeps a hostile trace of a million nested ops from costing a million steps per event.
constexpr int kMaxNesting = 256;

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// One call's argument records, parsed once.
struct CallArgs {
  std::string_view name;
  std::string_view raw_dims, raw_types, raw_strides, raw_concrete;
  std::vector<Shape> dims;
  std::vector<std::string> types;
  std::vector<Shape> strides;  // empty when strides were not recorded
  std::vector<std::string> concrete;
  std::string_view annotation;  // the enclosing user annotation (families that read it)
  // A pseudo op made of one kernel of the call: the kernel's name and the call's top-k.
  std::string_view kernel;
  int64_t topk = 0;
};

struct Priced {
  std::vector<std::string> params;
  double flops = 0;
  double bytes = kNaN;
  // Parameters that are Python floats for this call: pandas then prints the whole column of
  // the sheet as floats ("16.0").
  std::vector<size_t> float_params;
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

// A whole number held as a double, as its digits (a hostile size may exceed int64, which a
// cast would not survive).
std::string Whole(double x) { return fmt::format("{:.0f}", x); }

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
  if (a.name == "vllm::rocm_unquantized_gemm" || a.name == "aiter::gemm_a16w16") {
    // Their models record no strides and name three dtypes: x, weight, and the bias's
    // (vLLM; '' without one) or again x's (aiter's output follows its input).
    const std::optional<std::string> third = a.name == "aiter::gemm_a16w16" ? TypeAt(a, 0)
                                             : a.types.size() > 2           ? TypeAt(a, 2)
                                                                  : std::optional<std::string>("");
    return Priced{{Whole(g.m), Whole(g.n), Whole(g.k), bias ? "True" : "False", "", "",
                   PyTuple({TypeAt(a, 0), TypeAt(a, 1), third}), "1"},
                  cost->flops,
                  cost->bytes,
                  {}};
  }
  return Priced{
      {Whole(g.m), Whole(g.n), Whole(g.k), bias ? "True" : "False", stride(first),
       stride(first + 1), PyTuple({TypeAt(a, first), TypeAt(a, first + 1)}), Whole(g.batch)},
      cost->flops,
      cost->bytes,
      {}};
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
           kNaN,
           {}};
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
           kNaN,
           {}};
  if (b1 && b2 && bo) p.bytes = n1 * *b1 + n2 * *b2 + n * *bo;
  return p;
}

// Python's repr of a float: the shortest text that reads back, ".0" on whole numbers.
std::string PyFloat(double v) {
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// num_input_elems, num_output_elems, dtype_in_out, reduce_type. TraceLens reads the reduced
// dimensions from non-string concrete inputs, which Kineto never writes (it records them as
// text): its output is one element, or the whole input for a cumulative op. One FLOP per
// input element; the input read and the output written once.
std::optional<Priced> PriceReduce(const CallArgs& a) {
  if (a.dims.empty()) return std::nullopt;
  const double n_in = static_cast<double>(NumElements(a.dims[0]));
  const bool cumulative = a.name.find("cumsum") != std::string_view::npos ||
                          a.name.find("cumprod") != std::string_view::npos;
  const double n_out = cumulative ? n_in : 1;
  std::string_view type = "sum";
  if (a.name.find("mean") != std::string_view::npos)
    type = "mean";
  else if (a.name.find("max") != std::string_view::npos)
    type = "max";
  else if (a.name.find("min") != std::string_view::npos)
    type = "min";
  else if (a.name.find("norm") != std::string_view::npos)
    type = "norm";
  std::optional<std::string> dtype_in = TypeAt(a, 0);
  Priced p{{Whole(n_in), Whole(n_out), PyTuple({dtype_in, std::nullopt}), std::string(type)},
           n_in,
           kNaN,
           {}};
  std::optional<int> bpe = dtype_in ? TraceLensBytesPerElement(*dtype_in) : std::nullopt;
  if (bpe) p.bytes = (n_in + n_out) * *bpe;
  return p;
}

// B, N_Q, H_Q, N_KV, H_KV, d_h_qk, d_h_v, dropout, causal, flash_impl, dtype_A_B for ATen's
// scaled-dot-product kernels ([B, H, N, d] operands). FLOPs 2·B·H_Q·N_Q·N_KV·(d_qk + d_v),
// halved when causal (a causal call with N_Q != N_KV is left out, as TraceLens's model
// raises); bytes Q, K, V read and O written at 2 bytes each, whatever the dtype (TraceLens's
// default).
std::optional<Priced> PriceSdpa(const CallArgs& a) {
  if (a.dims.size() < 3) return std::nullopt;
  const Shape &q = a.dims[0], &k = a.dims[1], &v = a.dims[2];
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) return std::nullopt;
  if (q[0] != k[0] || q[0] != v[0] || k[1] != v[1] || k[2] != v[2] || q[3] != k[3])
    return std::nullopt;
  const double B = q[0], Hq = q[1], Nq = q[2], Hkv = k[1], Nkv = k[2], dqk = q[3], dv = v[3];
  const bool flash = a.name == "aten::_scaled_dot_product_flash_attention";
  const size_t dropout_at = flash ? 3 : 5;
  auto concrete = [&](size_t i) { return i < a.concrete.size() ? a.concrete[i] : ""; };
  double dropout = 0;
  const std::string dropout_text = concrete(dropout_at);
  if (!dropout_text.empty() && dropout_text != "None") {
    char* end = nullptr;
    const double value = std::strtod(dropout_text.c_str(), &end);
    if (end != dropout_text.c_str()) dropout = value;
  }
  const bool causal = Lowercase(concrete(dropout_at + 1)) == "true";
  if (causal && Nq != Nkv) return std::nullopt;
  double flops = 2 * B * Hq * Nq * Nkv * dqk + 2 * B * Hq * Nq * dv * Nkv;
  if (causal) flops /= 2;
  const double bytes =
      (B * Nq * Hq * dqk + B * Nkv * Hkv * dqk + B * Nkv * Hkv * dv + B * Nq * Hq * dv) * 2;
  auto i = Whole;
  return Priced{
      {i(B), i(Nq), i(Hq), i(Nkv), i(Hkv), i(dqk), i(dv), PyFloat(dropout),
       causal ? "True" : "False", flash ? "True" : "False", PyTuple({TypeAt(a, 0), TypeAt(a, 1)})},
      flops,
      bytes,
      {}};
}

// The backward of an attention call, as TraceLens's SDPA.flops_bwd / bytes_bwd price it
// (PerfModel/perf_model.py): flash attention recomputes Q K^T, then dV = P^T dO, dP = dO V^T,
// dQ = dS K and dK = dS^T Q, each 2 FLOPs per multiply-add, plus summing the gradients of
// the H_Q / H_KV query heads that share a K/V head; the softmax is not counted. Causal
// attention does half. Bytes: Q, K, V and dO read, dQ, dK and dV written, at 2 bytes per
// element as the forward's.
std::optional<Priced> PriceSdpaBackward(const CallArgs& a) {
  std::optional<Priced> p = PriceSdpa(a);
  if (!p) return std::nullopt;
  const Shape &q = a.dims[0], &k = a.dims[1], &v = a.dims[2];
  const double B = q[0], Hq = q[1], Nq = q[2], Hkv = k[1], Nkv = k[2], dqk = q[3], dv = v[3];
  if (Hkv <= 0) return std::nullopt;  // TraceLens's H_Q // H_KV raises
  const bool flash = p->params[9] == "True", causal = p->params[8] == "True";
  const double group_sum = std::floor(Hq / Hkv) - 1;                 // Python's H_Q // H_KV - 1
  double flops = flash ? B * Hq * 2 * Nq * Nkv * dqk : 0;            // recomputed Q K^T
  flops += B * Hq * 2 * Nkv * Nq * dv + B * Nkv * dv * group_sum;    // dV
  flops += B * Hq * 2 * Nq * Nkv * dv;                               // dP
  flops += B * Hq * 2 * Nq * Nkv * dqk;                              // dQ
  flops += B * Hq * 2 * Nkv * Nq * dqk + B * Nkv * dqk * group_sum;  // dK
  if (causal) flops /= 2;
  p->flops = flops;
  p->bytes = 2 * (2 * B * Nq * Hq * dqk + 2 * B * Nkv * Hkv * dqk + 2 * B * Nkv * Hkv * dv +
                  B * Nq * Hq * dv);
  return p;
}

// A list literal of a concrete input ("[16, 32, 32]", "[True, False]") as its items' text.
// Variable-length attention of LLM inference servers (TraceLens's InferenceAttention,
// PerfModel/extensions/attention_perf_model_extensions.py). One call runs a whole step's
// batch, described by the sums of its iteration annotation (iteration_annotation.h): context
// (prefill) chunks attend to their cached prefix and causally within themselves, generation
// (decode) tokens to their whole cache. QK^T and PV at 2 FLOPs per multiply-add:
//   FLOPs = H_Q (2 c_sqsk - c_sqsq)(d_qk + d_v) + 2 H_Q g_sqsk (d_qk + d_v)
// (a chunk's own sq x sq square counts half). Bytes: Q read and O written for the step's
// c_sq + g_sq tokens, the new tokens' K and V, at the query's dtype; the cached (sk - sq)
// tokens' K and V at the cache's. How the call's arguments give the geometry:
enum class AttentionArgs {
  kQkv,          // q [N, H_Q, d], k [.., N_KV, H_KV, d_v]: vLLM's unified attention, aiter's
                 // mha_varlen_fwd (d_v read from k, as TraceLens does)
  kQkvVFromV,    // the same with d_v from v's last dimension: aiter's fmha_v3_varlen_fwd and
                 // mha_batch_prefill (MLA's Q/K and V head sizes differ)
  kPagedRagged,  // SGLang's aiter paged attention: q third, paged K and V caches
                 // [pages, page size, H_KV, d] fourth and fifth; N_KV = c_sk + g_sk
};

std::optional<Priced> PriceInferenceAttention(const CallArgs& a, AttentionArgs layout) {
  const std::optional<ChunkStats> st = ParseChunkStats(a.annotation);
  // TraceLens has no estimate without the sums, and raises on a step without tokens.
  if (!st || (st->c_sq == 0 && st->g_sq == 0)) return std::nullopt;
  const bool paged = layout == AttentionArgs::kPagedRagged;
  const size_t q_at = paged ? 2 : 0;
  if (a.dims.size() <= q_at + (paged ? 2 : 1) || a.types.size() <= q_at) return std::nullopt;
  const Shape& q = a.dims[q_at];
  const Shape& k = a.dims[q_at + 1];
  if (q.size() != 3 || k.size() < (paged ? 2u : 3u)) return std::nullopt;
  const double Nq = static_cast<double>(q[0]), Hq = static_cast<double>(q[1]),
               dqk = static_cast<double>(q[2]);
  double Nkv, Hkv, dv;
  if (paged) {
    if (a.dims[4].empty()) return std::nullopt;
    Hkv = static_cast<double>(k[k.size() - 2]);
    dv = static_cast<double>(a.dims[4].back());
    Nkv = static_cast<double>(st->c_sk) + static_cast<double>(st->g_sk);
  } else {
    Nkv = static_cast<double>(k[k.size() - 3]);
    Hkv = static_cast<double>(k[k.size() - 2]);
    dv = static_cast<double>(k.back());
    if (layout == AttentionArgs::kQkvVFromV && a.dims.size() > 2 && !a.dims[2].empty())
      dv = static_cast<double>(a.dims[2].back());
  }
  const std::string dtype_q = a.types[q_at];
  const std::string dtype_kv = paged ? "" : a.types.size() > 1 ? a.types[1] : dtype_q;
  const double bpe = TraceLensBytesPerElement(dtype_q).value_or(2);
  const double bpe_kv = paged ? bpe : TraceLensBytesPerElement(dtype_kv).value_or(bpe);
  auto d = [](int64_t v) { return static_cast<double>(v); };
  const double flops =
      Hq * (2 * d(st->c_sqsk) - d(st->c_sqsq)) * (dqk + dv) + 2 * Hq * d(st->g_sqsk) * (dqk + dv);
  const double per_query = Hq * (dqk + dv) + Hkv * (dqk + dv);
  const double bytes =
      (d(st->c_sq) + d(st->g_sq)) * per_query * bpe +
      (d(st->c_sk) - d(st->c_sq) + d(st->g_sk) - d(st->g_sq)) * Hkv * (dqk + dv) * bpe_kv;
  auto i = Whole;
  std::vector<std::string> params = {
      "1", i(Nq), i(Hq), i(Hkv), i(Hkv), i(Nkv), i(Hkv), i(dqk), i(dv), "0.0", "False", "True",
      // The sums as the integers they are (past 2^53 a
      // double would drop digits).
      std::to_string(st->c_sq), std::to_string(st->c_sk), std::to_string(st->c_sqsq),
      std::to_string(st->c_sqsk), std::to_string(st->g_sq), std::to_string(st->g_sk),
      std::to_string(st->g_sqsq), std::to_string(st->g_sqsk), dtype_q};
  if (paged) params[5] = std::to_string(st->c_sk + st->g_sk);  // N_KV
  if (!paged) params.push_back(dtype_kv);
  return Priced{std::move(params), flops, bytes, {}};
}

// vLLM's unfused MoE GEMMs (gpt-oss: Triton's matmul_ogs kernels, TraceLens's
// moe_triton_unfused_up/down, PerfModel/extensions/moe_perf_model_extensions.py). From the MoE
// call's tokens x hidden input [M, K] and router logits [M, E], top-k experts per token and
// the intermediate size N taken equal to K (TraceLens's stated limitation: the trace does not
// record it):
//   up:   2 M K N k FLOPs, twice that when the kernel fuses the gate (SwiGLU);
//         bytes: input M K + weights of the experts in use x (2 if gated) K N + output M N k;
//   down: 2 M N K k FLOPs; bytes: input M N k + weights K N per expert in use + output M K.
// Experts in use: E (1 - ((E - k) / E)^M), uniform routing. Weights are FP4 or FP8 as the
// kernel's name says (mxfp4/fp4, fp8/e4m3); TraceLens has no byte count (and so no row)
// otherwise.
std::optional<Priced> PriceMoeUnfused(const CallArgs& a, bool up) {
  // TraceLens's table for these models (DTYPE_TO_BYTES), not name2bpe.
  static const std::map<std::string, double, std::less<>> kBytes = {{"Float8_e4m3fn", 1},
                                                                    {"Float8_e4m3fnuz", 1},
                                                                    {"Float8_e5m2", 1},
                                                                    {"Float8_e5m2fnuz", 1},
                                                                    {"FP8", 1},
                                                                    {"FP4", 0.5},
                                                                    {"BFloat16", 2},
                                                                    {"Float16", 2},
                                                                    {"Half", 2},
                                                                    {"Float32", 4},
                                                                    {"Float", 4},
                                                                    {"c10::BFloat16", 2},
                                                                    {"c10::Float8_e4m3fn", 1},
                                                                    {"c10::Float8_e4m3fnuz", 1},
                                                                    {"c10::Float4_e2m1fn_x2", 0.5},
                                                                    {"c10::Half", 2},
                                                                    {"c10::Float", 4}};
  if (a.dims.size() < 2 || a.dims[0].size() < 2 || a.dims[1].size() < 2 || a.types.size() < 2)
    return std::nullopt;
  const std::string kernel = Lowercase(a.kernel);
  const bool gated =
      kernel.find("_swiglu") != std::string::npos || kernel.find("_glu") != std::string::npos;
  std::string weight_dtype;
  if (kernel.find("fp4") != std::string::npos) {
    weight_dtype = "FP4";
  } else if (kernel.find("fp8") != std::string::npos || kernel.find("e4m3") != std::string::npos) {
    weight_dtype = "FP8";
  }
  const auto input_bpe = kBytes.find(a.types[0]);
  if (weight_dtype.empty() || input_bpe == kBytes.end()) return std::nullopt;
  const double M = static_cast<double>(a.dims[0][0]), K = static_cast<double>(a.dims[0][1]), N = K,
               E = static_cast<double>(a.dims[1][1]), k = static_cast<double>(a.topk);
  if (E == 0) return std::nullopt;
  const double in = input_bpe->second, w = kBytes.find(weight_dtype)->second;
  const double active = E * (1 - std::pow((E - k) / E, M));
  const double gate = up && gated ? 2 : 1;
  const double flops = 2 * M * K * N * k * gate;
  const double bytes = up ? M * K * in + active * gate * K * N * w + M * N * k * in
                          : M * N * k * in + active * N * K * w + M * K * in;
  return Priced{{Whole(M), Whole(K), Whole(N), Whole(E), Whole(k), gated ? "True" : "False",
                 a.types[0], weight_dtype},
                flops,
                bytes,
                {}};
}

struct MoePseudoCall {
  size_t moe_op;    // the vllm::moe_forward call (index into trace.cpu)
  uint32_t kernel;  // its matmul_ogs kernel (index into trace.gpu)
  bool up;
  int64_t topk;
};

// TraceLens's pseudo ops of vLLM's unfused MoE (Trace2Tree/extensions/
// moe_unfused_triton_pseudo_ops.py): each matmul_ogs kernel under a vllm::moe_forward call is
// one, the first in time the up projection and the others the down projection; top-k is the
// second concrete input of the first TopK op below the call (up to 11 levels down), else 4.
// A captured MoE call that graph launches replayed several times (graph_capture.h) makes
// pseudo ops per launch, as TraceLens merges the capture under each launch.
std::vector<MoePseudoCall> MoeUnfusedPseudoCalls(const TraceData& trace,
                                                 const std::vector<uint32_t>& events) {
  // The names, looked up once in the string pool rather than once per event.
  std::vector<uint8_t> moe_name(trace.strings.size(), 0), topk_name(trace.strings.size(), 0);
  bool any_name = false;
  for (uint32_t id = 0; id < trace.strings.size(); ++id) {
    moe_name[id] = trace.Name(id) == "vllm::moe_forward";
    any_name = any_name || moe_name[id];
  }
  if (!any_name) return {};
  for (uint32_t id = 0; id < trace.strings.size(); ++id)
    topk_name[id] = trace.Name(id).find("TopK") != std::string_view::npos;
  std::vector<uint8_t> is_moe(trace.cpu.size(), 0);
  bool any = false;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    is_moe[i] = ev.kind == CpuKind::kOp && moe_name[ev.name];
    any = any || is_moe[i];
  }
  if (!any) return {};
  // The enclosing MoE call of an op, up to `levels` up; -1 if none.
  auto moe_above = [&](int32_t op, int levels) {
    for (int depth = 0; op >= 0 && depth <= levels; ++depth) {
      if (is_moe[static_cast<size_t>(op)]) return op;
      op = trace.cpu[static_cast<size_t>(op)].parent;
    }
    return int32_t{-1};
  };
  std::map<int32_t, int64_t> topk;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp || is_moe[i] || !topk_name[ev.name]) continue;
    const int32_t moe = moe_above(ev.parent, 10);
    if (moe < 0 || topk.count(moe)) continue;
    const std::vector<std::string> concrete =
        ParseStringList(trace.Name(trace.Args(ev).concrete_inputs));
    if (concrete.size() < 2 || concrete[1].empty() ||
        !std::all_of(concrete[1].begin(), concrete[1].end(),
                     [](char c) { return c >= '0' && c <= '9'; }) ||
        concrete[1].size() > 12)
      continue;
    topk[moe] = std::stoll(concrete[1]);
  }
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> kernels;  // (call, replay)
  for (uint32_t k : events) {
    const GpuEvent& g = trace.gpu[k];
    if (g.kind != GpuKind::kKernel || g.op < 0) continue;
    if (Lowercase(trace.Name(g.name)).find("matmul_ogs") == std::string::npos) continue;
    const int32_t moe = moe_above(g.op, kMaxNesting);
    if (moe < 0) continue;
    const bool replay = g.launcher >= 0 && trace.cpu[static_cast<size_t>(g.launcher)].graph_launch;
    kernels[{moe, replay ? g.launcher : -1}].push_back(k);
  }
  std::vector<MoePseudoCall> calls;
  for (auto& [key, list] : kernels) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return trace.gpu[a].ts_ns < trace.gpu[b].ts_ns;
    });
    const auto k = topk.find(key.first);
    for (size_t n = 0; n < list.size(); ++n) {
      calls.push_back(
          {static_cast<size_t>(key.first), list[n], n == 0, k == topk.end() ? 4 : k->second});
    }
  }
  return calls;
}

// SGLang's store_cache: the step's new K and V rows scattered into the paged cache, a pure
// copy (TraceLens's sglang_store_cache, PerfModel/extensions/perf_model_extensions.py):
// k and v read, as many cache rows written: 4 x elements of k x bytes per element.
std::optional<Priced> PriceStoreCache(const CallArgs& a) {
  if (a.dims.empty() || a.types.empty()) return std::nullopt;
  const double elements = static_cast<double>(NumElements(a.dims[0]));
  const double bpe = TraceLensBytesPerElement(a.types[0]).value_or(2);
  return Priced{{Tuple(a.dims[0]), Whole(elements), a.types[0]}, 0, 4 * elements * bpe, {}};
}

std::vector<std::string> ListItems(const std::string& text) {
  std::vector<std::string> items;
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return items;
  std::string item;
  for (char c : text.substr(1, text.size() - 2)) {
    if (c == ',') {
      items.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  if (!item.empty()) items.push_back(item);
  return items;
}

// The product of an int list literal; nullopt if it is not one.
std::optional<double> ListProduct(const std::string& text) {
  std::vector<std::string> items = ListItems(text);
  if (items.empty()) return std::nullopt;
  double product = 1;
  for (const std::string& item : items) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0') return std::nullopt;
    product *= static_cast<double>(v);
  }
  return product;
}

// Normalisations: op_shape, dtype_in_out, stride_input, stride_output, num_channels,
// has_bias, is_affine, is_training and, for backward ops, output_mask. TraceLens's
// Normalization classes (BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RMSNorm and their
// backward ops), read as it reads them: an argument "is not None" when it is recorded at all,
// `training` true when its concrete input is any text, the channels of a layer or RMS norm
// the product of its normalized shape, a group norm's backward channels C / groups.
std::optional<Priced> PriceNorm(const CallArgs& a) {
  std::string_view n = a.name;
  auto concrete = [&](size_t i) { return i < a.concrete.size() ? a.concrete[i] : std::string(); };
  auto has_arg = [&](size_t i) { return i < a.dims.size(); };
  const bool backward = n.ends_with("_backward");
  enum { kBatch, kLayer, kGroup, kInstance, kRms } kind;
  if (n.find("batch_norm") != std::string_view::npos)
    kind = kBatch;
  else if (n.find("layer_norm") != std::string_view::npos)
    kind = kLayer;
  else if (n.find("group_norm") != std::string_view::npos)
    kind = kGroup;
  else if (n.find("instance_norm") != std::string_view::npos)
    kind = kInstance;
  else
    kind = kRms;
  if (kind == kInstance && backward) return std::nullopt;  // TraceLens has no model
  size_t input = backward ? 1 : 0;
  const bool miopen_or_cudnn_bn_bwd =
      n == "aten::cudnn_batch_norm_backward" || n == "aten::miopen_batch_norm_backward";
  if (miopen_or_cudnn_bn_bwd) input = 0;
  if (!has_arg(input) || input >= a.types.size() || input >= a.strides.size()) return std::nullopt;
  const Shape& shape = a.dims[input];
  const double elems = static_cast<double>(NumElements(shape));
  double channels = 0;
  bool float_channels = false, has_bias = true, affine = true, training = true;
  std::vector<bool> mask;
  bool has_mask = false;
  auto parse_mask = [&](const std::string& text) {
    for (const std::string& item : ListItems(text)) mask.push_back(item == "True");
    has_mask = !mask.empty();
    return has_mask;
  };
  switch (kind) {
    case kBatch:
      if (shape.size() < 2) return std::nullopt;
      channels = static_cast<double>(shape[1]);
      if (!backward) {
        affine = has_arg(2);
        training = !concrete(5).empty();
      } else {
        affine = has_arg(2);
        training = miopen_or_cudnn_bn_bwd ? false : !concrete(7).empty();
        mask = {miopen_or_cudnn_bn_bwd || has_arg(0)};
        has_mask = true;
      }
      break;
    case kLayer: {
      std::optional<double> c = ListProduct(concrete(backward ? 2 : 1));
      if (!c) return std::nullopt;
      channels = *c;
      if (!backward) {
        has_bias = has_arg(3);
        affine = has_arg(2);
      } else {
        if (!parse_mask(concrete(7)) || mask.size() < 3) return std::nullopt;
        affine = mask[1];
        has_bias = mask[2];
      }
      break;
    }
    case kGroup:
      if (shape.size() < 2) return std::nullopt;
      if (!backward) {
        channels = static_cast<double>(shape[1]);
        affine = has_arg(2);
      } else {
        const long long groups = std::strtoll(concrete(8).c_str(), nullptr, 10);
        if (groups <= 0 || !parse_mask(concrete(9))) return std::nullopt;
        channels = static_cast<double>(shape[1]) / static_cast<double>(groups);
        float_channels = true;  // a Python division
        affine = has_arg(5);
      }
      break;
    case kInstance:
      if (shape.size() < 2) return std::nullopt;
      channels = static_cast<double>(shape[1]);
      affine = has_arg(2);
      training = !concrete(5).empty();
      break;
    case kRms: {
      std::optional<double> c = ListProduct(concrete(backward ? 2 : 1));
      if (!c) return std::nullopt;
      channels = *c;
      has_bias = false;
      training = false;
      affine = has_arg(backward ? 4 : 2);
      if (backward && !parse_mask(concrete(5))) return std::nullopt;
      break;
    }
  }
  if (channels <= 0) return std::nullopt;
  std::optional<int> bpe = TraceLensBytesPerElement(a.types[input]);
  double flops = 0, bytes = kNaN;
  const double per_channel = elems / channels;
  if (kind == kRms && !backward) {
    flops = per_channel * (2 * channels + 2) + elems * (affine ? 2 : 1);
    if (bpe) bytes = 2 * elems * *bpe + (affine ? channels * *bpe : 0);
  } else if (kind == kRms) {
    flops = (affine ? elems : 0) + elems;
    if (mask.size() > 0 && mask[0]) flops += 6 * elems;
    if (mask.size() > 1 && mask[1] && affine) flops += elems + (per_channel > 1 ? elems : 0);
    if (bpe) bytes = 3 * elems * *bpe + (affine ? 2 * channels * *bpe : 0);
  } else if (!backward) {
    flops = channels * 3 + (training ? elems * 3 : 0) + channels * 3 + 2 * elems;
    const double weights = 2 + (affine ? 1 + (has_bias ? 1 : 0) : 0) + (training ? 2 : 0);
    if (bpe) bytes = 2 * elems * *bpe + weights * channels * *bpe;
  } else {
    double f = (training ? 0 : 3) + 4 * per_channel;
    if (!mask.empty() && mask[0]) {
      if (training) f += 5 * per_channel;
    } else {
      f += 2 * per_channel;
    }
    flops = channels * f;
    if (bpe) {
      double b = elems * *bpe + elems * *bpe * (!mask.empty() && mask[0] && training ? 2 : 1);
      if (training) b += channels * *bpe;
      if (affine) {
        b += channels * *bpe;
        if (training) b += channels * *bpe * (has_bias ? 2 : 1);
      }
      bytes = b;
    }
  }
  std::string mask_text;
  if (has_mask) {
    mask_text = "[";
    for (size_t i = 0; i < mask.size(); ++i)
      mask_text += (i ? ", " : "") + std::string(mask[i] ? "True" : "False");
    mask_text += "]";
  }
  auto py_bool = [](bool b) { return std::string(b ? "True" : "False"); };
  return Priced{{Tuple(shape), PyTuple({a.types[input], std::nullopt}), Tuple(a.strides[input]), "",
                 float_channels ? PyFloat(channels) : Whole(channels), py_bool(has_bias),
                 py_bool(affine), py_bool(training), mask_text},
                flops,
                bytes,
                float_channels ? std::vector<size_t>{4} : std::vector<size_t>{}};
}

// The RMSNorm ops of ROCm inference stacks (TraceLens's RMSNorm_fwd sheet, its
// PerfModel/extensions/rmsnorm_perf_model_extensions.py): where each op keeps its input and
// weight, whether it adds the residual first, and the core RMSNorm roofline
//   FLOPs = rows·(2·C + 2) + 2·elements (rsqrt per row, scale and weight per element)
//   bytes = input + output + weight
// (PerfModel/perf_model.py RMSNorm, affine, inference); the fused residual add adds one FLOP
// per element and reads input and residual, writes output and the new residual.
std::optional<Priced> PriceVendorRmsNorm(const CallArgs& a) {
  size_t input = 0, weight = 1;
  bool residual_add = false;
  if (a.name == "aiter::rmsnorm") {
    input = 1;
    weight = 2;
  } else if (a.name == "aiter::rmsnorm2d_fwd_with_add_ck" || a.name == "aiter::add_rmsnorm") {
    input = 1;
    weight = 4;
    residual_add = true;
  }
  if (weight >= a.dims.size() || input >= a.types.size() || input >= a.strides.size() ||
      a.dims[weight].empty()) {
    return std::nullopt;
  }
  const Shape& shape = a.dims[input];
  const double elems = static_cast<double>(NumElements(shape));
  const double channels = static_cast<double>(a.dims[weight][0]);
  const std::optional<int> bpe = TraceLensBytesPerElement(a.types[input]);
  if (elems <= 0 || channels <= 0) return std::nullopt;
  Priced p;
  p.params = {Tuple(shape),
              PyTuple({TypeAt(a, input), std::nullopt}),
              Tuple(a.strides[input]),
              "",
              Whole(channels),
              "False",
              "True",
              "False"};
  p.flops = elems / channels * (2 * channels + 2) + 2 * elems + (residual_add ? elems : 0);
  if (bpe) {
    p.bytes = residual_add ? (4 * elems + channels) * *bpe : (2 * elems + channels) * *bpe;
  }
  return p;
}

// sgl_kernel::rotary_embedding(positions, query, key, head_size, cos_sin_cache, ...): RoPE in
// place on the rotated slice of every query and key head (TraceLens's
// sgl_kernel_rotary_embedding, PerfModel/extensions/perf_model_extensions.py):
//   elements = tokens · (query heads + key heads) · rot_dim
//   FLOPs = 3 · elements (4 multiplies and 2 adds per pair), bytes = 2 · elements (read and
//   write) in the query's dtype (2 bytes when unknown).
std::optional<Priced> PriceSglRotary(const CallArgs& a) {
  if (a.dims.size() < 3 || a.dims[1].size() < 2 || a.dims[2].size() < 2) return std::nullopt;
  const Shape &q = a.dims[1], &k = a.dims[2];
  double head_size = static_cast<double>(q.back());
  if (a.concrete.size() > 3 && !a.concrete[3].empty()) {
    char* end = nullptr;
    const double stated = std::strtod(a.concrete[3].c_str(), &end);
    if (end == a.concrete[3].c_str() || *end != '\0' || !(stated > 0)) return std::nullopt;
    head_size = std::floor(stated);
  }
  double rot_dim = head_size;
  if (a.dims.size() > 4 && a.dims[4].size() > 1) rot_dim = static_cast<double>(a.dims[4][1]);
  if (!(head_size > 0)) return std::nullopt;
  // Python's floor division of the flattened head widths.
  const double q_heads = std::floor(static_cast<double>(q[1]) / head_size);
  const double k_heads = std::floor(static_cast<double>(k[1]) / head_size);
  const double elements = static_cast<double>(q[0]) * (q_heads + k_heads) * rot_dim;
  if (!(elements > 0) || !std::isfinite(elements)) return std::nullopt;
  Priced p;
  p.params = {Whole(elements)};
  p.flops = 3 * elements;
  p.bytes =
      2 * elements * TraceLensBytesPerElement(a.types.size() > 1 ? a.types[1] : "").value_or(2);
  return p;
}

// A convolution's geometry from its recorded arguments: input x and filter w at `x_at` and
// `x_at + 1`, stride, padding, dilation, transposed, output_padding and groups as concrete
// inputs from `concrete_at` (aten::convolution: 0 and 3; convolution_backward, whose first
// argument is the output gradient: 1 and 4).
struct ConvGeometry {
  Shape x, w, out, stride, padding, dilation, output_padding;
  bool transposed = false;
  long long groups = 1;
};

std::optional<ConvGeometry> ReadConv(const CallArgs& a, size_t x_at, size_t concrete_at) {
  if (a.dims.size() < x_at + 2 || a.concrete.size() < concrete_at + 6 || a.types.size() < x_at + 2)
    return std::nullopt;
  ConvGeometry g;
  g.x = a.dims[x_at];
  g.w = a.dims[x_at + 1];
  if (g.x.size() < 3 || g.x.size() > 5 || g.w.size() != g.x.size()) return std::nullopt;
  if (a.types[x_at] != a.types[x_at + 1]) return std::nullopt;  // TraceLens's model raises
  const size_t nd = g.x.size() - 2;
  auto tuple_arg = [&](size_t i, int64_t fallback) -> std::optional<Shape> {
    if (a.concrete[i].empty()) return Shape(nd, fallback);
    Shape v;
    for (const std::string& item : ListItems(a.concrete[i])) {
      char* end = nullptr;
      const long long n = std::strtoll(item.c_str(), &end, 10);
      if (end == item.c_str() || *end != '\0') return std::nullopt;
      v.push_back(n);
    }
    if (v.size() == 1) v = Shape(nd, v[0]);
    if (v.size() != nd) return std::nullopt;
    return v;
  };
  std::optional<Shape> stride = tuple_arg(concrete_at, 1), padding = tuple_arg(concrete_at + 1, 0),
                       dilation = tuple_arg(concrete_at + 2, 1),
                       output_padding = tuple_arg(concrete_at + 4, 0);
  if (!stride || !padding || !dilation || !output_padding) return std::nullopt;
  const std::string& transposed = a.concrete[concrete_at + 3];
  if (transposed != "True" && transposed != "False") return std::nullopt;
  g.transposed = transposed == "True";
  const std::string& groups = a.concrete[concrete_at + 5];
  char* end = nullptr;
  g.groups = std::strtoll(groups.c_str(), &end, 10);
  if (end == groups.c_str()) return std::nullopt;
  // Real geometries are far below 2^31; a hostile one beyond it would overflow below.
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (const Shape* v : {&g.x, &g.w, &*stride, &*padding, &*dilation, &*output_padding}) {
    for (int64_t d : *v)
      if (d < -kLimit || d > kLimit) return std::nullopt;
  }
  g.stride = *stride;
  g.padding = *padding;
  g.dilation = *dilation;
  g.output_padding = *output_padding;
  g.out = {g.x[0], g.transposed ? g.w[1] : g.w[0]};
  for (size_t i = 0; i < nd; ++i) {
    const int64_t in = g.x[2 + i], k = g.w[2 + i], st = g.stride[i], p = g.padding[i],
                  d = g.dilation[i];
    if (st == 0) return std::nullopt;
    if (g.transposed) {
      g.out.push_back((in - 1) * st - 2 * p + d * (k - 1) + g.output_padding[i] + 1);
    } else {
      // Python's int() of the float quotient: truncation toward zero.
      g.out.push_back(static_cast<int64_t>(
          static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(st) + 1));
    }
  }
  return g;
}

double Elements(const Shape& s) { return static_cast<double>(NumElements(s)); }
double ElementsFrom(const Shape& s, size_t first) {
  return static_cast<double>(
      NumElements(Shape(s.begin() + static_cast<std::ptrdiff_t>(first), s.end())));
}

// TraceLens's CONV.flops_func: 2·prod(w[1:]) per element of `per` (the output, or the input
// when transposed), plus one per output element with a bias.
double ConvFlops(const Shape& x, const Shape& w, const Shape& out, bool bias, bool transposed) {
  return (transposed ? Elements(x) : Elements(out)) * 2 * ElementsFrom(w, 1) +
         (bias ? Elements(out) : 0);
}

Priced ConvParams(const CallArgs& a, const ConvGeometry& g, size_t x_at, std::string bias) {
  auto stride_of = [&](size_t i) { return i < a.strides.size() ? Tuple(a.strides[i]) : ""; };
  return Priced{
      {fmt::format("conv{}d", g.x.size() - 2), Tuple(g.x), Tuple(g.w),
       PyTuple({a.types[x_at], a.types[x_at + 1]}), stride_of(x_at), stride_of(x_at + 1),
       std::move(bias), Tuple(g.stride), Tuple(g.padding), Tuple(g.dilation),
       g.transposed ? "True" : "False", Tuple(g.output_padding), fmt::format("{}", g.groups)},
      0,
      kNaN,
      {}};
}

// aten::convolution: convNd, input_shape, filter_shape, dtype_input_weight, input_stride,
// weight_stride, bias, stride, padding, dilation, transposed_conv, output_padding, groups.
// FLOPs as ConvFlops; bytes input, filter, bias and output once. TraceLens takes a bias to
// be there when the op has exactly three inputs, which aten::convolution never has (it
// records nine), so its sheet never counts one; followed here.
std::optional<Priced> PriceConv(const CallArgs& a) {
  std::optional<ConvGeometry> g = ReadConv(a, 0, 3);
  if (!g) return std::nullopt;
  const bool bias = a.dims.size() == 3;
  Priced p = ConvParams(a, *g, 0, bias ? "True" : "False");
  p.flops = ConvFlops(g->x, g->w, g->out, bias, g->transposed);
  if (std::optional<int> bpe = TraceLensBytesPerElement(a.types[0])) {
    p.bytes = (Elements(g->x) + Elements(g->w) + (bias ? static_cast<double>(g->out[1]) : 0) +
               Elements(g->out)) *
              *bpe;
  }
  return p;
}

// aten::convolution_backward (grad_output, input, weight, bias_sizes, ...): the same
// parameters read from input and weight. FLOPs of the input gradient (a transposed
// convolution of the output gradient) and of the weight gradient; bytes of both, each
// reading two of output gradient, input and weight and writing the third. TraceLens's bias
// is Python's `and` chain over bias_sizes, so a recorded empty list prints as "[]" and counts
// as none; followed here.
std::optional<Priced> PriceConvBwd(const CallArgs& a) {
  std::optional<ConvGeometry> g = ReadConv(a, 1, 4);
  if (!g) return std::nullopt;
  std::string bias_text = "False";
  bool bias = false;
  if (a.dims.size() > 3) {
    bias = !a.dims[3].empty();
    bias_text = bias ? "True" : "[]";
  }
  Priced p = ConvParams(a, *g, 1, bias_text);
  auto t = [](const Shape& s) {
    Shape r = s;
    std::swap(r[0], r[1]);
    return r;
  };
  const double input_grad = ConvFlops(g->out, g->w, g->x, false, !g->transposed);
  const double weight_grad = g->transposed ? ConvFlops(t(g->out), t(g->x), t(g->w), false, false)
                                           : ConvFlops(t(g->x), t(g->out), t(g->w), false, false);
  p.flops = input_grad + weight_grad + (bias ? Elements(g->out) : 0);
  if (std::optional<int> bpe = TraceLensBytesPerElement(a.types[1])) {
    p.bytes = 2 * (Elements(g->out) + Elements(g->w) + Elements(g->x)) * *bpe +
              (bias ? Elements(g->out) + static_cast<double>(g->out[1]) : 0);
  }
  return p;
}

struct Family {
  std::string_view tracelens_name, table, title;
  std::vector<std::string_view> params;
  std::vector<std::string_view> ops;  // TraceLens's op_to_perf_model_class_map entries
  std::function<std::optional<Priced>(const CallArgs&)> price;
  // A parameter only some ops have (a backward op's output_mask): TraceLens's sheet has its
  // column only when some row has a value.
  std::string_view optional_param = "";
  // A backward sheet names its forward sheet and lists no ops: its rows are the forward
  // family's calls that autograd differentiated (autograd_links.h), with `price` pricing
  // their backward and the kernel time of the backward nodes paired with them.
  std::string_view backward_of = "";
  // Its model reads the step's iteration annotation (inference attention).
  bool reads_annotation = false;
  // Its rows are pseudo ops of this name, each made of one kernel of another op's call
  // (MoeUnfusedPseudoCalls); it lists no ops.
  std::string_view pseudo_op = "";
};

// CONV_fwd's and CONV_bwd's parameters (ConvParams fills them in this order).
const std::vector<std::string_view> kConvParams = {"convNd",
                                                   "input_shape",
                                                   "filter_shape",
                                                   "dtype_input_weight",
                                                   "input_stride",
                                                   "weight_stride",
                                                   "bias",
                                                   "stride",
                                                   "padding",
                                                   "dilation",
                                                   "transposed_conv",
                                                   "output_padding",
                                                   "groups"};

// The sheet of inference attention calls holds several families (TraceLens's
// InferenceAttention category): its columns are the union of theirs.
constexpr std::string_view kInferenceAttentionTitle =
    "Attention calls of LLM inference servers by geometry and step (TraceLens's "
    "InferenceAttention_fwd)";
const std::vector<std::string_view> kInferenceAttentionParams = {
    "B",     "N_Q",     "H_Q",    "H_V",        "H_K",     "N_KV",    "H_KV",   "d_h_qk",
    "d_h_v", "dropout", "causal", "flash_impl", "c_sq",    "c_sk",    "c_sqsq", "c_sqsk",
    "g_sq",  "g_sk",    "g_sqsq", "g_sqsk",     "dtype_Q", "dtype_KV"};

constexpr std::string_view kMoeUnfusedTitle =
    "Unfused MoE GEMMs of vLLM (Triton matmul_ogs) by size and dtypes (TraceLens's "
    "MoE_unfused_fwd)";
const std::vector<std::string_view> kMoeUnfusedParams = {"num_tokens",  "hidden_dim",  "inter_dim",
                                                         "num_experts", "topk",        "gated",
                                                         "input_dtype", "weight_dtype"};

const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"GEMM",
       "gemm_calls",
       "GEMM primitive calls by shape, layout and dtype (TraceLens's GEMM sheet)",
       {"M", "N", "K", "bias", "stride_A", "stride_B", "dtype_A_B", "B"},
       {"aten::mm", "aten::addmm", "aten::_scaled_mm", "aten::bmm", "aten::baddbmm",
        "vllm::rocm_unquantized_gemm", "aiter::gemm_a16w16"},
       PriceGemm,
       ""},
      {"UnaryElementwise",
       "unary_elementwise_calls",
       "Unary element-wise op calls by shape, dtype and strides (TraceLens's UnaryElementwise)",
       {"op_shape", "dtype_in_out", "stride_input", "stride_output"},
       {"aten::copy", "aten::copy_", "aten::clamp_min", "aten::clamp_min_", "aten::clamp_max",
        "aten::clamp_max_", "aten::sigmoid", "aten::rsqrt", "aten::silu", "aten::neg", "aten::pow",
        "aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::upsample_nearest3d"},
       PriceUnary,
       ""},
      {"BinaryElementwise",
       "binary_elementwise_calls",
       "Binary element-wise op calls by shapes, dtypes and strides (TraceLens's "
       "BinaryElementwise)",
       {"shape_in1", "shape_in2", "dtype_in1_in2_out", "stride_input1", "stride_input2",
        "stride_output"},
       {"aten::div", "aten::div_", "aten::mul", "aten::mul_", "aten::add", "aten::add_",
        "aten::sigmoid_backward", "aten::threshold_backward"},
       PriceBinary,
       ""},
      {"SDPA_fwd",
       "sdpa_fwd_calls",
       "Scaled-dot-product attention calls by geometry (TraceLens's SDPA_fwd)",
       {"B", "N_Q", "H_Q", "N_KV", "H_KV", "d_h_qk", "d_h_v", "dropout", "causal", "flash_impl",
        "dtype_A_B"},
       {"aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_cudnn_attention"},
       PriceSdpa,
       ""},
      {"SDPA_bwd",
       "sdpa_bwd_calls",
       "Backward of scaled-dot-product attention calls, by the forward's geometry (TraceLens's "
       "SDPA_bwd)",
       {"B", "N_Q", "H_Q", "N_KV", "H_KV", "d_h_qk", "d_h_v", "dropout", "causal", "flash_impl",
        "dtype_A_B"},
       {},
       PriceSdpaBackward,
       "",
       "SDPA_fwd"},
      {"Reduce_fwd",
       "reduce_calls",
       "Reduction calls by size and dtype (TraceLens's Reduce_fwd)",
       {"num_input_elems", "num_output_elems", "dtype_in_out", "reduce_type"},
       {"aten::sum", "aten::mean", "aten::max", "aten::min", "aten::norm", "aten::linalg_norm",
        "aten::std", "aten::var", "aten::logsumexp", "aten::cumsum", "aten::cumprod", "aten::amin",
        "aten::amax"},
       PriceReduce,
       ""},
      // TraceLens's Reduce.flops_bwd and bytes_bwd equal the forward's: grad_input is written
      // once per input element and grad_output read once per output element.
      {"Reduce_bwd",
       "reduce_bwd_calls",
       "Backward of reduction calls, by the forward's size and dtype (TraceLens's Reduce_bwd)",
       {"num_input_elems", "num_output_elems", "dtype_in_out", "reduce_type"},
       {},
       PriceReduce,
       "",
       "Reduce_fwd"},
      {"Normalization",
       "norm_calls",
       "Normalisation calls by shape, dtype and mode (TraceLens's Normalization)",
       {"op_shape", "dtype_in_out", "stride_input", "stride_output", "num_channels", "has_bias",
        "is_affine", "is_training", "output_mask"},
       {"aten::batch_norm",
        "aten::native_batch_norm",
        "aten::miopen_batch_norm",
        "aten::cudnn_batch_norm",
        "aten::layer_norm",
        "aten::native_layer_norm",
        "aten::miopen_layer_norm",
        "aten::cudnn_layer_norm",
        "aten::group_norm",
        "aten::native_group_norm",
        "aten::miopen_group_norm",
        "aten::cudnn_group_norm",
        "aten::instance_norm",
        "aten::native_instance_norm",
        "aten::miopen_instance_norm",
        "aten::cudnn_instance_norm",
        "aten::_fused_rms_norm",
        "aten::batch_norm_backward",
        "aten::native_batch_norm_backward",
        "aten::miopen_batch_norm_backward",
        "aten::cudnn_batch_norm_backward",
        "aten::layer_norm_backward",
        "aten::native_layer_norm_backward",
        "aten::miopen_layer_norm_backward",
        "aten::cudnn_layer_norm_backward",
        "aten::group_norm_backward",
        "aten::native_group_norm_backward",
        "aten::miopen_group_norm_backward",
        "aten::cudnn_group_norm_backward",
        "aten::rms_norm_backward",
        "aten::native_rms_norm_backward",
        "aten::miopen_rms_norm_backward",
        "aten::cudnn_rms_norm_backward",
        "aten::_fused_rms_norm_backward"},
       PriceNorm,
       "output_mask"},
      {"RMSNorm_fwd",
       "rmsnorm_calls",
       "RMSNorm calls of ROCm inference stacks by shape and dtype (TraceLens's RMSNorm_fwd)",
       {"op_shape", "dtype_in_out", "stride_input", "stride_output", "num_channels", "has_bias",
        "is_affine", "is_training"},
       {"aiter::rms_norm", "aiter::rmsnorm", "aiter::rmsnorm2d_fwd_with_add_ck",
        "aiter::add_rmsnorm"},
       PriceVendorRmsNorm,
       ""},
      {"RoPE_fwd",
       "rope_calls",
       "Rotary-embedding calls of ROCm inference stacks by size (TraceLens's RoPE_fwd)",
       {"num_elements"},
       {"sgl_kernel::rotary_embedding"},
       PriceSglRotary,
       ""},
      {"InferenceAttention_fwd",
       "inference_attention_calls",
       kInferenceAttentionTitle,
       kInferenceAttentionParams,
       {"vllm::unified_attention_with_output", "aiter::mha_varlen_fwd"},
       [](const CallArgs& a) { return PriceInferenceAttention(a, AttentionArgs::kQkv); },
       "",
       "",
       true},
      {"InferenceAttention_fwd",
       "inference_attention_calls",
       kInferenceAttentionTitle,
       kInferenceAttentionParams,
       {"aiter::fmha_v3_varlen_fwd", "aiter::mha_batch_prefill"},
       [](const CallArgs& a) { return PriceInferenceAttention(a, AttentionArgs::kQkvVFromV); },
       "",
       "",
       true},
      // TraceLens's paged-attention model names no K/V cache dtype.
      {"InferenceAttention_fwd",
       "inference_attention_calls",
       kInferenceAttentionTitle,
       {kInferenceAttentionParams.begin(), kInferenceAttentionParams.end() - 1},
       {"sglang_profiler::attention_paged_attention_ragged"},
       [](const CallArgs& a) { return PriceInferenceAttention(a, AttentionArgs::kPagedRagged); },
       "",
       "",
       true},
      {"InferenceAttention_fwd",
       "inference_attention_calls",
       kInferenceAttentionTitle,
       {"op_shape", "nelems", "dtype"},
       {"sglang::store_cache"},
       PriceStoreCache,
       ""},
      {"MoE_unfused_fwd",
       "moe_unfused_calls",
       kMoeUnfusedTitle,
       kMoeUnfusedParams,
       {},
       [](const CallArgs& a) { return PriceMoeUnfused(a, true); },
       "",
       "",
       false,
       "pseudo_op::moe_triton_unfused_up"},
      {"MoE_unfused_fwd",
       "moe_unfused_calls",
       kMoeUnfusedTitle,
       kMoeUnfusedParams,
       {},
       [](const CallArgs& a) { return PriceMoeUnfused(a, false); },
       "",
       "",
       false,
       "pseudo_op::moe_triton_unfused_down"},
      {"CONV_fwd",
       "conv_fwd_calls",
       "Convolution calls by shape, layout and geometry (TraceLens's CONV_fwd)",
       kConvParams,
       {"aten::convolution"},
       PriceConv,
       ""},
      {"CONV_bwd",
       "conv_bwd_calls",
       "Convolution backward calls by shape, layout and geometry (TraceLens's CONV_bwd)",
       kConvParams,
       {"aten::convolution_backward"},
       PriceConvBwd,
       ""},
  };
  return families;
}

}  // namespace

namespace {

// The family naming an op, or -1.
int FamilyOf(std::string_view op_name) {
  const std::vector<Family>& families = Families();
  for (size_t f = 0; f < families.size(); ++f) {
    const auto& ops = families[f].ops;
    if (std::find(ops.begin(), ops.end(), op_name) != ops.end()) return static_cast<int>(f);
  }
  return -1;
}

CallArgs ReadCallArgs(const TraceData& trace, const CpuEvent& ev) {
  CallArgs args;
  args.name = trace.Name(ev.name);
  const CpuArgs& recorded = trace.Args(ev);
  args.raw_dims = trace.Name(recorded.input_dims);
  args.raw_types = trace.Name(recorded.input_types);
  args.raw_strides = trace.Name(recorded.input_strides);
  args.raw_concrete = trace.Name(recorded.concrete_inputs);
  args.dims = ParseInputDims(args.raw_dims);
  args.types = ParseStringList(args.raw_types);
  args.strides = ParseInputDims(args.raw_strides);
  args.concrete = ParseStringList(args.raw_concrete);
  return args;
}

}  // namespace

bool HasPerfModel(std::string_view op_name) { return FamilyOf(op_name) >= 0; }

bool PerfModelReadsAnnotation(std::string_view op_name) {
  const int f = FamilyOf(op_name);
  return f >= 0 && Families()[static_cast<size_t>(f)].reads_annotation;
}

std::optional<PricedCall> PriceCall(const TraceData& trace, const CpuEvent& call,
                                    std::string_view annotation) {
  const int f = FamilyOf(trace.Name(call.name));
  if (f < 0 || trace.Args(call).input_dims == 0) return std::nullopt;
  const Family& family = Families()[static_cast<size_t>(f)];
  CallArgs args = ReadCallArgs(trace, call);
  args.annotation = annotation;
  std::optional<Priced> priced = family.price(args);
  if (!priced) return std::nullopt;
  PricedCall out;
  out.sheet = family.tracelens_name;
  out.names = family.params;
  out.params = std::move(priced->params);
  out.optional_param = family.optional_param;
  out.flops = priced->flops;
  out.bytes = priced->bytes;
  return out;
}

std::vector<std::pair<std::string_view, std::string_view>> PerfSheetNames() {
  std::vector<std::pair<std::string_view, std::string_view>> names;
  for (const Family& f : Families()) {
    if (names.empty() || names.back().second != f.tracelens_name)
      names.emplace_back(f.table, f.tracelens_name);
  }
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
  // Linear time: a group can hold every call of an op (millions in a long trace), and only
  // the middle needs ordering.
  const size_t n = values.size();
  s.min = s.max = values.front();
  // Compensated (Neumaier) summation: for calls' times the result is their exact sum rounded
  // once, whatever the calls' order (not guaranteed for every input, but its error bound is a
  // rounding of the sum, not of each addition), so groups whose times add up to the same total
  // sort as equal (rows are ordered by it).
  double compensation = 0;
  for (double v : values) {
    const double t = s.sum + v;
    compensation += std::fabs(s.sum) >= std::fabs(v) ? (s.sum - t) + v : (v - t) + s.sum;
    s.sum = t;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.sum += compensation;
  s.mean = s.sum / static_cast<double>(n);
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), middle, values.end());
  // An even count: the mean of the two middle values, the lower being the largest before it.
  s.median = n % 2 == 1 ? *middle : 0.5 * (*std::max_element(values.begin(), middle) + *middle);
  if (n < 2) {
    s.std = kNaN;  // pandas' sample std of one value
  } else {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

namespace {

// Kernel busy time of the backward work of each forward call that has a backward sheet
// (TraceLens's compute_perf_metrics with bwd=True): the union of the kernels under every
// backward node paired with the call or with an op nested inside it. -1 for a call whose own
// backward node is missing (TraceLens leaves such a call out of the sheet).
std::vector<int64_t> BackwardKernelTimes(const TraceData& trace,
                                         const std::vector<uint32_t>& events,
                                         const OpKernelTimes& times,
                                         const std::vector<int32_t>& backward_of,
                                         const std::vector<uint8_t>& wanted) {
  const size_t n = trace.cpu.size();
  std::vector<int64_t> busy(n, -1);
  // Backward nodes of each wanted call: its own and those of the ops nested in it.
  std::vector<std::vector<uint32_t>> nodes_of(n);
  for (size_t j = 0; j < n; ++j) {
    if (backward_of[j] < 0) continue;
    int depth = 0;
    for (int32_t a = static_cast<int32_t>(j); a >= 0 && depth < kMaxNesting;
         a = trace.cpu[a].parent) {
      if (wanted[static_cast<size_t>(a)])  // wanted calls have a node of their own
        nodes_of[static_cast<size_t>(a)].push_back(static_cast<uint32_t>(backward_of[j]));
      ++depth;
    }
  }
  // One node: its subtree's busy time is known. Several: the union over their kernels.
  std::vector<std::vector<uint32_t>> calls_of_node;  // node -> calls counting it, when shared
  std::vector<int32_t> slot_of_node(n, -1);
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint32_t>& nodes = nodes_of[i];
    if (nodes.empty()) continue;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (nodes.size() == 1) {
      busy[i] = times.subtree_ns[nodes[0]];
      continue;
    }
    for (uint32_t node : nodes) {
      if (slot_of_node[node] < 0) {
        slot_of_node[node] = static_cast<int32_t>(calls_of_node.size());
        calls_of_node.emplace_back();
      }
      calls_of_node[static_cast<size_t>(slot_of_node[node])].push_back(static_cast<uint32_t>(i));
    }
  }
  if (calls_of_node.empty()) return busy;
  // A kernel counts once per call whose backward holds it: a few times in a real trace. A
  // hostile one (calls nested hundreds deep, each with nodes) could ask for billions; past
  // the budget the calls with several nodes are left out instead.
  const size_t budget = 16 * (events.size() + n) + (size_t{1} << 20);
  std::vector<GroupedInterval> intervals;
  for (uint32_t e : events) {
    const GpuEvent& g = trace.gpu[e];
    int depth = 0;
    for (int32_t a = g.op; a >= 0 && depth < kMaxNesting; a = trace.cpu[a].parent, ++depth) {
      const int32_t slot = slot_of_node[static_cast<size_t>(a)];
      if (slot < 0) continue;
      for (uint32_t call : calls_of_node[static_cast<size_t>(slot)])
        intervals.push_back({call, {g.ts_ns, g.end_ns()}});
    }
    if (intervals.size() > budget) return busy;
  }
  const std::vector<int64_t> unions = UnionLengthByGroup(intervals, n);
  for (size_t i = 0; i < n; ++i) {
    if (nodes_of[i].size() > 1) busy[i] = unions[i];
  }
  return busy;
}

}  // namespace

namespace {

// For the calls `wanted` says (indices into trace.cpu) that graph launches replayed: their
// replayed kernels among `events`, per launch (index of the launch call). The walk up from a
// kernel's op stops 256 levels up, bounding a hostile trace's cost.
std::map<size_t, std::map<int32_t, std::vector<uint32_t>>> ReplaysOfCalls(
    const TraceData& trace, const std::vector<uint32_t>& events,
    const std::function<bool(size_t)>& wanted) {
  std::map<size_t, std::map<int32_t, std::vector<uint32_t>>> out;
  std::vector<int8_t> is_wanted(trace.cpu.size(), -1);  // -1: not asked yet
  for (uint32_t k : events) {
    const GpuEvent& g = trace.gpu[k];
    if (g.launcher < 0 || g.op < 0 || !trace.cpu[static_cast<size_t>(g.launcher)].graph_launch)
      continue;
    int32_t op = g.op;
    for (int depth = 0; op >= 0 && depth < kMaxNesting; ++depth) {
      const size_t o = static_cast<size_t>(op);
      if (is_wanted[o] < 0) is_wanted[o] = wanted(o) ? 1 : 0;
      if (is_wanted[o]) out[o][g.launcher].push_back(k);
      op = trace.cpu[o].parent;
    }
  }
  return out;
}

// Families that share a sheet (consecutive in Families()) become one sheet: its columns are
// the union of theirs, in the order of each family's first call, and a row lacks the columns
// of the other families. As in TraceLens's pandas table, a column some row lacks holds
// floats, so its whole numbers print as "32.0".
std::vector<PerfSheet> MergeSheetsOfOneName(std::vector<PerfSheet> sheets,
                                            const std::vector<size_t>& first_call) {
  std::vector<PerfSheet> merged;
  for (size_t begin = 0; begin < sheets.size();) {
    size_t end = begin + 1;
    while (end < sheets.size() && sheets[end].tracelens_name == sheets[begin].tracelens_name) ++end;
    if (end == begin + 1) {
      merged.push_back(std::move(sheets[begin++]));
      continue;
    }
    std::vector<size_t> order;
    for (size_t f = begin; f < end; ++f)
      if (!sheets[f].groups.empty()) order.push_back(f);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return first_call[a] < first_call[b]; });
    PerfSheet out = sheets[begin];
    out.groups.clear();
    if (!order.empty()) out.params.clear();
    for (size_t f : order) {
      for (std::string_view p : sheets[f].params)
        if (std::find(out.params.begin(), out.params.end(), p) == out.params.end())
          out.params.push_back(p);
    }
    std::vector<uint8_t> gaps(out.params.size(), 0);
    for (size_t f : order) {
      for (PerfSheetGroup& g : sheets[f].groups) {
        std::vector<std::string> values(out.params.size());
        for (size_t c = 0; c < out.params.size(); ++c) {
          auto at = std::find(sheets[f].params.begin(), sheets[f].params.end(), out.params[c]);
          if (at == sheets[f].params.end()) {
            gaps[c] = 1;
          } else {
            values[c] = std::move(g.params[static_cast<size_t>(at - sheets[f].params.begin())]);
          }
        }
        g.params = std::move(values);
        out.groups.push_back(std::move(g));
      }
    }
    auto whole_number = [](const std::string& t) {
      const size_t digits = !t.empty() && t[0] == '-' ? 1 : 0;
      return t.size() > digits && std::all_of(t.begin() + static_cast<std::ptrdiff_t>(digits),
                                              t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    for (PerfSheetGroup& g : out.groups) {
      for (size_t c = 0; c < out.params.size(); ++c)
        if (gaps[c] && whole_number(g.params[c])) g.params[c] += ".0";
    }
    std::stable_sort(out.groups.begin(), out.groups.end(), [](const auto& a, const auto& b) {
      return a.kernel_us.sum > b.kernel_us.sum;
    });
    merged.push_back(std::move(out));
    begin = end;
  }
  return merged;
}

}  // namespace

std::vector<PerfSheet> SummarizePerfSheets(const TraceData& trace,
                                           const std::vector<uint32_t>& events,
                                           const OpKernelTimes& times,
                                           const std::vector<uint8_t>& recompute_cpu) {
  const std::vector<Family>& families = Families();
  // Each forward family's backward sheet (-1: none).
  std::vector<int> backward_family(families.size(), -1);
  for (size_t b = 0; b < families.size(); ++b) {
    if (families[b].backward_of.empty()) continue;
    for (size_t f = 0; f < families.size(); ++f) {
      if (families[f].tracelens_name == families[b].backward_of)
        backward_family[f] = static_cast<int>(b);
    }
  }
  // The family of each op name id (-1: none), decided once per name.
  // (Indexed by string id: a lookup per CPU event of a large trace must cost next to nothing.)
  std::vector<int16_t> family_of(trace.strings.size(), -2);  // -2: not looked up yet
  auto family_of_event = [&](const CpuEvent& ev) {
    int16_t& known = family_of[ev.name];
    if (known == -2) known = static_cast<int16_t>(FamilyOf(trace.Name(ev.name)));
    return static_cast<int>(known);
  };
  // Backward work of the calls of families with a backward sheet.
  const std::vector<int32_t> backward_of = PairForwardWithBackward(trace);
  std::vector<int64_t> backward_ns;
  if (!backward_of.empty()) {
    std::vector<uint8_t> wanted(trace.cpu.size(), 0);
    bool any = false;
    for (size_t i = 0; i < trace.cpu.size(); ++i) {
      const CpuEvent& ev = trace.cpu[i];
      if (ev.kind != CpuKind::kOp || trace.Args(ev).input_dims == 0 || backward_of[i] < 0) continue;
      const int f = family_of_event(ev);
      wanted[i] = f >= 0 && backward_family[static_cast<size_t>(f)] >= 0;
      any = any || wanted[i];
    }
    if (any) backward_ns = BackwardKernelTimes(trace, events, times, backward_of, wanted);
  }
  // The step annotations, and the graph replays of the calls that read them, found once the
  // first such call comes.
  std::optional<StepAnnotations> steps;
  std::map<size_t, std::map<int32_t, std::vector<uint32_t>>> replays;
  // Where each family's first call is: a sheet of several families lists its columns in
  // that order (pandas takes them in the order the rows bring them).
  std::vector<size_t> first_call(families.size(), SIZE_MAX);
  // Whether that first call is a batched GEMM: TraceLens's bmm and baddbmm parameters start
  // with B, so its column then comes first; mm's have none, and pandas appends B last.
  std::vector<bool> first_call_batched(families.size(), false);
  struct Acc {
    PerfSheetGroup group;
    std::vector<double> kernel_us, tflops, tbps;
  };
  std::vector<std::map<std::tuple<std::string, std::vector<std::string>, bool>, Acc>> groups(
      families.size());
  std::vector<std::set<size_t>> float_params(families.size());
  using Record = std::array<uint32_t, 6>;
  // Per (family, argument record): the call priced once; per (family, record, recompute):
  // its group, found once (std::map nodes do not move).
  std::map<std::pair<int, Record>, std::optional<Priced>> priced_by_record;
  std::map<std::tuple<int, Record, bool>, Acc*> group_of;
  // The group of a priced call of family f (the op at trace.cpu[i], or the pseudo op
  // `name` made of one of its kernels), created with the call's details when new.
  auto group_for = [&](int f, size_t i, std::string_view name, const Priced& priced,
                       bool recompute) -> Acc& {
    if (i < first_call[static_cast<size_t>(f)]) {
      first_call[static_cast<size_t>(f)] = i;
      const std::vector<std::string_view>& names = families[static_cast<size_t>(f)].params;
      first_call_batched[static_cast<size_t>(f)] =
          !names.empty() && names.back() == "B" && (name == "aten::bmm" || name == "aten::baddbmm");
    }
    Acc& acc = groups[static_cast<size_t>(f)]
                     [std::make_tuple(std::string(name), priced.params, recompute)];
    for (size_t p : priced.float_params) float_params[static_cast<size_t>(f)].insert(p);
    if (acc.kernel_us.empty()) {
      const CpuEvent& ev = trace.cpu[i];
      PerfSheetGroup& g = acc.group;
      g.name = name;
      g.params = priced.params;
      g.recompute = recompute;
      g.thread = ev.thread;
      const CpuArgs& args = trace.Args(ev);
      g.input_dims = PythonRepr(trace.Name(args.input_dims), PythonSequence::kList);
      g.input_types = PythonRepr(trace.Name(args.input_types), PythonSequence::kList);
      g.input_strides = PythonRepr(trace.Name(args.input_strides), PythonSequence::kList);
      g.concrete_inputs = PythonRepr(trace.Name(args.concrete_inputs), PythonSequence::kList);
      g.gflops = priced.flops / 1e9;
      g.bytes = priced.bytes;
    }
    return acc;
  };
  auto accumulate = [&](Acc& acc, const Priced& priced, int64_t kernel_ns) {
    const double us = static_cast<double>(kernel_ns) / 1e3;
    acc.kernel_us.push_back(us);
    acc.tflops.push_back(us > 0 ? priced.flops / 1e12 / (us / 1e6) : kNaN);
    acc.tbps.push_back(us > 0 ? priced.bytes / 1e12 / (us / 1e6) : kNaN);
  };
  // `annotation`: the enclosing step's (families that read it; 0 otherwise).
  auto add_call = [&](int f, size_t i, int64_t kernel_ns, uint32_t annotation) {
    const CpuEvent& ev = trace.cpu[i];
    // Calls repeat a few argument records many times: each is parsed and priced once.
    const CpuArgs& a = trace.Args(ev);
    const Record record = {ev.name,         a.input_dims,      a.input_types,
                           a.input_strides, a.concrete_inputs, annotation};
    auto [cached, first_time] = priced_by_record.try_emplace({f, record});
    if (!first_time && !cached->second) return;
    const std::string_view name = trace.Name(ev.name);
    if (first_time) {
      // A call the family cannot price is left out, as TraceLens leaves out a call whose
      // perf model raises.
      CallArgs args = ReadCallArgs(trace, ev);
      if (annotation != 0) args.annotation = trace.Name(annotation);
      cached->second = families[static_cast<size_t>(f)].price(args);
    }
    const std::optional<Priced>& priced = cached->second;
    if (!priced) return;
    const bool recompute = !recompute_cpu.empty() && recompute_cpu[i];
    Acc*& group = group_of[{f, record, recompute}];
    if (group == nullptr) group = &group_for(f, i, name, *priced, recompute);
    accumulate(*group, *priced, kernel_ns);
  };
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind != CpuKind::kOp || trace.Args(ev).input_dims == 0) continue;
    const int f = family_of_event(ev);
    if (f < 0) continue;
    if (families[static_cast<size_t>(f)].reads_annotation) {
      if (!steps) {
        steps.emplace(trace);
        replays = ReplaysOfCalls(trace, events, [&](size_t op) {
          const CpuEvent& e = trace.cpu[op];
          if (e.kind != CpuKind::kOp || trace.Args(e).input_dims == 0) return false;
          const int g = family_of_event(e);
          return g >= 0 && families[static_cast<size_t>(g)].reads_annotation;
        });
      }
      // A captured call replayed by graph launches is one call per launch, in that launch's
      // step, as TraceLens merges the capture under each launch.
      if (auto it = replays.find(i); it != replays.end()) {
        for (const auto& [launch, kernels] : it->second) {
          std::vector<Interval> spans;
          for (uint32_t k : kernels) spans.push_back({trace.gpu[k].ts_ns, trace.gpu[k].end_ns()});
          add_call(f, i, TotalLength(MergeIntervals(std::move(spans))),
                   steps->Of(static_cast<size_t>(launch)));
        }
      } else {
        add_call(f, i, times.subtree_ns[i], steps->Of(i));
      }
      continue;
    }
    add_call(f, i, times.subtree_ns[i], 0);
    const int b = backward_family[static_cast<size_t>(f)];
    if (b >= 0 && !backward_ns.empty() && backward_ns[i] >= 0) add_call(b, i, backward_ns[i], 0);
  }
  // Pseudo ops made of one kernel each (vLLM's unfused MoE GEMMs): priced one by one, their
  // kernel's time.
  for (const MoePseudoCall& c : MoeUnfusedPseudoCalls(trace, events)) {
    const std::string_view pseudo =
        c.up ? "pseudo_op::moe_triton_unfused_up" : "pseudo_op::moe_triton_unfused_down";
    for (size_t f = 0; f < families.size(); ++f) {
      if (families[f].pseudo_op != pseudo) continue;
      CallArgs args = ReadCallArgs(trace, trace.cpu[c.moe_op]);
      args.kernel = trace.Name(trace.gpu[c.kernel].name);
      args.topk = c.topk;
      std::optional<Priced> priced = families[f].price(args);
      if (!priced) break;
      const bool recompute = !recompute_cpu.empty() && recompute_cpu[c.moe_op];
      accumulate(group_for(static_cast<int>(f), c.moe_op, pseudo, *priced, recompute), *priced,
                 trace.gpu[c.kernel].dur_ns);
      break;
    }
  }
  std::vector<PerfSheet> sheets;
  for (size_t f = 0; f < families.size(); ++f) {
    PerfSheet sheet{
        families[f].tracelens_name, families[f].table, families[f].title, families[f].params, {}};
    for (auto& [key, acc] : groups[f]) {
      // A column holding one float prints all its integers as floats.
      for (size_t p : float_params[f]) {
        std::string& text = acc.group.params[p];
        if (text.find('.') == std::string::npos) text += ".0";
      }
      acc.group.kernel_us = SummarizeCalls(std::move(acc.kernel_us));
      acc.group.tflops = SummarizeCalls(std::move(acc.tflops));
      acc.group.tbps = SummarizeCalls(std::move(acc.tbps));
      sheet.groups.push_back(std::move(acc.group));
    }
    // An optional parameter no row has is not a column.
    if (!families[f].optional_param.empty()) {
      auto at = std::find(sheet.params.begin(), sheet.params.end(), families[f].optional_param);
      const size_t index = static_cast<size_t>(at - sheet.params.begin());
      if (at != sheet.params.end() &&
          std::all_of(sheet.groups.begin(), sheet.groups.end(),
                      [&](const PerfSheetGroup& g) { return g.params[index].empty(); })) {
        sheet.params.erase(at);
        for (PerfSheetGroup& g : sheet.groups) g.params.erase(g.params.begin() + index);
      }
    }
    if (first_call_batched[f] && !sheet.params.empty() && sheet.params.back() == "B") {
      std::rotate(sheet.params.rbegin(), sheet.params.rbegin() + 1, sheet.params.rend());
      for (PerfSheetGroup& g : sheet.groups)
        std::rotate(g.params.rbegin(), g.params.rbegin() + 1, g.params.rend());
    }
    std::stable_sort(sheet.groups.begin(), sheet.groups.end(), [](const auto& a, const auto& b) {
      return a.kernel_us.sum > b.kernel_us.sum;
    });
    sheets.push_back(std::move(sheet));
  }
  return MergeSheetsOfOneName(std::move(sheets), first_call);
}

}  // namespace sextant
