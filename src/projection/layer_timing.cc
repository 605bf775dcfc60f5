#include "projection/layer_timing.h"

#include <algorithm>

#include <fmt/format.h>

#include "cost/collective_model.h"
#include "cost/efficiency_table.h"
#include "cost/layer_cost.h"
#include "cost/memory_bound_model.h"
#include "job/framework_defaults.h"
#include "job/lora_adapter.h"
#include "memory/model_state_memory.h"
#include "parallel/sharding.h"
#include "util/units.h"

namespace sextant {
namespace {

// Without flash attention the s x s score matrix goes through HBM: QK^T written (2 B),
// softmax read and written (4 B), dropout mask and output written (1 + 2 B) and read again
// by the PV GEMM (2 B) — 11 bytes per score forward, about twice that backward (Korthikanti
// et al. 2022 §4.1 list the same tensors; FlashAttention, Dao et al. 2022 §1, removes them).
double UnfusedScoreSeconds(const Job& job, double bytes_per_score) {
  const double t = std::max(1, job.parallel.tp);
  const double cp = std::max(1, job.parallel.cp);
  const double s = static_cast<double>(job.training.seq_length);
  const double scores =
      job.training.micro_batch_size * (job.model.num_attention_heads / t) * (s / cp) * s;
  const double bw = job.cluster.gpu.hbm_bandwidth * 0.8;
  return bw > 0 ? scores * bytes_per_score / bw : 0.0;
}

bool OpLevelSelectiveRecompute(const RecomputeSpec& rc) {
  return rc.granularity == RecomputeGranularity::kSelective && rc.per_op_policy;
}

PieceTiming ToTiming(const LayerCost& c, bool recomputed, double eff) {
  PieceTiming t;
  t.type = c.kind;
  t.forward_s = c.forward.Compute() / eff + c.forward.Communication();
  t.backward_input_s = c.backward_input.Compute() / eff + c.backward_input.Communication();
  t.backward_weight_s = c.backward_weight.Compute() / eff + c.backward_weight.Communication();
  t.recompute_s = recomputed ? c.recompute.Compute() / eff + c.recompute.Communication() : 0.0;
  t.tp_comm_s = c.forward.tp_comm + c.backward_input.tp_comm + c.backward_weight.tp_comm;
  t.cp_comm_s = c.forward.cp_comm + c.backward_input.cp_comm + c.backward_weight.cp_comm;
  t.ep_comm_s = c.forward.ep_comm + c.backward_input.ep_comm + c.backward_weight.ep_comm;
  t.forward_comm_s = c.forward.Communication();
  t.backward_input_comm_s = c.backward_input.Communication();
  t.backward_weight_comm_s = c.backward_weight.Communication();
  return t;
}

}  // namespace

bool UsesCudnnAttentionOnHopper(const Job& job) {
  const GpuSpec& gpu = job.cluster.gpu;
  // The constant describes Hopper kernels of the 2024 containers; Blackwell keeps its table.
  const bool hopper = gpu.vendor == Vendor::kNVIDIA && gpu.arch == "sm_90";
  // PyTorch SDPA's flash backend (torchtitan, llm-foundry) is FlashAttention-2, the table's
  // default; Megatron-based stacks and MaxText on GPUs use cuDNN fused kernels.
  const bool cudnn = DefaultsForFramework(job.framework).cudnn_attention;
  return hopper && cudnn && job.training.flash_attention;
}

ModelTimings ComputeModelTimings(const Job& job, const Calibration& calibration,
                                 const EfficiencyTable* gemm_table) {
  const double eff = calibration.in_training_efficiency;
  const auto collectives = MakeCollectiveModel(job.cluster, "auto");
  EfficiencyTable table = gemm_table ? *gemm_table : EfficiencyTable::Default(job.cluster.gpu);
  if (UsesCudnnAttentionOnHopper(job)) {
    // FlashAttention-3 reaches ~75% of the BF16 peak forward and ~50% backward on H100 (Shah
    // et al. 2024, arXiv 2407.08608, §4.1); cuDNN's kernels of the same era reach a fitted
    // fraction of that (kCudnnAttentionScale).
    const double s = calibration.cudnn_attention_scale;
    table.SetAttentionFractions(0.75 * s, 0.50 * s);
  }
  const LayerCostModel model(job, table, collectives.get());
  ModelTimings out;
  const auto stages = PlaceLayers(job.model, job.parallel);
  out.layers.resize(job.model.num_layers);
  // A layer's cost depends on its index only through whether it routes tokens and its
  // attention geometry: one evaluation per distinct kind (DeepSeek-V3: 2 for 61 layers).
  struct Kind {
    bool moe;
    ModelSpec::LayerAttention attention;
    LayerCost cost;
  };
  std::vector<Kind> kinds;
  kinds.reserve(static_cast<size_t>(job.model.num_layers));  // references to kinds stay valid
  auto cost_of = [&](int64_t layer) -> const LayerCost& {
    const bool moe = job.model.IsMoeLayer(layer);
    const ModelSpec::LayerAttention a = job.model.AttentionOf(layer);
    for (const Kind& k : kinds) {
      if (k.moe == moe && k.attention.head_dim == a.head_dim &&
          k.attention.kv_heads == a.kv_heads && k.attention.kv_tensors == a.kv_tensors &&
          k.attention.window == a.window) {
        return k.cost;
      }
    }
    kinds.push_back({moe, a, model.TransformerLayer(layer)});
    return kinds.back().cost;
  };
  double all_flops = 0, recompute_flops = 0, forward_flops = 0, recomputed_forward_flops = 0;
  for (const auto& vs : stages) {
    for (int64_t i = 0; i < vs.num_layers; ++i) {
      const int64_t layer = vs.first_layer + i;
      const bool recomputed = IsLayerRecomputed(job.training.recompute, layer, i);
      const LayerCost& cost = cost_of(layer);
      all_flops += cost.flops_forward + cost.flops_backward;
      forward_flops += cost.flops_forward;
      if (recomputed) {
        recompute_flops += cost.flops_recompute;
        recomputed_forward_flops += cost.flops_forward;
      }
      out.layers[layer] = ToTiming(cost, recomputed, eff);
      if (OpLevelSelectiveRecompute(job.training.recompute)) {
        // torchtitan's per-op policy saves every other matmul output and the attention
        // output, and recomputes the rest: half the forward GEMMs and every memory-bound op.
        out.layers[layer].recompute_s = (0.5 * cost.forward.gemm + cost.forward.memory_bound) / eff;
      }
      if (!job.training.flash_attention) {
        const double fwd = UnfusedScoreSeconds(job, 11.0) / eff;
        out.layers[layer].forward_s += fwd;
        out.layers[layer].backward_input_s += 2 * fwd;
        if (recomputed) out.layers[layer].recompute_s += fwd;
      }
    }
  }
  if (job.training.lora.enabled ||
      job.training.moe_expert_compute != MoeExpertCompute::kGroupedTokens) {
    // The same layers with every weight training and each token through its top-k experts
    // only: the model FLOPs formula's view. LoRA executes fewer FLOPs than it counts; MaxText's
    // dense_matmul more (the one-hot dispatch/combine einsums, the empty capacity slots or
    // every expert for every token).
    Job full = job;
    full.training.lora = LoraSpec{};
    full.training.moe_expert_compute = MoeExpertCompute::kGroupedTokens;
    const LayerCostModel full_model(full, table, nullptr);
    auto flops = [](const LayerCost& c) { return c.flops_forward + c.flops_backward; };
    double executed = flops(model.OutputHead()), trained_fully = flops(full_model.OutputHead());
    // One full-training evaluation per layer kind, as for cost_of.
    std::vector<std::pair<const LayerCost*, double>> full_of_kind;
    for (int64_t layer = 0; layer < job.model.num_layers; ++layer) {
      const LayerCost& c = cost_of(layer);
      executed += flops(c);
      auto it = std::find_if(full_of_kind.begin(), full_of_kind.end(),
                             [&](const auto& k) { return k.first == &c; });
      if (it == full_of_kind.end()) {
        full_of_kind.emplace_back(&c, flops(full_model.TransformerLayer(layer)));
        it = full_of_kind.end() - 1;
      }
      trained_fully += it->second;
    }
    if (trained_fully > 0) out.executed_flops_ratio = executed / trained_fully;
  }
  out.embedding = ToTiming(model.Embedding(), false, eff);
  const LayerCost head = model.OutputHead();
  out.output = ToTiming(head, false, eff);
  all_flops += head.flops_forward + head.flops_backward;
  if (all_flops > 0) out.recompute_flops_ratio = recompute_flops / all_flops;
  if (forward_flops > 0)
    out.recomputed_layer_forward_share = recomputed_forward_flops / forward_flops;
  if (job.model.mtp_num_layers > 0) out.mtp = ToTiming(model.MtpModule(), false, eff);
  out.optimizer_step_s = model.OptimizerStep(OptimizerParamsPerGpu(job)).seconds / eff;
  out.assumptions.push_back(fmt::format(
      "layer times: analytical GEMM (tile/wave quantisation, roofline), flash-attention and "
      "memory-bound models with the {} efficiency table{}; kernels run at {:.0f}% of their "
      "isolated speed inside a training step (fitted on published runs)",
      job.cluster.gpu.name, gemm_table ? " given with --calibration (below)" : "", eff * 100));
  if (job.model.IsMoe() && job.training.moe_permutation != MoePermutation::kFused &&
      job.training.moe_expert_compute == MoeExpertCompute::kGroupedTokens) {
    const GpuSpec& gpu = job.cluster.gpu;
    out.assumptions.push_back(fmt::format(
        "MoE tokens permuted by PyTorch ops ({}), not fused kernels: their scatter_add_ / "
        "index_add_ run at {:.0f} / {:.0f} G atomic adds/s ({})",
        job.training.moe_permutation == MoePermutation::kIndexSelect
            ? "index_select, scatter_add_: Megatron without moe_permute_fusion, torchtitan "
              "after a DeepEP dispatch"
            : "torch.gather, probabilities multiply, scatter_add_",
        AtomicAddsPerSecond(gpu, AtomicAdd::kScatterAdd) / 1e9,
        AtomicAddsPerSecond(gpu, AtomicAdd::kIndexAdd) / 1e9,
        AtomicAddRatesMeasured(gpu) ? "measured on an H200"
                                    : "an H200's rates scaled by HBM bandwidth, not measured"));
  }
  // Said only where the loop costs more than one grouped kernel: more local experts than
  // streams, or one expert at a time.
  const ExpertGemmLaunch launch = job.training.expert_gemm_launch;
  const int64_t local_experts =
      job.model.IsMoe() ? CeilDiv(job.model.moe.num_experts, job.parallel.ep) : 0;
  const bool streams =
      launch == ExpertGemmLaunch::kStreamLoop || launch == ExpertGemmLaunch::kGroupedGemmPackage;
  if (job.model.IsMoe() && job.training.moe_expert_compute != MoeExpertCompute::kEveryExpert &&
      ((streams && local_experts > kExpertGemmStreams) ||
       (launch == ExpertGemmLaunch::kSequentialLoop && local_experts > 1))) {
    // The loop takes the token counts as host integers, so the host issues it right after a
    // synchronisation. Its launch time is not modelled: measured small-batch MoE runs on this
    // path (DeepSeek-V2 on MI355X, published_runs.csv amd-moepkg) are up to 40-70% slower than
    // projected, and no host cost per launch fitted there also held on the other sources.
    const std::string host =
        "; the host issues each one after reading the token counts, and that launch time is not "
        "modelled (it can exceed small experts' GEMMs: projections of such runs can be "
        "optimistic)";
    out.assumptions.push_back(
        (streams ? fmt::format("expert GEMMs: one GEMM per expert, {} at a time on {} streams, "
                               "not one grouped kernel",
                               kExpertGemmStreams,
                               launch == ExpertGemmLaunch::kStreamLoop
                                   ? "Transformer Engine's (GroupedLinear)"
                                   : "the grouped_gemm package's (moe_use_legacy_grouped_gemm)")
                 : std::string("expert GEMMs: one GEMM per expert, one after the other "
                               "(SequentialMLP), not one grouped kernel")) +
        host);
  }
  if (job.model.IsMoe()) {
    out.assumptions.push_back(
        "MoE routing balanced: every expert gets tokens x top-k / experts, as with "
        "moe_router_force_load_balancing; with a learned router the busiest expert's rank sets "
        "the step, and that imbalance is not modelled");
  }
  const TrainingSettings& t = job.training;
  if (job.model.IsMoe() && t.ep_overlap && t.ep_a2a_combined_1f1b && job.parallel.ep > 1) {
    out.assumptions.push_back(fmt::format(
        "EP all-to-all: Megatron's combined 1F1B schedule (overlap_moe_expert_parallel_comm{}) "
        "runs each layer's dispatch and combine beside another micro-batch's computation, "
        "stage by stage, and hides what that computation covers; {:.0f}% of the passes are "
        "paired (the warm-up forwards and cool-down backwards run alone)",
        t.delay_wgrad_compute ? ", delay_wgrad_compute" : "",
        100 * CombinedOneFOneBPairedShare(t.NumMicroBatches(job.parallel.dp), job.parallel.pp,
                                          std::max(1, job.parallel.vpp))));
  } else if (job.model.IsMoe() && t.ep_overlap && job.parallel.ep > 1) {
    const int stage = t.sync_free_moe_stage;
    out.assumptions.push_back(fmt::format(
        "EP all-to-all: {:.0f}% hidden behind compute ({}){}", 100 * DeepEpOverlapEfficiency(stage),
        stage > 0  ? fmt::format("Primus's overlap at sync-free MoE stage {}", stage)
        : t.deepep ? std::string("Primus's overlap for DeepEP")
                   : std::string("Primus's overlap for the 1F1B all-to-all overlap"),
        stage > 0 ? "; the host synchronisations the stage removes are not modelled otherwise"
                  : ""));
  }
  const bool lora = job.training.lora.enabled;
  if (lora) {
    const LoraSpec& l = job.training.lora;
    std::string targets;
    // Only the modules the model has (an MLA model has no linear_qkv; the job builder warns
    // about the others).
    const std::vector<std::string> absent = LoraTargetsWithoutModule(job);
    for (const std::string& t : l.target_modules) {
      if (std::find(absent.begin(), absent.end(), t) != absent.end()) continue;
      targets += (targets.empty() ? "" : ", ") + t;
    }
    out.assumptions.push_back(fmt::format(
        "LoRA rank {} on {}: frozen base weights compute no weight gradients; each adapter adds "
        "two rank-{} GEMMs per pass{}; only the adapters' gradients are reduced and updated; "
        "model TFLOP/s and MFU still count Megatron's full-training FLOPs, as its log does; "
        "hardware TFLOP/s count what runs",
        l.rank, targets, l.rank, l.dropout > 0 && l.dropout_before ? " and a dropout" : ""));
  }
  if (launch == ExpertGemmLaunch::kGroupedGemmPackage && !lora &&
      job.training.gradient_accumulation_fusion && !job.parallel.fsdp2) {
    out.assumptions.push_back(
        "moe_use_legacy_grouped_gemm: the experts' weight gradients reach main_grad through a "
        "separate add each micro-batch, gradient_accumulation_fusion or not");
  }
  if (!job.training.gradient_accumulation_fusion && !job.parallel.fsdp2) {
    const PrecisionRecipe& p = job.training.precision;
    out.assumptions.push_back(fmt::format(
        "gradient_accumulation_fusion off: every {}weight's gradient is added to its main "
        "gradient by a separate kernel each micro-batch ({:.0f} B per weight)",
        lora ? "adapter " : "",
        UnfusedGradAccumulationBytes(1, DTypeBytes(p.HalfPrecision()), DTypeBytes(p.main_grads))));
  }
  return out;
}

}  // namespace sextant
