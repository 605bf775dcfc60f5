#include "trace/op_category.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "trace/gpu_timeline.h"
#include "trace/intervals.h"
#include "trace/op_arguments.h"

namespace sextant {
namespace {

struct NamedCategory {
  std::string_view op;
  std::string_view category;
};

// Op name -> category, as TraceLens files them (header comment: its perf-model map, the
// classes' categories and the category-only tables). Sorted by name for binary search.
constexpr NamedCategory kOpCategories[] = {
    {"ConvBiasReLU_", "CONV_fwd"},
    {"ConvBiasReLU_Backward", "CONV_bwd"},
    {"ConvBias_", "CONV_fwd"},
    {"ConvBias_Backward", "CONV_bwd"},
    {"CrossEntropyFunction", "CrossEntropy_fwd"},
    {"CrossEntropyFunctionBackward", "CrossEntropy_bwd"},
    {"DaoAILab::_causal_conv1d_bwd_cpp", "SSM_bwd"},
    {"DaoAILab::_causal_conv1d_fwd_cpp", "SSM_fwd"},
    {"EvoformerAttention", "SDPA_fwd"},
    {"FlashAttnFunc", "SDPA_fwd"},
    {"FlashAttnFuncBackward", "SDPA_bwd"},
    {"FusedAttnFuncBackward", "SDPA_bwd"},
    {"FusedRoPEFunc", "RoPE_fwd"},
    {"FusedRoPEFuncBackward", "RoPE_bwd"},
    {"LigerSiLUMulFunction", "elementwise"},
    {"MambaSplitConv1dScanCombinedFn", "SSM_fwd"},
    {"MambaSplitConv1dScanCombinedFnBackward", "SSM_bwd"},
    {"MoECombine", "MoE_comm_fwd"},
    {"MoECombineBackward", "MoE_comm_bwd"},
    {"MoEDispatch", "MoE_comm_fwd"},
    {"MoEDispatchBackward", "MoE_comm_bwd"},
    {"TokenPermuteMaskMap", "MoE_comm_fwd"},
    {"TokenPermuteMaskMapBackward", "MoE_comm_bwd"},
    {"_C::silu_and_mul", "elementwise"},
    {"_C_cache_ops::concat_and_cache_mla", "InferenceAttention"},
    {"_C_cache_ops::reshape_and_cache_flash", "InferenceAttention"},
    {"_C_custom_ar::all_reduce", "CustomCollective"},
    {"_C_custom_ar::qr_all_reduce", "CustomCollective"},
    {"_LayerNormLinearBackward_wgrad_mm", "GEMM"},
    {"_LayerNormLinearBackward_xgrad_mm", "GEMM"},
    {"_LayerNormLinear_yfwd_mm", "GEMM"},
    {"_LinearBackward_wgrad_mm", "GEMM"},
    {"_LinearBackward_xgrad_mm", "GEMM"},
    {"_Linear_yfwd_mm", "GEMM"},
    {"_OperationFuserAutogradFunction", "MoE_comm_fwd"},
    {"_OperationFuserAutogradFunctionBackward", "MoE_comm_bwd"},
    {"_moe_C::moe_align_block_size", "MoE_aux"},
    {"aiter::_flash_attn_backward", "SDPA_bwd"},
    {"aiter::_flash_attn_forward", "SDPA_fwd"},
    {"aiter::_fuse_rmsnorm_fp4_quant", "RMSNorm"},
    {"aiter::_gemm_a16w16_asm", "GEMM"},
    {"aiter::_gemm_a4w4_asm", "GEMM"},
    {"aiter::_gemm_a8w8_blockscale_bpreshuffle_asm", "GEMM"},
    {"aiter::_groupnorm_run", "NORM_fwd"},
    {"aiter::add_rmsnorm", "RMSNorm"},
    {"aiter::all_gather_reg", "CustomCollective"},
    {"aiter::batched_gemm_a16wfp4_", "GEMM"},
    {"aiter::biased_grouped_topk_hip", "MoE_aux"},
    {"aiter::ck_moe_stage1", "MoE_unfused"},
    {"aiter::ck_moe_stage2", "MoE_unfused"},
    {"aiter::dynamic_per_group_scaled_quant", "GroupQuant"},
    {"aiter::dynamic_per_group_scaled_quant_fp4", "GroupQuant"},
    {"aiter::dynamic_per_tensor_quant", "GroupQuant"},
    {"aiter::dynamic_per_token_scaled_quant", "GroupQuant"},
    {"aiter::flatmm_a8w8_blockscale_asm", "GEMM"},
    {"aiter::fmha_v3_fwd", "SDPA_fwd"},
    {"aiter::fmha_v3_varlen_fwd", "InferenceAttention"},
    {"aiter::fmoe_fp8_blockscale_g1u1", "MoE_fused"},
    {"aiter::fmoe_g1u1", "MoE_fused"},
    {"aiter::fused_add_rmsnorm_pad_", "RMSNorm"},
    {"aiter::fused_allreduce_rmsnorm", "CustomCollective"},
    {"aiter::fused_allreduce_rmsnorm_", "CustomCollective"},
    {"aiter::fused_dynamic_mx_quant_moe_sort_hip", "GroupQuant"},
    {"aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", "MoE_aux"},
    {"aiter::fused_qk_rope_cat_and_cache_mla", "RoPE_fwd"},
    {"aiter::fused_qk_rope_concat_and_cache_mla", "RoPE_fwd"},
    {"aiter::gelu_and_mul", "elementwise"},
    {"aiter::gelu_tanh_and_mul", "elementwise"},
    {"aiter::gemm_a16w16", "GEMM"},
    {"aiter::gemm_a16w16_atomic_", "GEMM"},
    {"aiter::gemm_a4w4", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_ck", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_cktile", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_ck", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_cktile", "GEMM"},
    {"aiter::gemm_a8w8_bpreshuffle", "GEMM"},
    {"aiter::gemm_a8w8_bpreshuffle_ck", "GEMM"},
    {"aiter::gemm_a8w8_ck", "GEMM"},
    {"aiter::gemm_afp4wfp4_", "GEMM"},
    {"aiter::get_mla_metadata_v1", "InferenceAttention"},
    {"aiter::gfx950_a8w8_blockscale_asm", "GEMM"},
    {"aiter::grouped_topk", "MoE_aux"},
    {"aiter::indexer_score_topk", "InferenceAttention"},
    {"aiter::linear_attention_with_output_base", "InferenceAttention"},
    {"aiter::mha_batch_prefill", "InferenceAttention"},
    {"aiter::mha_bwd", "SDPA_bwd"},
    {"aiter::mha_fwd", "SDPA_fwd"},
    {"aiter::mha_varlen_fwd", "InferenceAttention"},
    {"aiter::mhc_fused_post_pre_gemm_sqrsum", "mHC"},
    {"aiter::mhc_post", "mHC"},
    {"aiter::mhc_pre_big_fuse_rmsnorm", "mHC"},
    {"aiter::mhc_pre_gemm_sqrsum", "mHC"},
    {"aiter::mixed_sample_outer_exponential", "elementwise"},
    {"aiter::moe_align_block_size", "MoE_aux"},
    {"aiter::moe_cktile2stages_gemm1_ck", "MoE_unfused"},
    {"aiter::moe_cktile2stages_gemm2_ck", "MoE_unfused"},
    {"aiter::moe_fused_gate", "MoE_aux"},
    {"aiter::moe_sorting_fwd", "MoE_aux"},
    {"aiter::moe_sorting_opus_fwd", "MoE_aux"},
    {"aiter::moe_sum", "MoE_aux"},
    {"aiter::mxfp4_moe_sort_hip", "MoE_aux"},
    {"aiter::pa_decode_gluon", "InferenceAttention"},
    {"aiter::pa_sparse_prefill_opus_fwd", "InferenceAttention"},
    {"aiter::reduce_scatter", "CustomCollective"},
    {"aiter::rms_norm", "RMSNorm"},
    {"aiter::rmsnorm", "RMSNorm"},
    {"aiter::rmsnorm2d_fwd_ck", "RMSNorm"},
    {"aiter::rmsnorm2d_fwd_with_add_ck", "RMSNorm"},
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck", "RMSNorm"},
    {"aiter::rmsnorm_quant", "RMSNorm"},
    {"aiter::rope_cached_positions_2c_fwd_impl", "RoPE_fwd"},
    {"aiter::silu_and_mul", "elementwise"},
    {"aiter::topk_sigmoid", "MoE_aux"},
    {"aiter::topk_softmax", "MoE_aux"},
    {"aiter::topk_softmax_asm", "MoE_aux"},
    {"aiter::topk_softplus", "MoE_aux"},
    {"aiter::wrapper_fmha_v3_bwd", "SDPA_bwd"},
    {"aiter::wrapper_fmha_v3_fwd", "SDPA_fwd"},
    {"aten::_efficient_attention_backward", "SDPA_bwd"},
    {"aten::_efficient_attention_forward", "SDPA_fwd"},
    {"aten::_fused_rms_norm", "NORM_fwd"},
    {"aten::_fused_rms_norm_backward", "NORM_bwd"},
    {"aten::_scaled_dot_product_cudnn_attention", "SDPA_fwd"},
    {"aten::_scaled_dot_product_cudnn_attention_backward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_efficient_attention", "SDPA_fwd"},
    {"aten::_scaled_dot_product_efficient_attention_backward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_flash_attention", "SDPA_fwd"},
    {"aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd"},
    {"aten::_scaled_mm", "GEMM"},
    {"aten::add", "elementwise"},
    {"aten::add_", "elementwise"},
    {"aten::addmm", "GEMM"},
    {"aten::amax", "reduce"},
    {"aten::amin", "reduce"},
    {"aten::baddbmm", "GEMM"},
    {"aten::batch_norm", "NORM_fwd"},
    {"aten::batch_norm_backward", "NORM_bwd"},
    {"aten::bmm", "GEMM"},
    {"aten::clamp_max", "elementwise"},
    {"aten::clamp_max_", "elementwise"},
    {"aten::clamp_min", "elementwise"},
    {"aten::clamp_min_", "elementwise"},
    {"aten::convolution", "CONV_fwd"},
    {"aten::convolution_backward", "CONV_bwd"},
    {"aten::copy", "elementwise"},
    {"aten::copy_", "elementwise"},
    {"aten::cudnn_batch_norm", "NORM_fwd"},
    {"aten::cudnn_batch_norm_backward", "NORM_bwd"},
    {"aten::cudnn_convolution", "CONV_fwd"},
    {"aten::cudnn_group_norm", "NORM_fwd"},
    {"aten::cudnn_group_norm_backward", "NORM_bwd"},
    {"aten::cudnn_instance_norm", "NORM_fwd"},
    {"aten::cudnn_instance_norm_backward", "NORM_bwd"},
    {"aten::cudnn_layer_norm", "NORM_fwd"},
    {"aten::cudnn_layer_norm_backward", "NORM_bwd"},
    {"aten::cudnn_rms_norm_backward", "NORM_bwd"},
    {"aten::cumprod", "reduce"},
    {"aten::cumsum", "reduce"},
    {"aten::div", "elementwise"},
    {"aten::div_", "elementwise"},
    {"aten::group_norm", "NORM_fwd"},
    {"aten::group_norm_backward", "NORM_bwd"},
    {"aten::instance_norm", "NORM_fwd"},
    {"aten::instance_norm_backward", "NORM_bwd"},
    {"aten::layer_norm", "NORM_fwd"},
    {"aten::layer_norm_backward", "NORM_bwd"},
    {"aten::linalg_norm", "reduce"},
    {"aten::logsumexp", "reduce"},
    {"aten::max", "reduce"},
    {"aten::mean", "reduce"},
    {"aten::min", "reduce"},
    {"aten::miopen_batch_norm", "NORM_fwd"},
    {"aten::miopen_batch_norm_backward", "NORM_bwd"},
    {"aten::miopen_convolution", "CONV_fwd"},
    {"aten::miopen_group_norm", "NORM_fwd"},
    {"aten::miopen_group_norm_backward", "NORM_bwd"},
    {"aten::miopen_instance_norm", "NORM_fwd"},
    {"aten::miopen_instance_norm_backward", "NORM_bwd"},
    {"aten::miopen_layer_norm", "NORM_fwd"},
    {"aten::miopen_layer_norm_backward", "NORM_bwd"},
    {"aten::miopen_rms_norm_backward", "NORM_bwd"},
    {"aten::mm", "GEMM"},
    {"aten::mul", "elementwise"},
    {"aten::mul_", "elementwise"},
    {"aten::native_batch_norm", "NORM_fwd"},
    {"aten::native_batch_norm_backward", "NORM_bwd"},
    {"aten::native_group_norm", "NORM_fwd"},
    {"aten::native_group_norm_backward", "NORM_bwd"},
    {"aten::native_instance_norm", "NORM_fwd"},
    {"aten::native_instance_norm_backward", "NORM_bwd"},
    {"aten::native_layer_norm", "NORM_fwd"},
    {"aten::native_layer_norm_backward", "NORM_bwd"},
    {"aten::native_rms_norm_backward", "NORM_bwd"},
    {"aten::neg", "elementwise"},
    {"aten::norm", "reduce"},
    {"aten::pow", "elementwise"},
    {"aten::replication_pad1d", "elementwise"},
    {"aten::replication_pad2d", "elementwise"},
    {"aten::replication_pad3d", "elementwise"},
    {"aten::rms_norm_backward", "NORM_bwd"},
    {"aten::rsqrt", "elementwise"},
    {"aten::sigmoid", "elementwise"},
    {"aten::sigmoid_backward", "elementwise"},
    {"aten::silu", "elementwise"},
    {"aten::std", "reduce"},
    {"aten::sum", "reduce"},
    {"aten::threshold_backward", "elementwise"},
    {"aten::upsample_nearest1d", "elementwise"},
    {"aten::upsample_nearest2d", "elementwise"},
    {"aten::upsample_nearest3d", "elementwise"},
    {"aten::var", "reduce"},
    {"bitsandbytes::int8_linear_matmul", "GEMM"},
    {"flash_attn::_flash_attn_backward", "SDPA_bwd"},
    {"flash_attn::_flash_attn_forward", "SDPA_fwd"},
    {"flash_attn::_flash_attn_varlen_backward", "SDPA_bwd"},
    {"flash_attn::_flash_attn_varlen_forward", "SDPA_fwd"},
    {"flash_attn_3::fwd", "SDPA_fwd"},
    {"primus::fused_ln_modulate", "NORM_fwd"},
    {"primus::fused_ln_modulate_backward", "NORM_bwd"},
    {"primus::quantize_mxfp4_dual", "elementwise"},
    {"primus_turbo::grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo::grouped_gemm_impl", "GroupedGEMM_fwd"},
    {"primus_turbo::grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"primus_turbo::grouped_gemm_variable_k_impl", "GroupedGEMM_fwd"},
    {"primus_turbo::hipblaslt_gemm_fp4", "GEMM"},
    {"primus_turbo::hipblaslt_gemm_fp8", "GEMM"},
    {"primus_turbo::quantize_fp8_tensorwise", "elementwise"},
    {"primus_turbo::quantize_mxfp4_dual", "elementwise"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::hipblaslt_gemm_fp4", "GEMM"},
    {"primus_turbo_cpp_extension::hipblaslt_gemm_fp8", "GEMM"},
    {"primus_turbo_cpp_extension::quantize_fp8_tensorwise", "elementwise"},
    {"primus_turbo_cpp_extension::quantize_mxfp4_dual", "elementwise"},
    {"sgl_kernel::all_reduce_reg", "CustomCollective"},
    {"sgl_kernel::qr_all_reduce", "CustomCollective"},
    {"sgl_kernel::rotary_embedding", "RoPE_fwd"},
    {"sgl_kernel::silu_and_mul", "elementwise"},
    {"sglang::reg_all_gather_into_tensor", "CustomCollective"},
    {"sglang::store_cache", "InferenceAttention"},
    {"sglang_profiler::attention_paged_attention_ragged", "InferenceAttention"},
    {"sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_"
     "batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant",
     "GEMM"},
    {"sglang_profiler::fp8_utils_gemm_a8w8_blockscale", "GEMM"},
    {"sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts", "MoE_aux"},
    {"sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel", "MoE_unfused"},
    {"sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant", "GroupQuant"},
    {"sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant", "RMSNorm"},
    {"sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale", "GEMM"},
    {"sglang_profiler::gemm_kernels_flydsl_hgemm", "GEMM"},
    {"sglang_profiler::quant_dynamic_mxfp4_quant", "GroupQuant"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "InferenceAttention"},
    {"tex_ts::te_gemm_ts", "GEMM"},
    {"trtllm::cublas_scaled_mm", "GEMM"},
    {"vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm", "GEMM"},
    {"vllm::gdn_attention_core", "InferenceAttention"},
    {"vllm::gemm_with_dynamic_quant", "GEMM"},
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant", "RMSNorm"},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", "RMSNorm"},
    {"vllm::rocm_aiter_triton_add_rmsnorm_pad", "RMSNorm"},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale", "GEMM"},
    {"vllm::rocm_unquantized_gemm", "GEMM"},
    {"vllm::triton_per_token_group_quant_fp8", "GroupQuant"},
    {"vllm::unified_attention_with_output", "InferenceAttention"},
};

constexpr bool SortedByName() {
  for (size_t i = 1; i < std::size(kOpCategories); ++i)
    if (!(kOpCategories[i - 1].op < kOpCategories[i].op)) return false;
  return true;
}
static_assert(SortedByName(), "kOpCategories must stay sorted by op name");

}  // namespace

std::string_view TraceLensOpCategory(std::string_view op_name, std::string_view first_kernel) {
  auto it = std::lower_bound(std::begin(kOpCategories), std::end(kOpCategories), op_name,
                             [](const NamedCategory& e, std::string_view n) { return e.op < n; });
  if (it != std::end(kOpCategories) && it->op == op_name) return it->category;
  // OP_CATEGORY_PATTERNS: name prefixes.
  if (op_name.starts_with("triton")) return "triton";
  if (op_name.starts_with("record_param_comms")) return "record_param_comms";
  // The kernel-name fallback: an op the table does not name is filed by its first kernel
  // when that is one of ATen's own element-wise, reduce or multi_tensor_apply kernels.
  if (first_kernel.starts_with("void at::native")) {
    if (first_kernel.find("elementwise") != std::string_view::npos) return "elementwise";
    if (first_kernel.find("reduce") != std::string_view::npos) return "reduce";
    if (first_kernel.find("multi_tensor_apply") != std::string_view::npos)
      return "multi_tensor_apply";
  }
  return "other";
}

std::vector<KernelLauncher> FindKernelLaunchers(const TraceData& trace,
                                                const std::vector<uint32_t>& events,
                                                const std::vector<uint8_t>& recompute_cpu) {
  // A trace without ops (recorded GPU-only) has no launcher to file kernels under; TraceLens
  // writes no launcher tables for it either.
  if (std::none_of(trace.cpu.begin(), trace.cpu.end(),
                   [](const CpuEvent& ev) { return ev.kind == CpuKind::kOp; }))
    return {};
  // Each activity's launcher: the innermost op around its runtime call, else the runtime call
  // itself. An op nested in one of its own name (aten::arange -> aten::arange(out=)) is the
  // launcher, not the outer call, which launches nothing itself. Collective kernels are left
  // out, as TraceLens's kernel launchers leave them out.
  std::vector<int32_t> first_kernel(trace.cpu.size(), -1);
  std::vector<GroupedInterval> launched;  // busy time per launcher, as TraceLens takes it
  launched.reserve(events.size());
  // Whether a kernel name is a collective's, decided once per name.
  NameTest collective(trace, IsCommunicationKernelName);
  for (uint32_t i : events) {
    const GpuEvent& g = trace.gpu[i];
    const int32_t launcher = g.op >= 0 ? g.op : g.launcher;
    if (launcher < 0 || collective(g.name)) continue;
    launched.push_back({static_cast<uint32_t>(launcher), {g.ts_ns, g.end_ns()}});
    int32_t& first = first_kernel[launcher];
    if (first < 0 || g.ts_ns < trace.gpu[first].ts_ns) first = static_cast<int32_t>(i);
  }
  const std::vector<GroupLength> busy_by_launcher = UnionLengthOfEachGroup(launched);
  launched = {};
  std::vector<KernelLauncher> out;
  out.reserve(busy_by_launcher.size());
  std::unordered_map<uint64_t, std::string_view> by_name_and_kernel;
  // Every launcher has items in `launched`: one row each, in trace order.
  for (const GroupLength& busy : busy_by_launcher) {
    const size_t i = busy.group;
    const CpuEvent& ev = trace.cpu[i];
    const uint32_t kernel_name = first_kernel[i] >= 0 ? trace.gpu[first_kernel[i]].name : 0;
    auto [it, fresh] = by_name_and_kernel.try_emplace((uint64_t{ev.name} << 32) | kernel_name, "");
    // An XLA profile's ops are its HLO instructions: TraceLens's JAX categories.
    if (fresh) {
      it->second = trace.xla_pid >= 0
                       ? TraceLensJaxCategory(trace.Name(kernel_name), trace.Name(ev.name))
                       : TraceLensOpCategory(trace.Name(ev.name), trace.Name(kernel_name));
    }
    out.push_back({static_cast<int32_t>(i), !recompute_cpu.empty() && recompute_cpu[i] != 0,
                   it->second, busy.union_ns});
  }
  return out;
}

std::vector<OpCategoryStats> SummarizeOpCategories(const std::vector<KernelLauncher>& launchers) {
  std::map<std::pair<std::string_view, bool>, OpCategoryStats> rows;
  for (const KernelLauncher& l : launchers) {
    OpCategoryStats& row = rows[{l.category, l.recompute}];
    row.category = std::string(l.category);
    row.recompute = l.recompute;
    row.count++;
    row.direct_kernel_ns += l.direct_ns;
  }
  std::vector<OpCategoryStats> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.direct_kernel_ns > b.direct_kernel_ns;
  });
  return out;
}

std::vector<LauncherOpStats> SummarizeLauncherOps(const TraceData& trace,
                                                  const std::vector<KernelLauncher>& launchers,
                                                  const OpKernelTimes& times) {
  std::map<std::pair<uint32_t, bool>, LauncherOpStats> rows;
  std::map<std::pair<uint32_t, bool>, std::set<std::string_view>> categories;
  for (const KernelLauncher& l : launchers) {
    const CpuEvent& ev = trace.cpu[l.cpu];
    LauncherOpStats& row = rows[{ev.name, l.recompute}];
    if (row.count == 0) {
      row.name = std::string(trace.Name(ev.name));
      row.recompute = l.recompute;
    }
    row.count++;
    row.direct_kernel_ns += l.direct_ns;
    // A runtime call standing for its own kernels has no subtree beyond them.
    row.subtree_kernel_ns += ev.kind == CpuKind::kOp ? times.subtree_ns[l.cpu] : l.direct_ns;
    categories[{ev.name, l.recompute}].insert(l.category);
  }
  std::vector<LauncherOpStats> out;
  for (auto& [key, row] : rows) {
    for (std::string_view c : categories[key]) row.categories.emplace_back(c);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.direct_kernel_ns > b.direct_kernel_ns;
  });
  return out;
}

std::vector<LauncherArgsStats> SummarizeLauncherArgs(const TraceData& trace,
                                                     const std::vector<KernelLauncher>& launchers,
                                                     const OpKernelTimes& times) {
  struct Acc {
    LauncherArgsStats stats;
    std::vector<double> direct, subtree;
  };
  // Records group by their Python text, as TraceLens's do: the same record may be written
  // with different spacing. An absent record (a runtime call launching kernels itself, a
  // trace recorded without record_shapes) is an empty cell, as in TraceLens's reports.
  ArgumentReprs reprs(trace);
  using GroupKey = std::tuple<uint32_t, std::string_view, uint32_t, uint32_t, uint32_t, uint32_t,
                              uint32_t, bool>;
  std::map<GroupKey, Acc> groups;
  for (const KernelLauncher& l : launchers) {
    const CpuEvent& ev = trace.cpu[l.cpu];
    const CpuArgs& args = trace.Args(ev);
    const uint32_t dims = reprs.Of(args.input_dims), types = reprs.Of(args.input_types),
                   strides = reprs.Of(args.input_strides),
                   concrete = reprs.Of(args.concrete_inputs);
    Acc& acc =
        groups[{ev.name, l.category, ev.thread, dims, types, strides, concrete, l.recompute}];
    if (acc.direct.empty()) {
      LauncherArgsStats& s = acc.stats;
      s.name = std::string(trace.Name(ev.name));
      s.category = std::string(l.category);
      s.recompute = l.recompute;
      s.thread = ev.thread;
      s.input_dims = reprs.Text(dims);
      s.input_types = reprs.Text(types);
      s.input_strides = reprs.Text(strides);
      s.concrete_inputs = reprs.Text(concrete);
    }
    acc.direct.push_back(static_cast<double>(l.direct_ns) / 1e3);
    acc.subtree.push_back(
        static_cast<double>(ev.kind == CpuKind::kOp ? times.subtree_ns[l.cpu] : l.direct_ns) / 1e3);
  }
  std::vector<std::pair<const GroupKey*, LauncherArgsStats>> rows;
  for (auto& [key, acc] : groups) {
    acc.stats.direct_us = SummarizeCalls(std::move(acc.direct));
    acc.stats.subtree_us = SummarizeCalls(std::move(acc.subtree));
    rows.emplace_back(&key, std::move(acc.stats));
  }
  // Largest direct time first; equal times in the order of the key's texts.
  auto texts = [&](const GroupKey& k) {
    return std::make_tuple(std::get<0>(k), std::get<1>(k), std::get<2>(k),
                           reprs.Text(std::get<3>(k)), reprs.Text(std::get<4>(k)),
                           reprs.Text(std::get<5>(k)), reprs.Text(std::get<6>(k)), std::get<7>(k));
  };
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    if (a.second.direct_us.sum != b.second.direct_us.sum)
      return a.second.direct_us.sum > b.second.direct_us.sum;
    return texts(*a.first) < texts(*b.first);
  });
  std::vector<LauncherArgsStats> out;
  out.reserve(rows.size());
  for (auto& row : rows) out.push_back(std::move(row.second));
  return out;
}

std::string_view TraceLensJaxCategory(std::string_view kernel, std::string_view hlo_op) {
  // In TraceLens's order (@171dd747: util.py JaxOpKeys, Trace2Tree/trace_to_tree.py). A kernel
  // named as flash attention keeps that category whatever its XLA op (TE's fused attention
  // runs CK's FMHA kernels).
  struct Category {
    std::string_view name;
    std::vector<std::string_view> patterns;
  };
  static const std::vector<Category> kCategories = {
      {"GEMM", {"Cijk", "gemm", "nvjet", "cublasLt"}},
      {"FA BWD", {"FmhaBwd", "flash_bprop", "ck_fused_attn::dk_dv_reduce_thd", "fmha_bwd"}},
      {"FA FWD", {"FmhaFwd", "flash_fprop", "fmha_fwd"}},
      {"FA V3", {"kernel_func"}},
      {"Conv", {"conv_", "conv.", "conv-"}},
      {"TE", {"transformer_engine", "te_fused_attn"}},
      {"Communication rccl/nccl", {"rccl", "nccl"}},
  };
  auto first = [&](std::string_view text) -> std::string_view {
    for (const Category& c : kCategories) {
      for (std::string_view p : c.patterns)
        if (text.find(p) != std::string_view::npos) return c.name;
    }
    return {};
  };
  const std::string_view by_kernel = first(kernel);
  if (by_kernel == "FA BWD" || by_kernel == "FA FWD" || by_kernel == "FA V3") return by_kernel;
  if (std::string_view by_op = hlo_op.empty() ? std::string_view() : first(hlo_op); !by_op.empty())
    return by_op;
  if (!by_kernel.empty()) return by_kernel;
  return "Uncategorized Events/XLA";
}

}  // namespace sextant
