// What a training stack does when its configuration does not say: the one table of framework
// behaviour (attention kernels, overlap, optimizer sharding, dropout, FP8 recipe, batch
// semantics, how it counts model FLOPs). Each entry cites where the behaviour is documented.
// Readers of run descriptions (published runs, experiment files) start from these defaults and
// let every stated fact override them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "job/job.h"

namespace sextant {

// How a stack turns tokens/s into the "model TFLOP/s" it prints (model/flop_count.h).
enum class FlopConvention {
  kMegatronCore,   // num_floating_point_operations: causal attention, GQA/SwiGLU/MoE aware
  kNarayanan2021,  // Narayanan et al. 2021 eq. 3: includes the recompute forward, non-causal
  kNemo,           // NeMo's per-model formulas: non-causal attention
};

struct FrameworkDefaults {
  std::string_view name;     // the value of a `framework` column / adapter name
  std::string_view version;  // "" = any version; else the version text must contain it
  bool flash_attention;      // fused attention (no materialised scores) unless stated
  bool cudnn_attention;      // NVIDIA runs use TE/cuDNN fused kernels rather than FA2 (SDPA)
  double dropout;            // hidden and attention dropout of its recipes
  bool overlap_grad_reduce;  // DP gradient reduce overlapped with backward
  bool overlap_param_gather;
  bool distributed_optimizer;  // optimizer state sharded over DP (ZeRO-1)
  bool fsdp;                   // parameters, gradients and optimizer state sharded (ZeRO-3)
  bool fp16_main_grads;        // fp16 runs keep gradients in fp16 (no fp32 accumulation)
  // bf16 runs keep the data-parallel gradient buffer in bf16 and reduce it in bf16
  // (grad_reduce_in_fp32 = False): half the gradient memory and reduce-scatter bytes.
  bool bf16_main_grads;
  // It trains no multi-token-prediction module unless its configuration asks for one, even
  // for a model released with one (DeepSeek-V3): MaxText's base.yml mtp_num_layers is 0.
  bool mtp_off;
  bool fp8_current_scaling;        // default FP8 recipe: per-tensor current scaling, else delayed
  bool compiled;                   // torch.compile / XLA fuse the elementwise chains
  bool cross_entropy_loss_fusion;  // the loss through a fused cross-entropy kernel
  CrossEntropyImpl cross_entropy_impl;  // which one, when fused
  bool local_batch;     // batch sizes are per DP rank; PP micro-batches default to 1
  bool uneven_pp_ends;  // layers that do not divide go to the first/last stages' deficit
  bool full_recompute;  // its published runs recompute every layer unless stated
  bool deepep;          // MoE token dispatch through DeepEP-style kernels
  bool ep_overlap;      // with DeepEP, the EP all-to-all overlapped with compute
  // How MoE tokens are permuted when the configuration does not say.
  MoePermutation moe_permutation;
  // Model-library names (prefixes, comma-separated) whose model files in this stack turn the
  // fused permutation on themselves.
  std::string_view fused_permute_models;
  // How the local experts' GEMMs are launched when the configuration does not say.
  ExpertGemmLaunch expert_gemm_launch;
  // Expert layers split over the tensor-parallel group when no expert TP size is given
  // (Megatron: expert_tensor_parallel_size defaults to tensor_model_parallel_size).
  bool expert_tp_follows_tp;
  // A stated MoE capacity factor means its experts run on one-hot capacity slots (MaxText's
  // dense_matmul, the only path that reads capacity_factor); elsewhere it only drops tokens.
  bool capacity_dense_dispatch;
  // Its memory log is what the caching allocator reserved (max_memory_reserved), not what
  // tensors held (max_memory_allocated).
  bool memory_log_reserved;
  // FP8/MX/FP4 training through Transformer Engine modules that are told which micro-batch is
  // the first (is_first_microbatch): TE casts each weight once per step and keeps the
  // low-precision copy and its transpose for the remaining micro-batches.
  bool te_fp8_weight_cache;
  // Its FP8 recipes (delayed, per-tensor current scaling, MXFP8) keep the weights themselves in
  // FP8 (fp8_param_gather): no 16-bit weight copy beside TE's low-precision one, and FP8
  // parameter all-gathers.
  bool fp8_primary_weights;
  // The embedding and output rows are padded to a multiple of this x TP (Megatron's
  // make_vocab_size_divisible_by); 0: the vocabulary is used as it is.
  int64_t vocab_multiple;
  FlopConvention flops;
  std::string_view source;  // where these defaults are documented
};

// The entry for a framework name (case-insensitive, with the adapters' short names:
// "megatron" = Primus's Megatron module) and version text: the most specific entry whose
// version piece occurs in `version`. An unknown or empty name gets today's Megatron-Core
// defaults; `*known` (when given) says whether the name was recognised.
const FrameworkDefaults& DefaultsForFramework(std::string_view framework,
                                              std::string_view version = "", bool* known = nullptr);

// How `model` (a model-library name) permutes MoE tokens in this stack when its configuration
// does not say: the stack's default, or its model file's. `deepep`: dispatch through DeepEP,
// after which torchtitan permutes the received tokens with index_select as Megatron does.
MoePermutation MoePermutationFor(const FrameworkDefaults& stack, std::string_view model,
                                 bool deepep);

// Primus Turbo's sync-free MoE stages turn these on (primus/backends/megatron/patches/args/
// rocm_arg_validation.py, _get_sync_free_moe_options): stage 1 the fused router and fused
// permutation, stage 2 also Turbo's DeepEP and grouped GEMM, stage 3 also the fused
// activation with probabilities.
struct SyncFreeMoeOptions {
  bool fused_permutation = false;
  bool turbo_deepep = false;
  bool turbo_grouped_gemm = false;  // stages 2-3 require PrimusTurboGroupedLinear
};
SyncFreeMoeOptions SyncFreeMoeStage(int stage);

// Fraction of the EP all-to-all that DeepEP / Turbo kernels hide behind compute, by sync-free
// stage: 0.65 with DeepEP alone, 0.75 / 0.80 / 0.85 at stages 1 / 2 / 3, as each stage removes
// host synchronisations that stall the overlap (Primus's _get_deepep_overlap_efficiency,
// primus/core/projection/performance_projection/projection.py).
double DeepEpOverlapEfficiency(int sync_free_stage);

// A stack's published performance recipe for one model (a model-library name prefix) on one
// GPU at one GEMM precision and global batch (0: any): the settings it adds to the stack's
// defaults that change time or memory and that a run description rarely restates.
struct PerformanceRecipe {
  std::string_view framework;
  std::string_view version;  // the framework_version text must contain it
  std::string_view model;
  std::string_view gpu;  // the hardware library's name
  DType gemm;
  int64_t global_batch;
  // Megatron's moe_a2a_overlap: overlap_moe_expert_parallel_comm and delay_wgrad_compute on
  // (Megatron-Bridge scripts/performance/utils/overrides.py, _set_moe_a2a_overlap_overrides).
  bool moe_a2a_overlap;
  // Selective recompute of these Megatron modules (recompute_granularity "selective").
  std::vector<std::string_view> recompute_modules;
  std::string_view source;  // the preset's name
};
const std::vector<PerformanceRecipe>& PerformanceRecipes();
// The recipe above that a run matches, or nullptr.
const PerformanceRecipe* FindPerformanceRecipe(std::string_view framework, std::string_view version,
                                               std::string_view model, std::string_view gpu,
                                               DType gemm, int64_t global_batch);

// Every entry, for documentation and tests.
const std::vector<FrameworkDefaults>& AllFrameworkDefaults();

}  // namespace sextant
