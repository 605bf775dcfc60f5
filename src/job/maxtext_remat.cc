#include "job/maxtext_remat.h"

namespace sextant {

std::optional<RecomputeSpec> MaxTextRematPolicy(std::string_view policy) {
  RecomputeSpec r;
  if (policy == "none") return r;
  if (policy == "full") {
    r.granularity = RecomputeGranularity::kFull;
    r.num_layers = 1;
    return r;
  }
  // Every other named policy saves some projection outputs (checkpoint_name tags) and re-runs
  // the rest: norms, activations and, unless the context is saved, attention.
  r.granularity = RecomputeGranularity::kSelective;
  r.matmul_outputs_only = true;
  if (policy == "minimal" || policy == "minimal_with_context" || policy == "minimal_flash" ||
      policy == "minimal_offloaded") {
    // query/key/value/out_proj, mlpwi_0/1 and mlpwo; minimal_flash and minimal_with_context
    // also the attention context. minimal_offloaded moves them to host memory.
    r.save_attention_context = policy == "minimal_with_context" || policy == "minimal_flash";
    return r;
  }
  if (policy == "save_dot_with_context_except_mlp" || policy == "save_dot_except_mlp" ||
      policy == "save_dot_except_mlpwi") {
    // The attention projections (and the context) saved, the MLP re-run (save_dot_except_mlpwi
    // also keeps mlpwo, which no backward reads: the same tensors).
    r.save_attention_context = policy == "save_dot_with_context_except_mlp";
    r.save_mlp_outputs = false;
    return r;
  }
  if (policy == kMaxTextSelectivePolicy || policy == "qkv_proj_offloaded") {
    r.save_output_projection = false;
    r.save_mlp_outputs = false;
    return r;
  }
  if (policy == "save_out_proj") {
    r.save_qkv_projections = false;
    r.save_mlp_outputs = false;
    return r;
  }
  return std::nullopt;
}

std::string_view MaxTextRematPolicyNames() {
  return "none, minimal, minimal_with_context, minimal_flash, save_dot_with_context_except_mlp, "
         "save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj, qkv_proj_offloaded, "
         "save_out_proj, minimal_offloaded, custom, full";
}

}  // namespace sextant
