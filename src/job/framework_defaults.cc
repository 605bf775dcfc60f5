#include "job/framework_defaults.h"

#include <algorithm>

#include "util/close_matches.h"

namespace sextant {
namespace {

// Short names used by the experiment-file adapters and older tables.
std::string_view CanonicalName(std::string_view name) {
  if (EqualsIgnoringCase(name, "megatron") || EqualsIgnoringCase(name, "primus"))
    return "primus-megatron";
  if (EqualsIgnoringCase(name, "llmfoundry")) return "llm-foundry";
  // Primus's Megatron-Bridge backend (framework: megatron_bridge).
  if (EqualsIgnoringCase(name, "megatron_bridge")) return "megatron-bridge";
  return name;
}

std::vector<FrameworkDefaults> BuildTable() {
  std::vector<FrameworkDefaults> t;
  FrameworkDefaults d{};

  // Today's Megatron-Core, the default for any stack not listed. Megatron-LM's published
  // performance runs use the distributed optimizer with overlapped gradient reduce-scatter and
  // parameter all-gather (README "Performance benchmarking"); attention through Transformer
  // Engine's fused (cuDNN) kernels; LLM recipes train without dropout; --fp8-recipe defaults
  // to "delayed" (megatron/training/arguments.py).
  d = FrameworkDefaults{};
  d.name = "megatron-core";
  d.flash_attention = true;
  d.cudnn_attention = true;
  d.dropout = 0.0;
  d.overlap_grad_reduce = d.overlap_param_gather = true;
  d.distributed_optimizer = true;
  d.fsdp = false;
  d.fp16_main_grads = false;
  // Megatron's DistributedDataParallelConfig.grad_reduce_in_fp32 is what arguments.py sets
  // for bf16 (accumulate_allreduce_grads_in_fp32 forced on).
  d.bf16_main_grads = false;
  d.fp8_current_scaling = false;
  d.compiled = true;  // TE / Apex fused norms, bias-activation and rotary kernels
  // --moe-permute-fusion is a store_true flag (TransformerConfig.moe_permute_fusion = False).
  d.moe_permutation = MoePermutation::kIndexSelect;
  // Its MoE recipes pass --moe-grouped-gemm, which with Transformer Engine builds TEGroupedMLP:
  // TE's GroupedLinear, one GEMM per expert over 4 streams (transformer_engine/common/gemm/
  // cublaslt_gemm.cu multi_stream_cublas_gemm; its fused grouped path is opt-in).
  d.expert_gemm_launch = ExpertGemmLaunch::kStreamLoop;
  // validate_args: "if args.expert_tensor_parallel_size is None: ... =
  // args.tensor_model_parallel_size" (before the option existed, experts took the layer's TP).
  d.expert_tp_follows_tp = true;
  // Its TE linear layers pass is_first_microbatch to Transformer Engine unless
  // disable_parameter_transpose_cache is set (megatron/core/extensions/transformer_engine.py,
  // TELinear.forward), and TE then keeps each weight's FP8 workspace, transpose included,
  // between micro-batches (transformer_engine/pytorch/module/linear.py, _fp8_workspaces).
  // NeMo, Megatron-Bridge and Primus's Megatron inherit it.
  d.te_fp8_weight_cache = true;
  // --make-vocab-size-divisible-by defaults to 128, times TP (megatron/training/tokenizer
  // _vocab_size_with_padding).
  d.vocab_multiple = 128;
  d.flops = FlopConvention::kMegatronCore;
  d.source = "Megatron-LM README (performance benchmarking); megatron/training/arguments.py";
  t.push_back(d);

  // NeMo 2.x recipes on Megatron-Core: distributed optimizer, grad/param overlap, TE fused
  // attention, FP8 "hybrid" with delayed scaling (NeMo 24.07 performance summary, recipe
  // configs); its "model TFLOP/s" come from NeMo's own formulas (non-causal attention).
  d.name = "nemo";
  d.flops = FlopConvention::kNemo;
  // Its MoE model configs (Mixtral, DeepSeek, Qwen3-MoE, Llama 4) set moe_permute_fusion.
  d.moe_permutation = MoePermutation::kFused;
  d.source =
      "NeMo 24.07 docs/source/performance/performance_summary.md; nemo/collections/llm "
      "recipes";
  t.push_back(d);

  // Megatron-Bridge: Megatron-Core recipes whose FP8 default is current (per-tensor) scaling
  // ("fp8_cs"; Blackwell recipes name MXFP8 explicitly), and whose MoE recipes dispatch tokens
  // with the flex dispatcher on DeepEP / HybridEP (moe_flex_dispatcher_backend) (Megatron-Bridge
  // performance summary; scripts/performance/configs/*/..._workload_base_configs.py). The
  // 1F1B all-to-all overlap is off unless a recipe turns it on: WorkloadBaseConfig's
  // moe_a2a_overlap defaults to False (scripts/performance/utils/utils.py), and only some
  // recipes set it (DeepSeek-V3 and gpt-oss MXFP8, Qwen3-235B on H100).
  // Its recipes' ConfigContainer keeps Megatron-Core's distributed optimizer and grad / param
  // overlap (src/megatron/bridge/recipes/common.py, DistributedDataParallelConfig).
  d.name = "megatron-bridge";
  d.fp8_current_scaling = true;
  // Every MoE model bridge sets provider.moe_permute_fusion = True
  // (src/megatron/bridge/models/{qwen/qwen3_moe,deepseek/deepseek_v3,gpt_oss/gpt_oss,kimi/kimi}_bridge.py).
  d.moe_permutation = MoePermutation::kFused;
  d.deepep = true;
  d.ep_overlap = false;
  // GPTModelProvider.cross_entropy_loss_fusion = True (src/megatron/bridge/models/
  // gpt_provider.py); its performance scripts pick Transformer Engine's kernel
  // (scripts/performance/utils/overrides.py: cross_entropy_fusion_impl = "te").
  d.cross_entropy_loss_fusion = true;
  d.cross_entropy_impl = CrossEntropyImpl::kTransformerEngine;
  // Its performance recipes reduce gradients in bf16: every *_llm_pretrain.py of
  // scripts/performance/configs (v0.4.2) sets mixed_precision.grad_reduce_in_fp32 = False and
  // ddp.grad_reduce_in_fp32 = False, as perf_recipes/_common.py's _benchmark_common and
  // _perf_precision do since.
  d.bf16_main_grads = true;
  // scripts/performance/utils/precision.py get_precision_config takes its FP8 recipes from
  // src/megatron/bridge/training/mixed_precision.py (v0.4.2), whose delayed, current-scaling
  // and MXFP8 recipes set fp8_param_gather = True (the blockwise one does not).
  d.fp8_primary_weights = true;
  d.flops = FlopConvention::kMegatronCore;
  d.source = "Megatron-Bridge docs/performance-summary.md; scripts/performance";
  t.push_back(d);
  d.fp8_primary_weights = false;

  // Primus's Megatron module: pre_trainer.yaml turns on the distributed optimizer and flash
  // attention, llama_base.yaml sets dropout 0, and its example experiments set
  // overlap_grad_reduce / overlap_param_gather (101 of the MI355X examples).
  d.name = "primus-megatron";
  d.fp8_current_scaling = false;
  d.bf16_main_grads = false;            // Megatron's arguments.py: fp32 accumulation for bf16
  d.cross_entropy_loss_fusion = false;  // configs/models/megatron/language_model.yaml
  d.cross_entropy_impl = CrossEntropyImpl::kNative;
  // configs/models/megatron/language_model.yaml: moe_permute_fusion: false; the DeepSeek
  // (deepseek_v2_base, deepseek_v3_base, deepseek_v4_base), Kimi (kimi_k3_base), Llama 4
  // (llama4_17B16E, llama4_17B128E), Qwen (qwen2.5_base, which the Qwen3 files extend),
  // GLM-5, LFM and MiniMax-M2.5 model files turn it on. An experiment file's own value is read.
  d.moe_permutation = MoePermutation::kIndexSelect;
  d.fused_permute_models =
      "deepseek_v2,deepseek_v3,deepseek_v4,kimi_k,llama4,qwen,glm5,lfm,minimax";
  // primus_turbo.yaml: use_turbo_grouped_gemm: false, so TE's GroupedLinear runs the experts
  // (one GEMM per expert over 4 streams) unless an experiment or a sync-free stage >= 2 turns
  // Turbo's grouped kernel on.
  d.expert_gemm_launch = ExpertGemmLaunch::kStreamLoop;
  d.deepep = false;
  d.ep_overlap = true;  // Primus Turbo's DeepEP overlaps dispatch/combine (when DeepEP is on)
  d.source =
      "Primus primus/configs/modules/megatron/pre_trainer.yaml, "
      "configs/models/megatron/llama_base.yaml, examples/megatron/configs";
  t.push_back(d);

  // Megatron-LM of 2021-22: materialised attention (FlashAttention arrived in 2023), dropout
  // 0.1 (arguments.py defaults), no overlapped or sharded data parallelism, fp16 gradients
  // unless --accumulate-allreduce-grads-in-fp32.
  d = FrameworkDefaults{};
  d.name = "megatron-lm";
  d.flash_attention = false;
  d.cudnn_attention = false;
  d.dropout = 0.1;
  d.fp16_main_grads = true;
  d.compiled = true;  // fused bias-GeLU, fused LayerNorm and softmax kernels
  // Its MoE layers (and DeepSpeed-MoE's Experts) run the local experts one after the other.
  d.expert_gemm_launch = ExpertGemmLaunch::kSequentialLoop;
  d.expert_tp_follows_tp = true;  // MoE layers took the layer's TP before the option existed
  d.vocab_multiple = 128;
  d.flops = FlopConvention::kMegatronCore;
  d.source = "Korthikanti et al. 2022 (arXiv 2205.05198); Megatron-LM arguments.py of 2022";
  t.push_back(d);

  // The SC'21 runs recompute every layer, which is why the paper's eq. 3 counts an extra
  // forward pass in the TFLOP/s it reports (Narayanan et al. 2021, arXiv 2104.04473, §5.1).
  d.version = "2021";
  d.full_recompute = true;
  d.flops = FlopConvention::kNarayanan2021;
  d.source = "Narayanan et al. 2021 (arXiv 2104.04473) §5.1 and eq. 3";
  t.push_back(d);

  // Megatron-DeepSpeed: the 2021 Megatron-LM code base under DeepSpeed (dropout 0.1, flash
  // attention only with --use-flash-attn, fp16 gradients).
  d.name = "megatron-deepspeed";
  d.version = "";
  // DeepSpeed MoE keeps experts whole unless --enable-expert-tensor-parallelism.
  d.expert_tp_follows_tp = false;
  d.full_recompute = false;
  d.flops = FlopConvention::kMegatronCore;
  d.source = "microsoft/Megatron-DeepSpeed megatron/arguments.py";
  t.push_back(d);

  // torchtitan: FSDP2 with FP32 shards, PyTorch SDPA (FlashAttention-2 kernels), eager unless
  // compile.enable; float8 is torchao's tensorwise dynamic scaling; training.local_batch_size
  // is per DP rank and pipeline micro-batches default to 1
  // (parallelism.pipeline_parallel_microbatch_size); uneven layer counts give the first and
  // last stages fewer layers (they also hold the embedding and LM head).
  d = FrameworkDefaults{};
  d.name = "torchtitan";
  d.flash_attention = true;
  d.cudnn_attention = false;
  d.overlap_grad_reduce = d.overlap_param_gather = true;  // FSDP2 prefetching
  d.fsdp = true;
  d.fp8_current_scaling = true;
  d.compiled = false;
  d.local_batch = true;
  d.uneven_pp_ends = true;
  // Its "memory: X GiB" log line is the device memory monitor's max_reserved
  // (torchtitan/components/metrics.py, DeviceMemoryMonitor.get_peak_stats).
  d.memory_log_reserved = true;
  // Its MoE gathers the tokens with torch.gather, multiplies the copies by their scores and
  // scatter_add_s them back (models/moe.py); after a DeepEP dispatch it permutes with
  // index_select and scatter_add_ as Megatron does (distributed/deepep/utils.py).
  d.moe_permutation = MoePermutation::kGatherScatter;
  // MoEArgs.use_grouped_mm defaults to True: torch._grouped_mm, one kernel for every expert.
  d.expert_gemm_launch = ExpertGemmLaunch::kGroupedKernel;
  // The embedding and output have vocab_size rows, unpadded (models/llama3/model/model.py
  // nn.Embedding(model_args.vocab_size, ...)); so do llm-foundry's and MaxText's below (MPT's
  // configs write a padded vocab_size themselves; MaxText's Embed takes config.vocab_size).
  d.vocab_multiple = 0;
  d.flops = FlopConvention::kMegatronCore;
  d.source =
      "pytorch/torchtitan torchtitan/config/job_config.py, docs/float8.md, "
      "components/metrics.py";
  t.push_back(d);

  // llm-foundry: FSDP FULL_SHARD, flash attention through attn_impl, fused low-precision
  // LayerNorm, amp_fp8 through TE's DelayedScaling (scripts/train/benchmarking/README.md).
  d.name = "llm-foundry";
  // Its MoE runs MegaBlocks' own gather/scatter kernels, not PyTorch's atomic ones, and
  // MegaBlocks' grouped GEMM (the grouped_gemm package's CUTLASS kernel) for the experts.
  d.moe_permutation = MoePermutation::kFused;
  d.expert_gemm_launch = ExpertGemmLaunch::kGroupedKernel;
  d.memory_log_reserved = false;
  d.fp8_current_scaling = false;
  d.compiled = true;
  d.local_batch = false;
  d.uneven_pp_ends = false;
  d.source = "mosaicml/llm-foundry scripts/train/benchmarking/README.md";
  t.push_back(d);

  // MaxText (JAX/XLA): every device on the fsdp mesh axis by default (ici_fsdp_parallelism
  // -1), XLA-fused elementwise code, cuDNN flash attention on GPUs (attention:
  // cudnn_flash_te) (MaxText/configs/base.yml).
  // Its capacity_factor is read only by dense_matmul (layers/moe.py generate_masks).
  d.name = "maxtext";
  d.cudnn_attention = true;
  d.fp8_current_scaling = true;
  d.capacity_dense_dispatch = true;
  // Expert weights are sharded over the tensor axis like the dense MLP's (layers/moe.py
  // logical axes "mlp" -> tensor).
  d.expert_tp_follows_tp = true;
  // Its sorted dispatch gathers with jnp.take and un-permutes by a gather and a sum over the
  // top-k copies (layers/moe.py permute / unpermute): no atomic adds.
  d.moe_permutation = MoePermutation::kFused;
  // sparse_matmul runs megablox's grouped matmul (or jax.lax.ragged_dot): one kernel.
  d.expert_gemm_launch = ExpertGemmLaunch::kGroupedKernel;
  d.mtp_off = true;  // base.yml: mtp_num_layers: 0
  d.source = "AI-Hypercomputer/maxtext MaxText/configs/base.yml, layers/moe.py";
  t.push_back(d);
  return t;
}

}  // namespace

MoePermutation MoePermutationFor(const FrameworkDefaults& stack, std::string_view model,
                                 bool deepep) {
  std::string_view list = stack.fused_permute_models;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view prefix = list.substr(0, comma);
    if (!prefix.empty() && model.substr(0, prefix.size()) == prefix) return MoePermutation::kFused;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  if (deepep && stack.moe_permutation == MoePermutation::kGatherScatter) {
    return MoePermutation::kIndexSelect;
  }
  return stack.moe_permutation;
}

SyncFreeMoeOptions SyncFreeMoeStage(int stage) {
  SyncFreeMoeOptions o;
  o.fused_permutation = stage >= 1;
  o.turbo_deepep = stage >= 2;
  o.turbo_grouped_gemm = stage >= 2;
  return o;
}

double DeepEpOverlapEfficiency(int sync_free_stage) {
  if (sync_free_stage >= 3) return 0.85;
  if (sync_free_stage == 2) return 0.80;
  if (sync_free_stage == 1) return 0.75;
  return 0.65;
}

const std::vector<PerformanceRecipe>& PerformanceRecipes() {
  // Megatron-Bridge's 26.04 performance recipes (tag v0.4.2, scripts/performance/configs/
  // <model>/<model>_workload_base_configs.py; WorkloadBaseConfig leaves moe_a2a_overlap False
  // and recompute_modules unset). V2 presets run the Blackwell global batches of the 26.04
  // performance summary; where V1 and V2 agree the batch is left open.
  static const std::vector<PerformanceRecipe> recipes = {
      {"megatron-bridge",
       "26.04",
       "deepseek_v3",
       "GB300",
       DType::kMXFP8,
       0,
       false,
       {"mla_up_proj"},
       "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V1/V2 (= GB300_V1)"},
      {"megatron-bridge",
       "26.04",
       "deepseek_v3",
       "GB200",
       DType::kMXFP8,
       0,
       false,
       {"mlp"},
       "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1/V2 (= GB200_V1)"},
      {"megatron-bridge",
       "26.04",
       "deepseek_v3",
       "B300",
       DType::kMXFP8,
       0,
       false,
       {"mla_up_proj"},
       "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V1/V2"},
      {"megatron-bridge",
       "26.04",
       "deepseek_v3",
       "B200",
       DType::kMXFP8,
       4096,
       true,
       {"mla_up_proj", "mlp"},
       "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 (DeepEP, PP 8, VPP 2, EP 32; commit "
       "a8b6cb3 'b200 DSv3 better cfg')"},
      {"megatron-bridge",
       "26.04",
       "deepseek_v3",
       "B200",
       DType::kMXFP8,
       2048,
       false,
       {"mla_up_proj"},
       "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V1 (= B200_V1)"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "GB200",
       DType::kBF16,
       1280,
       true,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "GB200",
       DType::kMXFP8,
       1280,
       true,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 (= GB200_BF16_V2)"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "GB200",
       DType::kBF16,
       512,
       false,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V1"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "B200",
       DType::kBF16,
       0,
       false,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V1/V2"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "B200",
       DType::kMXFP8,
       0,
       false,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_B200_FP8_MX_V1/V2 (= B200_BF16)"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "H100",
       DType::kBF16,
       0,
       false,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V1/V2"},
      {"megatron-bridge",
       "26.04",
       "gpt_oss_120B",
       "H100",
       DType::kFP8,
       0,
       false,
       {"layernorm", "moe_act"},
       "GPT_OSS_120B_PRETRAIN_CONFIG_H100_FP8_CS_V1/V2 (= H100_BF16)"},
      {"megatron-bridge",
       "26.04",
       "qwen3_235B",
       "H100",
       DType::kBF16,
       0,
       true,
       {},
       "QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_BF16_V1/V2"},
      {"megatron-bridge",
       "26.04",
       "qwen3_235B",
       "H100",
       DType::kFP8,
       0,
       true,
       {},
       "QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1/V2"},
      {"megatron-bridge",
       "26.04",
       "kimi_k2",
       "GB300",
       DType::kMXFP8,
       0,
       false,
       {"mla_up_proj"},
       "KIMI_K2_PRETRAIN_CONFIG_GB300_FP8_MX (= GB300)"},
      {"megatron-bridge",
       "26.04",
       "kimi_k2",
       "GB200",
       DType::kMXFP8,
       0,
       false,
       {"mla_up_proj"},
       "KIMI_K2_PRETRAIN_CONFIG_GB200_FP8_MX (= GB200)"},
      {"megatron-bridge",
       "26.04",
       "kimi_k2",
       "B200",
       DType::kMXFP8,
       0,
       false,
       {"mla_up_proj"},
       "KIMI_K2_PRETRAIN_CONFIG_B200_FP8_MX (= B200)"},
  };
  return recipes;
}

const PerformanceRecipe* FindPerformanceRecipe(std::string_view framework, std::string_view version,
                                               std::string_view model, std::string_view gpu,
                                               DType gemm, int64_t global_batch) {
  const std::string_view stack = CanonicalName(framework);
  for (const PerformanceRecipe& r : PerformanceRecipes()) {
    if (!EqualsIgnoringCase(r.framework, stack)) continue;
    if (version.find(r.version) == std::string_view::npos) continue;
    if (model.substr(0, r.model.size()) != r.model || gpu != r.gpu || gemm != r.gemm) continue;
    if (r.global_batch != 0 && r.global_batch != global_batch) continue;
    return &r;
  }
  return nullptr;
}

const std::vector<FrameworkDefaults>& AllFrameworkDefaults() {
  static const std::vector<FrameworkDefaults> table = BuildTable();
  return table;
}

const FrameworkDefaults& DefaultsForFramework(std::string_view framework, std::string_view version,
                                              bool* known) {
  const std::string_view name = CanonicalName(framework);
  const FrameworkDefaults* best = nullptr;
  for (const FrameworkDefaults& d : AllFrameworkDefaults()) {
    if (!EqualsIgnoringCase(d.name, name)) continue;
    if (!d.version.empty() && version.find(d.version) == std::string_view::npos) continue;
    if (!best || d.version.size() > best->version.size()) best = &d;
  }
  if (known) *known = best != nullptr;
  return best ? *best : AllFrameworkDefaults().front();
}

}  // namespace sextant
