// The job description: model x parallel plan x training settings x cluster. Every
// projection (memory, time, FLOPs) is computed from one Job, so they cannot disagree.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_node.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "parallel/parallel_plan.h"
#include "parallel/schedule_kind.h"
#include "util/dtype.h"

namespace sextant {

enum class RecomputeGranularity { kNone, kSelective, kFull };
enum class RecomputeMethod { kUniform, kBlock };

struct RecomputeSpec {
  RecomputeGranularity granularity = RecomputeGranularity::kNone;
  RecomputeMethod method = RecomputeMethod::kUniform;
  int64_t num_layers = 0;            // uniform: layers per recompute group; block: layers per chunk
  std::vector<int64_t> layer_ids;    // recompute_layer_ids (global layer indices); overrides method
  std::vector<std::string> modules;  // selective: recompute_modules ("core_attn", "mlp", ...)
  // TorchTitan's per-op selective policy (selective_ac_option = "op"): every other matmul
  // output is saved, the other matmuls and all memory-bound ops are recomputed.
  bool per_op_policy = false;
  // MaxText's named-projection policies (remat_policy "minimal", "minimal_flash",
  // "save_dot_*"): the projection matmul outputs are saved (and the flash-attention context
  // where named); norms, activations and attention scores are recomputed.
  bool matmul_outputs_only = false;
  bool save_attention_context = false;
  // False for the "..._except_mlp" policies: the MLP / expert outputs are not saved, so the
  // whole MLP block runs again in backward.
  bool save_mlp_outputs = true;
  // False where a policy saves neither Q, K, V (save_out_proj) or not the output projection
  // (save_qkv_proj): those re-run in backward.
  bool save_qkv_projections = true;
  bool save_output_projection = true;
};

enum class OptimizerKind { kAdam, kSgd, kMuon };

// The fused cross-entropy kernel (TrainingSettings::cross_entropy_impl).
enum class CrossEntropyImpl { kNative, kTransformerEngine };

// How the routed experts' matmuls are laid out.
enum class MoeExpertCompute {
  // Tokens sorted by expert, one grouped GEMM over tokens x top-k copies (Megatron, torchtitan,
  // MaxText sparse_matmul).
  kGroupedTokens,
  // MaxText dense_matmul with capacity_factor > 0 (layers/moe.py): one-hot dispatch and
  // combine einsums over [sequence, expert, capacity] masks, experts run on every capacity slot.
  kCapacitySlots,
  // MaxText dense_matmul with capacity_factor <= 0: every token through every expert, outputs
  // summed with the router weights ("BSM,EMH -> BSEH").
  kEveryExpert,
};

// Storage dtypes of the training state. Defaults are Megatron's mixed-precision recipe:
// BF16 weights, FP32 main grads, FP32 master weights and Adam moments.
struct PrecisionRecipe {
  DType params = DType::kBF16;
  DType main_grads = DType::kFP32;
  DType main_params = DType::kFP32;
  DType exp_avg = DType::kFP32;
  DType exp_avg_sq = DType::kFP32;
  DType gemm = DType::kBF16;  // GEMM input dtype: fp8 / mxfp8 when fp8 training is on
  // The routed experts' GEMMs where they differ from `gemm` (torchtitan converts grouped
  // expert matmuls and linear layers with separate converters: quantize.grouped_mm.*).
  std::optional<DType> expert_gemm;
  DType ExpertGemm() const { return expert_gemm.value_or(gemm); }
  bool fp8_param_gather = false;  // FP8 weights kept instead of BF16 copies
  // Transformer Engine keeps each weight's transposed low-precision copy from forward to
  // backward (keep_fp8_weight_transpose_cache); off, backward transposes it again.
  bool fp8_weight_transpose_cache = true;
  // Each tensor's FP8 scale comes from that tensor (torchao's dynamic tensorwise recipe, TE's
  // current scaling): an amax pass reads the input before its cast. TE's delayed scaling takes
  // the scale from the amax history inside the cast kernel instead.
  bool fp8_current_scaling = false;
  // Scales per 1x128 / 128x128 block (Megatron --fp8-recipe blockwise, DeepSeek-V3's scheme),
  // computed from the tensor as current scaling does.
  bool fp8_blockwise = false;
  // TE's precision-aware optimizer reads low-precision gradients directly; without it,
  // gradients kept below the master dtype (Megatron fp16) are copied to an FP32 buffer for the
  // step (Megatron Float16OptimizerWithFloat16Params).
  bool precision_aware_optimizer = false;
  // The 16-bit type of activations, attention and the layers FP8 recipes keep in high
  // precision (output head, router): fp16 in Megatron's --fp16 runs, else bf16.
  DType HalfPrecision() const { return params == DType::kFP16 ? DType::kFP16 : DType::kBF16; }
  // The type activations are stored and exchanged in: the 16-bit type under mixed precision,
  // fp32 when the job trains in fp32 (Megatron without --bf16 / --fp16).
  DType ActivationDType() const {
    if (activations) return *activations;
    return params == DType::kFP32 ? DType::kFP32 : HalfPrecision();
  }
  // Where a stack computes in a type of its own, apart from the weights' (MaxText's `dtype`,
  // bf16 by default, over fp32 `weight_dtype`).
  std::optional<DType> activations;
  // What the GEMMs of the transformer layers run in, for reports: "bf16", "fp8 (delayed
  // scaling)", "fp8 (current scaling)", "mxfp8", "fp4".
  std::string GemmDescription() const;
  // Sets the GEMM type and scaling of one of Megatron-Core's --fp8-recipe names (delayed,
  // tensorwise, blockwise, mxfp8; megatron/training/arguments.py); false, changing nothing, for
  // any other name.
  bool UseFp8Recipe(std::string_view recipe);
};

// How an MoE layer permutes tokens to their experts and back.
enum class MoePermutation {
  // Transformer Engine's fused moe_permute / moe_unpermute kernels (Megatron
  // --moe-permute-fusion): the top-k copies are reduced without atomics.
  kFused,
  // Megatron-Core without fusion (moe_utils.permute / unpermute): index_select, whose gradient
  // is index_add_, and scatter_add_ back; the router probabilities are applied inside the
  // experts' activation.
  kIndexSelect,
  // torchtitan's MoE: torch.gather, whose gradient is scatter_add_, the copies multiplied by
  // their probabilities, and scatter_add_ back.
  kGatherScatter,
};

// How the local experts' GEMMs of an MoE layer are launched.
enum class ExpertGemmLaunch {
  // One grouped-GEMM kernel whose tiles cover every expert (torch._grouped_mm in torchtitan,
  // Primus Turbo's grouped GEMM, MaxText's megablox / ragged_dot, TE's fused grouped path).
  kGroupedKernel,
  // One cuBLAS/hipBLASLt GEMM per expert, round-robin over 4 streams that join at the end:
  // Transformer Engine's GroupedLinear (multi_stream_cublas_gemm in common/gemm/
  // cublaslt_gemm.cu, 4 compute streams in common/util/multi_stream.cpp), which Megatron's
  // TEGroupedMLP runs.
  kStreamLoop,
  // One GEMM per expert, one after the other: Megatron's SequentialMLP (moe_grouped_gemm off).
  kSequentialLoop,
  // Megatron's moe_use_legacy_grouped_gemm (GroupedMLP on the grouped_gemm package): one GEMM
  // per expert over 4 streams as well (the package's cuBLAS path, NUM_STREAM 4), but its
  // weights are plain parameters, so their gradients always reach main_grad through a separate
  // add, whatever gradient_accumulation_fusion says.
  kGroupedGemmPackage,
};

// The streams a kStreamLoop spreads the experts' GEMMs over (TE's num_compute_streams).
inline constexpr int kExpertGemmStreams = 4;

// Low-rank adaptation (Hu et al. 2021, arXiv 2106.09685) as Primus's Megatron SFT trainer
// runs it (primus/backends/megatron/peft/lora.py, a port of Megatron-Bridge's LoRA): every base
// parameter is frozen (PEFT.freeze_model), and each targeted linear layer W (in -> out) gets a
// trainable adapter B·A with A: in -> rank and B: rank -> out, added to the layer's output as
// alpha/rank · B(A(dropout(x))). A grouped expert linear gets one adapter that all its experts
// share (ParallelLinearAdapter with is_expert). Defaults: the LoRA dataclass's.
struct LoraSpec {
  bool enabled = false;
  int64_t rank = 32;  // `dim`
  double alpha = 32;
  double dropout = 0.0;
  bool dropout_before = true;  // dropout_position "pre": on the adapter's input
  // Megatron module names (linear_qkv, linear_proj, linear_fc1, linear_fc2, linear_q_proj,
  // linear_kv_down_proj, ...). A name matches the module of that name in every layer.
  std::vector<std::string> target_modules = {"linear_qkv", "linear_proj", "linear_fc1",
                                             "linear_fc2"};
  bool Targets(std::string_view module) const;
};

struct TrainingSettings {
  int64_t seq_length = 4096;
  int64_t micro_batch_size = 1;
  int64_t global_batch_size = 0;
  // The configured global batch when it did not split at the requested node count and was
  // rounded to whole micro-batches (global_batch_size holds the rounded one); 0 otherwise.
  int64_t unrounded_global_batch_size = 0;
  // Sequences per data-parallel rank when the configuration fixes the batch per rank, not
  // globally (TorchTitan's training.local_batch_size, MaxText's per_device_batch_size, or no
  // global batch at all): more nodes then grow the global batch with DP, as those launchers
  // do. 0: the global batch is fixed (Megatron's global_batch_size).
  int64_t sequences_per_data_rank = 0;
  RecomputeSpec recompute;
  PrecisionRecipe precision;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  bool flash_attention = true;  // fused attention: no materialised s x s scores
  // Norms, rotary embeddings and activation functions run as fused kernels (Transformer
  // Engine, Apex, torch.compile). False for PyTorch eager (torchtitan without compile), where
  // each is a chain of single-op kernels with fp32 up-casts (cost/memory_bound_model.h).
  bool fused_elementwise = true;
  // The layer is a compiled graph (torch.compile's AOTAutograd min-cut partitioner, XLA):
  // outputs of pointwise ops (norm outputs, the SwiGLU product) are recomputed in backward from
  // their saved inputs instead of being stored.
  bool compiled_graph = false;
  // The loss runs inside the compiled graph too (XLA's whole step): the bf16 logits are kept
  // and the softmax recomputed from them in backward. torch.compile of the model alone
  // (torchtitan's compile.components without "loss") leaves the loss eager.
  bool compiled_loss = false;
  // JAX preallocates this fraction of HBM and XLA plans the step inside it
  // (XLA_PYTHON_CLIENT_MEM_FRACTION, as the experiment's env or the environment sets it);
  // 0 = not stated.
  double xla_memory_fraction = 0;
  bool cross_entropy_loss_fusion = false;
  // Which fused cross-entropy runs (Megatron --cross-entropy-fusion-impl, default "native").
  // Native upcasts the logits to fp32 and keeps the fp32 softmax for backward
  // (megatron/core/fusions/fused_cross_entropy.py); Transformer Engine's Triton kernel keeps the
  // bf16 logits and overwrites them with their gradient in backward
  // (transformer_engine/pytorch/triton/cross_entropy.py, cross_entropy_backward returns _input).
  CrossEntropyImpl cross_entropy_impl = CrossEntropyImpl::kNative;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool deepep = false;  // DeepEP / Turbo dispatch+combine kernels (one network copy per node)
  // The EP all-to-all partly hidden behind compute: Primus Turbo's DeepEP as Primus's own
  // projection models it, Megatron's overlap_moe_expert_parallel_comm (1F1B A2A overlap).
  bool ep_overlap = false;
  // Megatron's combined 1F1B schedule (overlap_moe_expert_parallel_comm): the forward of one
  // micro-batch and the backward of another run layer by layer together, each layer's
  // dispatch/combine all-to-all on a communication stream beside the other micro-batch's
  // computation (megatron/core/models/common/model_chunk_schedule_plan.py,
  // TransformerLayerSchedulePlan.run). Hides what that computation covers, no more.
  bool ep_a2a_combined_1f1b = false;
  // Megatron's delay_wgrad_compute: the experts' weight-gradient GEMMs leave the backward
  // chain and run beside the dispatch all-to-all of the backward (mlp.backward_dw).
  bool delay_wgrad_compute = false;
  // Primus Turbo's sync-free MoE stage (turbo_sync_free_moe_stage, 0 = off, 1-3): each stage
  // removes more host synchronisations from the MoE layer (research/primus-projection.md §1.2).
  int sync_free_moe_stage = 0;
  MoeExpertCompute moe_expert_compute = MoeExpertCompute::kGroupedTokens;
  // How MoE tokens are permuted to their experts and back (cost/memory_bound_model.h).
  MoePermutation moe_permutation = MoePermutation::kFused;
  ExpertGemmLaunch expert_gemm_launch = ExpertGemmLaunch::kGroupedKernel;
  // Megatron's gradient_accumulation_fusion: the weight-gradient GEMM accumulates straight
  // into the fp32 main_grad buffer. Off, it writes a separate gradient that the backward hook
  // adds to main_grad (param.main_grad.add_(param.grad), distributed_data_parallel.py): one
  // more elementwise pass over every weight each micro-batch.
  bool gradient_accumulation_fusion = true;
  // Dropout probabilities (Megatron defaults are 0.1; most LLM recipes set 0). A non-zero
  // probability stores a 1-byte mask per element for the backward pass.
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  // The schedule the run uses, already fitted to its VPP (ForVirtualStages). Comparing every
  // schedule (`all`) is a request to the projection, not a property of the run.
  ScheduleKind pipeline_schedule = ScheduleKind::k1F1B;
  LoraSpec lora;

  // Number of micro-batches one pipeline processes per iteration: GBS / (MBS x DP).
  int64_t NumMicroBatches(int dp) const;
};

struct Job {
  std::string name;       // where it came from (experiment file or "default example")
  std::string framework;  // "megatron", "megatron_bridge", "torchtitan", "maxtext"
  // The Primus module projected ("pre_trainer", "post_trainer" for SFT); "" for a framework's
  // own file (TorchTitan TOML).
  std::string module;
  ModelSpec model;
  ParallelPlan parallel;
  TrainingSettings training;
  ClusterSpec cluster;
  std::vector<std::string> notes;  // assumptions made while building the job
  // The node count is the fewest whose GPUs the parallel grids divide: neither asked for
  // (--target-nodes, $NNODES) nor fixed by the configuration's data-parallel size.
  bool fewest_nodes_chosen = false;
  std::vector<std::string> warnings;  // where the job differs from what the user asked for
  // The experiment as read, as a Primus experiment tree: modules.<module> with its framework,
  // defaults file and model file named, and as overrides its merged configuration (defaults <
  // model file < overrides < environment < command line): what Primus's --export_config
  // writes, and an experiment file that reads back to this job. Null for jobs built in code.
  std::shared_ptr<const ConfigNode> configuration;
  // Every configuration file the job was read from: the experiment, the module defaults and
  // model files it names, the files they extend.
  std::vector<std::string> files_read;
};

}  // namespace sextant
