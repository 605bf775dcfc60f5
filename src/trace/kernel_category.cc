#include "trace/kernel_category.h"

#include <algorithm>
#include <array>

#include "trace/gpu_timeline.h"

namespace sextant {
namespace {

bool Contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

bool ContainsAny(std::string_view text, std::initializer_list<std::string_view> needles) {
  for (auto n : needles) {
    if (Contains(text, n)) return true;
  }
  return false;
}

// "gemm", but not inside "fbgemm": FBGEMM's embedding and sparse kernels live in namespace
// fbgemm_gpu or take its argument types.
bool ContainsGemm(std::string_view name) {
  for (size_t at = name.find("gemm"); at != std::string_view::npos;
       at = name.find("gemm", at + 1)) {
    if (at < 2 || name.substr(at - 2, 2) != "fb") return true;
  }
  return false;
}

// "conv"/"Conv" for a convolution, but not inside "convert" (vLLM's _typeConvert<T> in a
// norm kernel's return type, Inductor's convert_element_type).
bool ContainsConvolution(std::string_view name) {
  for (std::string_view needle : {"conv", "Conv"}) {
    for (size_t at = name.find(needle); at != std::string_view::npos;
         at = name.find(needle, at + 1)) {
      if (name.substr(at + needle.size(), 3) != "ert") return true;
    }
  }
  return false;
}

}  // namespace

bool IsTensorFloat32KernelName(std::string_view name) {
  return ContainsAny(name, {"tf32", "TF32", "tensorop_s1688"});
}

std::string_view CategoryName(KernelCategory category) {
  switch (category) {
    case KernelCategory::kGemm: return "GEMM";
    case KernelCategory::kAttention: return "attention";
    case KernelCategory::kElementwise: return "elementwise";
    case KernelCategory::kReductionNorm: return "reduction/norm";
    case KernelCategory::kCommunication: return "communication";
    case KernelCategory::kMemory: return "memory";
    case KernelCategory::kOther: return "other";
  }
  return "other";
}

KernelCategory CategorizeKernelName(std::string_view name) {
  if (IsCommunicationKernelName(name)) return KernelCategory::kCommunication;
  // Data movement around MoE experts, attention and quantised GEMMs, named after what they
  // serve: token routing and sorting, the weighted combine ("finalize"), per-block
  // quantisation, the KV-cache store and rotary embeddings are elementwise work, not the
  // GEMM or attention their names mention (TraceLens's kernel classifier,
  // TraceLens/Agent/Analysis/utils/classify_kernels.py, files them the same way).
  if (ContainsAny(name, {"routingIndices", "routingRenormalize", "topkGatingSoftmax", "MoeSorting",
                         "moe_align_block", "finalizeKernel", "quantize_with_block", "fp8_quant",
                         "per_token_group_quant", "reshape_and_cache", "rotary_embedding"})) {
    return KernelCategory::kElementwise;
  }
  // Attention first: flash kernels often contain "gemm" in their template arguments.
  if (ContainsAny(name, {"flash", "fmha", "attn", "attention", "sdpa", "Attention"})) {
    return KernelCategory::kAttention;
  }
  // "bmm_": TensorRT-LLM's batched (MoE, FP4/MX) GEMM kernels, bmm_<A type>_<B type>_...
  // "scudnn": cuDNN's implicit-GEMM convolutions of the Volta/Turing era
  // (volta_scudnn_128x64_stridedB_splitK_..., in the corpus's 2021 ResNet-50 traces).
  if (ContainsGemm(name) || ContainsConvolution(name) ||
      ContainsAny(name,
                  {"Gemm", "GEMM", "cutlass", "xmma", "Cijk_", "cublas", "matmul", "nvjet", "wgmma",
                   "hipblaslt", "winograd", "dgrad", "wgrad", "fprop", "bmm_", "scudnn"})) {
    return KernelCategory::kGemm;
  }
  if (ContainsAny(name, {"reduce", "Reduce", "norm", "Norm", "softmax", "Softmax", "welford",
                         "triton_red", "triton_per", "cross_entropy", "nll_loss"})) {
    return KernelCategory::kReductionNorm;
  }
  if (ContainsAny(name, {"elementwise", "Elementwise", "Functor", "triton_poi", "fill", "copy",
                         "index", "Index", "CatArray", "cat_", "where", "scatter", "gather",
                         "multi_tensor_apply", "activation", "gelu", "silu", "relu"})) {
    return KernelCategory::kElementwise;
  }
  return KernelCategory::kOther;
}

KernelCategory CategorizeOpName(std::string_view op, bool* known) {
  *known = true;
  static constexpr std::array<std::string_view, 12> kGemm = {"aten::mm",
                                                             "aten::addmm",
                                                             "aten::bmm",
                                                             "aten::baddbmm",
                                                             "aten::_scaled_mm",
                                                             "aten::matmul",
                                                             "aten::linear",
                                                             "aten::convolution",
                                                             "aten::_convolution",
                                                             "aten::cudnn_convolution",
                                                             "aten::convolution_backward",
                                                             "aten::addbmm"};
  if (std::find(kGemm.begin(), kGemm.end(), op) != kGemm.end()) return KernelCategory::kGemm;
  // Every convolution op: the backend-specific ones (aten::cudnn_convolution_backward_weight,
  // aten::miopen_convolution, aten::_convolution_double_backward) and the functional
  // aten::conv1d/conv2d/conv3d/conv_transpose*. Their kernels include helpers (cuDNN's
  // scalePackedTensor, FFT passes) that are part of the convolution's time.
  if (op.starts_with("aten::") &&
      (Contains(op, "convolution") ||
       (op.starts_with("aten::conv") && !op.starts_with("aten::convert")))) {
    return KernelCategory::kGemm;
  }
  if (ContainsAny(op, {"scaled_dot_product", "flash_attn", "flash_attention", "efficient_attention",
                       "cudnn_attention", "unified_attention"})) {
    return KernelCategory::kAttention;
  }
  if (ContainsAny(op, {"norm", "softmax", "aten::sum", "aten::mean", "aten::max", "aten::min",
                       "aten::amax", "aten::std", "aten::var", "logsumexp", "cumsum"})) {
    return KernelCategory::kReductionNorm;
  }
  if (op.starts_with("record_param_comms") || op.starts_with("nccl:") || op.starts_with("c10d")) {
    return KernelCategory::kCommunication;
  }
  *known = false;
  return KernelCategory::kOther;
}

KernelCategory CategorizeGpuEvent(const TraceData& trace, const GpuEvent& event) {
  if (event.kind != GpuKind::kKernel) return KernelCategory::kMemory;
  std::string_view name = trace.Name(event.name);
  KernelCategory by_kernel = CategorizeKernelName(name);
  if (by_kernel == KernelCategory::kCommunication) return by_kernel;
  if (event.op >= 0) {
    bool known = false;
    KernelCategory by_op = CategorizeOpName(trace.Name(trace.cpu[event.op].name), &known);
    if (known) return by_op;
  }
  return by_kernel;
}

GpuEventCategorizer::GpuEventCategorizer(const TraceData& trace)
    : trace_(trace),
      by_kernel_(trace.strings.size(), kUnset),
      by_op_(trace.strings.size(), kUnset) {}

KernelCategory GpuEventCategorizer::operator()(const GpuEvent& event) {
  // Same decisions as CategorizeGpuEvent.
  if (event.kind != GpuKind::kKernel) return KernelCategory::kMemory;
  int8_t& by_kernel = by_kernel_[event.name];
  if (by_kernel == kUnset)
    by_kernel = static_cast<int8_t>(CategorizeKernelName(trace_.Name(event.name)));
  auto kernel_category = static_cast<KernelCategory>(by_kernel);
  if (kernel_category == KernelCategory::kCommunication || event.op < 0) return kernel_category;
  uint32_t op_name = trace_.cpu[event.op].name;
  int8_t& by_op = by_op_[op_name];
  if (by_op == kUnset) {
    bool known = false;
    KernelCategory c = CategorizeOpName(trace_.Name(op_name), &known);
    by_op = known ? static_cast<int8_t>(c) : kOpSaysNothing;
  }
  return by_op == kOpSaysNothing ? kernel_category : static_cast<KernelCategory>(by_op);
}

}  // namespace sextant
