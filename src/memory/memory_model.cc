#include "memory/memory_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "job/framework_defaults.h"
#include "memory/activation_memory.h"
#include "memory/in_flight.h"
#include "memory/lora_adapters.h"
#include "memory/model_state_memory.h"
#include "model/parameter_count.h"
#include "util/units.h"

namespace sextant {
namespace {

// Whether global layer `layer` (local index `local` within its chunk) is fully recomputed.
bool FullyRecomputed(const RecomputeSpec& rc, int64_t layer, int64_t local) {
  if (!rc.layer_ids.empty()) {
    return std::find(rc.layer_ids.begin(), rc.layer_ids.end(), layer) != rc.layer_ids.end();
  }
  if (rc.granularity != RecomputeGranularity::kFull) return false;
  if (rc.method == RecomputeMethod::kUniform) return true;
  return local < rc.num_layers;  // block: the first num_layers layers of each chunk
}

// NCCL/RCCL communicator memory. Primus's fit to MI300X/MI325X measurements (research:
// primus-projection.md §2.6): 96 MiB + 2 MiB per rank in the world, capped at 1 GiB.
int64_t CommunicatorBytes(int world) {
  if (world <= 1) return 0;
  return std::min<int64_t>(96 * kMiB + 2 * kMiB * world, kGiB);
}

// Bytes per transformer weight of Transformer Engine's cached low-precision copies: the copy
// GEMMs read in forward and its transpose for the input gradient, each with its block scales
// where the format has them (MXFP8: one E8M0 byte per 32 values; MXFP4: 4-bit values, one
// scale byte per 32). FP8 primary weights (fp8_param_gather) are the forward copy already: only
// the transpose is extra; without the transpose cache (keep_fp8_weight_transpose_cache=False)
// only the forward copy is kept. 0 for 16-bit GEMMs.
double LowPrecisionWeightCacheBytes(const PrecisionRecipe& pr) {
  double one_copy = 0;
  switch (pr.gemm) {
    case DType::kFP8: one_copy = 1.0; break;
    case DType::kMXFP8: one_copy = 1.0 + 1.0 / 32; break;
    case DType::kFP4: one_copy = 0.5 + 1.0 / 32; break;
    default: return 0;
  }
  const int copies = (pr.fp8_param_gather ? 0 : 1) + (pr.fp8_weight_transpose_cache ? 1 : 0);
  return copies * one_copy;
}

// Which of TE's copies LowPrecisionWeightCacheBytes counts, for the buffer's description (with
// fp8 primary weights and no transpose cache it counts none, and the buffer is not listed).
const char* WeightCopiesKept(const PrecisionRecipe& pr) {
  if (!pr.fp8_weight_transpose_cache) return " (no transpose cache)";
  return pr.fp8_param_gather ? "' transposes" : " + transposes";
}

}  // namespace

std::string OomNote(const MemoryReport& r) {
  if (r.verdict != Verdict::kOom) return "";
  return fmt::format("OOM: {:.1f} GiB peak of {:.1f} GiB", ToGiB(r.peak_bytes),
                     ToGiB(r.capacity_bytes));
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kFits: return "FITS";
    case Verdict::kAtRisk: return "AT-RISK";
    case Verdict::kOom: return "OOM";
  }
  return "FITS";
}

MemoryReport ProjectMemory(const Job& job, const InFlightTable& in_flight, MemoryDetail detail) {
  const bool describe = detail == MemoryDetail::kFull;
  const StageShape shape = ShapeOf(job.training.pipeline_schedule);
  // V-shape schedules always run two chunks per rank, whatever VPP the config states (the
  // performance projection places them the same way).
  ParallelPlan plan = job.parallel;
  if (shape == StageShape::kVShape) plan.vpp = 2;
  const auto stages = PlaceLayers(job.model, plan, shape);
  const int64_t m = job.training.NumMicroBatches(plan.dp);
  const RecomputeSpec& rc = job.training.recompute;
  const int world = plan.WorldSize();
  const bool xla = job.framework == "maxtext";  // JAX/XLA rather than PyTorch

  MemoryReport report;
  if (job.training.precision.main_params == job.training.precision.params &&
      job.training.precision.params != DType::kFP32) {
    report.optimizer_state = "moments (no master copy: parameters updated in their own dtype)";
  }
  if (job.parallel.fsdp2) {
    // ZeRO-3 (model_state_memory.cc BytesPerParam): the weights row is each parameter's shard
    // in the master dtype, which is also what the optimizer updates.
    const PrecisionRecipe& pr = job.training.precision;
    const std::string sharded = xla ? "FSDP" : "FSDP2";
    report.weights_shard = fmt::format("{} shard", DTypeName(pr.main_params));
    report.weights_note =
        job.parallel.fsdp_replicas > 1
            ? fmt::format(" (1/{}: HSDP, {} replicas)", job.parallel.FsdpShardGroup(),
                          job.parallel.fsdp_replicas)
            : fmt::format(" (1/{}: {})", job.parallel.FsdpShardGroup(), sharded);
    if (job.model.IsMoe() && job.parallel.ep > 1 && job.parallel.fsdp_replicas <= 1) {
      // The count is of this rank's layers after expert parallelism: the routed experts are
      // already split EP ways and shard further over the expert-data-parallel group only.
      const int expert_dp = job.parallel.ExpertDataParallel();
      report.weights_note = expert_dp > 1 ? fmt::format(" (1/{} dense, experts 1/{} + EP)",
                                                        job.parallel.FsdpShardGroup(), expert_dp)
                                          : fmt::format(" (1/{} dense, experts by EP)",
                                                        job.parallel.FsdpShardGroup());
    }
    report.grads_state =
        fmt::format("{} gradient shard, reduce-scattered", DTypeName(pr.main_grads));
    report.optimizer_state = pr.main_params == pr.params
                                 ? "moments of the shard (no master copy beyond the weights)"
                                 : "moments of the shard (the weights row is the master copy)";
  }
  report.model = job.model.name;
  report.gpu = job.cluster.gpu.name;
  report.parallel = plan;
  // Without pipeline stages no schedule runs (the console says "no pipeline").
  report.schedule =
      plan.pp > 1 ? std::string(ScheduleKindName(job.training.pipeline_schedule)) : "none";
  report.micro_batches = m;
  report.hbm_bytes = job.cluster.gpu.hbm_bytes;
  report.capacity_bytes = report.hbm_bytes;
  if (xla && job.training.xla_memory_fraction > 0) {
    report.capacity_bytes =
        std::llround(static_cast<double>(report.hbm_bytes) * job.training.xla_memory_fraction);
  }

  const int64_t input_only = RecomputedLayerInputBytes(job);
  const ModelParams counts = CountParameters(job.model, job.model.PaddedVocabSize(plan.tp));

  const std::vector<RankParams> per_rank = ParamsPerRank(job.model, plan, shape);
  // Transformer Engine's low-precision weight copies (bytes per transformer weight; 0 when not
  // counted). Not under FSDP: a layer's gathered weights are released after its forward, and a
  // cache of their casts would undo the sharding (how TE's cache behaves on FSDP-sharded
  // weights is not modelled).
  const double low_precision_weight = LowPrecisionWeightCacheBytes(job.training.precision);
  const bool te_weight_cache = DefaultsForFramework(job.framework).te_fp8_weight_cache;
  const double weight_cache_bytes =
      te_weight_cache && !job.training.lora.enabled && !plan.fsdp2 ? low_precision_weight : 0.0;
  // FSDP all-gathers a rank's routed experts only where expert data parallelism shards them.
  const bool experts_gathered = job.parallel.ExpertDataParallel() > 1;
  const std::vector<int64_t> adapters = LoraAdapterParamsPerRank(job, plan, shape);
  for (int rank = 0; rank < plan.pp; ++rank) {
    StageMemory st;
    st.pp_rank = rank;
    const RankParams& params = per_rank[static_cast<size_t>(rank)];
    st.lora_params = adapters[static_cast<size_t>(rank)];
    const ModelStateMemory state = ModelStateBytes(job, params, st.lora_params);
    st.params = params.Total() + st.lora_params;
    st.params_bytes = state.params_bytes;
    st.grads_bytes = state.grads_bytes;
    st.optimizer_bytes = state.optimizer_bytes;

    const std::vector<double> chunks =
        in_flight.empty()
            ? AnalyticInFlight(job.training.pipeline_schedule, plan.pp, plan.vpp, m, rank)
            : in_flight.at(rank);
    double layers_bytes = 0, embed_bytes = 0, output_bytes = 0, working_set = 0;
    int64_t largest_layer = 0;
    // Parameters of the largest layer one FSDP all-gather rebuilds on this rank: the layer's
    // dense part over TP, and its local routed experts (1/(EP x ETP) of them) only where
    // expert data parallelism shards them further; with EP covering the whole DP group each
    // rank holds its experts whole, and nothing of them is gathered (torchtitan shards the
    // experts over the dp-mod-ep mesh; MaxText's expert axis is not an FSDP axis).
    double largest_gathered_params = 0;
    for (const auto& vs : stages) {
      if (vs.pp_rank != rank) continue;
      const double copies = vs.chunk < static_cast<int>(chunks.size()) ? chunks[vs.chunk] : 0.0;
      st.layers += vs.num_layers;
      st.in_flight_micro_batches += copies;
      double chunk_bytes = 0;
      int64_t group = 0;  // recompute working set: layers re-materialised together
      for (int64_t i = 0; i < vs.num_layers; ++i) {
        const int64_t layer = vs.first_layer + i;
        const int64_t full = LayerActivationBytes(job, layer).Total();
        largest_layer = std::max(largest_layer, full);
        {
          const LayerParams& lp = counts.layers[layer];
          double gathered =
              static_cast<double>(lp.Total() - lp.routed_experts) / std::max(1, plan.tp);
          if (experts_gathered) {
            gathered += static_cast<double>(lp.routed_experts) /
                        std::max(1, plan.ep * std::max(1, plan.etp));
          }
          largest_gathered_params = std::max(largest_gathered_params, gathered);
        }
        if (FullyRecomputed(rc, layer, i)) {
          // Megatron's uniform method checkpoints one input per group of num_layers layers;
          // block and layer-id recompute checkpoint every recomputed layer on its own.
          const bool uniform_group = rc.layer_ids.empty() && rc.method == RecomputeMethod::kUniform;
          const int64_t n = uniform_group ? std::max<int64_t>(1, rc.num_layers) : 1;
          if (i % n == 0) chunk_bytes += static_cast<double>(input_only);
          group += full;
        } else {
          chunk_bytes += static_cast<double>(full);
        }
      }
      // During a recomputed backward one checkpoint unit is re-materialised in full: a group
      // of num_layers layers (uniform), or a single layer (block, layer ids).
      const bool uniform = rc.layer_ids.empty() && rc.method == RecomputeMethod::kUniform;
      const int64_t per_unit =
          uniform ? std::min<int64_t>(std::max<int64_t>(1, rc.num_layers), vs.num_layers) : 1;
      if (group > 0 && vs.num_layers > 0) {
        working_set = std::max(working_set, static_cast<double>(largest_layer) * per_unit);
      }
      layers_bytes += chunk_bytes * copies;
      if (vs.has_embedding) embed_bytes += EmbeddingActivationBytes(job) * copies;
      if (vs.has_output) output_bytes += OutputActivationBytes(job) * copies;
      for (int64_t k = 0; k < vs.mtp_layers; ++k) {
        // An MTP module is one more transformer layer plus its own LM head and loss.
        layers_bytes += (LayerActivationBytes(job, job.model.num_layers - 1).Total() +
                         OutputActivationBytes(job)) *
                        copies;
      }
    }
    st.activation_parts.push_back(
        {"transformer layers", std::llround(layers_bytes),
         !describe              ? std::string()
         : job.parallel.pp == 1 ? std::string("1 micro-batch in flight (no pipeline)")
                                : fmt::format("{:.2f} micro-batch chunks in flight ({} schedule)",
                                              st.in_flight_micro_batches, report.schedule)});
    if (embed_bytes > 0) {
      st.activation_parts.push_back(
          {"embedding", std::llround(embed_bytes), "int64 token ids (+ dropout mask)"});
    }
    if (output_bytes > 0) {
      st.activation_parts.push_back(
          {"LM head + loss", std::llround(output_bytes),
           InPlaceCrossEntropy(job.training)
               ? "TE cross-entropy: bf16 logits, gradient written in place"
           : job.training.cross_entropy_loss_fusion ? "fused cross-entropy: bf16 logits gradient"
           : job.training.compiled_loss ? "compiled loss: bf16 logits, softmax recomputed"
                                        : "unfused cross-entropy: fp32 softmax"});
    }
    if (output_bytes > 0 && !InPlaceCrossEntropy(job.training)) {
      // While the last micro-batch computes its loss, the logits and their gradient exist on
      // top of what is stored: bf16 logits + bf16 gradient (fused cross-entropy), plus the
      // fp32 gradient of the upcast copy when the loss is unfused.
      const double v = static_cast<double>(job.model.PaddedVocabSize(plan.tp)) / plan.tp;
      // MaxText (XLA) computes the logits in the loss dtype directly and its only transient is
      // their gradient: 4 bytes per logit in fp32.
      // (Transformer Engine's kernel works in place on the stored logits: nothing on top.)
      // In an fp32 job the logits and their gradient are fp32 already: 8 bytes either way
      // unfused.
      const double element = DTypeBytes(job.training.precision.ActivationDType());
      const double per_entry = xla                                      ? 4.0
                               : job.training.cross_entropy_loss_fusion ? 2.0 * element
                                                                        : 8.0;
      // Says which tensors make up the bytes: the stored logits are the row above.
      const std::string what = xla ? "their fp32 gradient"
                               : job.training.cross_entropy_loss_fusion || element >= 4
                                   ? "logits + gradient"
                                   : "logits, gradient, fp32 copy's gradient";
      st.activation_parts.push_back(
          {"loss transient", std::llround(per_entry * v * TokensPerRank(job)),
           describe ? fmt::format("{:.0f} B per logit during the loss: {}", per_entry, what)
                    : std::string()});
    }
    if (working_set > 0) {
      st.activation_parts.push_back({"recompute working set", std::llround(working_set),
                                     "one recompute group re-materialised during backward"});
    }
    for (const auto& part : st.activation_parts) st.activations_bytes += part.bytes;

    // ---- named buffers ----
    if (world > 1) {  // one GPU opens no communicator
      st.buffers.push_back(
          {"NCCL/RCCL communicators", CommunicatorBytes(world),
           describe ? fmt::format("96 MiB + 2 MiB x {} ranks, at most 1 GiB (Primus fit)", world)
                    : std::string()});
    }
    // Transformer Engine's default workspace; PyTorch's and XLA's own are of the same order.
    st.buffers.push_back({"GEMM workspaces", 32 * kMiB, "cuBLASLt/hipBLASLt workspace (32 MiB)"});
    if (const double per_weight = weight_cache_bytes; per_weight > 0) {
      // Every transformer-layer weight on this GPU (norms and router included: under 1%);
      // the embedding and LM head stay in 16 bits.
      const double weights = static_cast<double>(params.dense - params.embedding + params.expert);
      const bool fp4 = job.training.precision.gemm == DType::kFP4;
      st.buffers.push_back(
          {fp4 ? "FP4 weight copies" : "FP8 weight copies", std::llround(weights * per_weight),
           describe ? fmt::format("TE's cached {} weights{}, {:.2f} B each",
                                  DTypeName(job.training.precision.gemm),
                                  WeightCopiesKept(job.training.precision), per_weight)
                    : std::string()});
    }
    if (plan.fsdp2) {
      // Current and prefetched layer gathered in the compute dtype, plus one layer's
      // unsharded FP32 gradient before its reduce-scatter.
      const double layer = largest_gathered_params;
      const DType gathered = job.training.precision.ActivationDType();
      st.buffers.push_back(
          {xla ? "FSDP gathered layers" : "FSDP2 gathered layers",
           std::llround(layer * (2.0 * DTypeBytes(gathered) + 4.0)),
           describe ? fmt::format("2 layers all-gathered in {} + 1 layer of fp32 gradients",
                                  DTypeName(gathered))
                    : std::string()});
    }
    if (plan.fsdp2 && m > 1 && plan.pp > 1) {
      // FSDP2 reduce-scatters after every backward unless told not to, so plain gradient
      // accumulation keeps only its shards. PyTorch's pipeline stages tell it not to: a stage
      // turns gradient sync and resharding off until its last micro-batch's backward
      // (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync), so unsharded
      // gradients accumulate (FP32 with an FP32 reduce dtype) and the gathered parameters
      // stay between micro-batches.
      const double n = static_cast<double>(params.Total());
      const double bytes = n * DTypeBytes(job.training.precision.main_grads) +
                           (plan.pp > 1 ? n * DTypeBytes(job.training.precision.params) : 0.0);
      st.buffers.push_back({"FSDP2 unsharded state across micro-batches", std::llround(bytes),
                            plan.pp > 1 ? "accumulated gradients + parameters kept gathered"
                                        : "accumulated gradients"});
    }
    if (job.training.deepep && job.model.IsMoe()) {
      // Primus's DeepEP sizing: dispatch + combine buffers with 2x over-provisioning.
      const int64_t tokens = std::max<int64_t>(
          1, job.training.micro_batch_size * job.training.seq_length / (plan.tp * plan.cp));
      const int64_t slots = tokens * job.model.moe.router_topk * 2;
      st.buffers.push_back({"DeepEP buffers", 2 * slots * job.model.hidden_size * 2,
                            "dispatch + combine, 2x token over-provisioning"});
    }
    for (const auto& b : st.buffers) st.buffers_bytes += b.bytes;
    st.total_bytes = st.params_bytes + st.grads_bytes + st.optimizer_bytes + st.activations_bytes +
                     st.buffers_bytes;
    if (st.total_bytes > report.peak_bytes) {
      report.peak_bytes = st.total_bytes;
      report.peak_rank = rank;
    }
    report.stages.push_back(std::move(st));
  }

  report.reserved_peak_bytes =
      std::llround(static_cast<double>(report.peak_bytes) * kCachingAllocatorReserve);
  const double cap = static_cast<double>(report.capacity_bytes);
  if (cap > 0 && report.peak_bytes > report.capacity_bytes) {
    report.verdict = Verdict::kOom;
  } else if (cap > 0 && (report.peak_bytes > kAtRiskFraction * cap ||
                         (!xla && report.reserved_peak_bytes > report.capacity_bytes))) {
    // PyTorch's caching allocator holds more than it hands out: a peak whose reserve does not
    // fit may still run (empty_cache, expandable segments), but not safely.
    report.verdict = Verdict::kAtRisk;
  }

  if (!describe) return report;
  auto& a = report.assumptions;
  a.push_back(fmt::format(
      "model state: {:.2f} bytes per dense {}parameter ({} weights, {} gradients{})",
      BytesPerDenseParam(job), job.training.lora.enabled ? "trainable " : "",
      // FSDP keeps only the master shard; each layer's compute copy is gathered per use.
      plan.fsdp2                                ? DTypeName(job.training.precision.main_params)
      : job.training.precision.fp8_param_gather ? "fp8"
                                                : DTypeName(job.training.precision.params),
      DTypeName(job.training.precision.main_grads),
      plan.fsdp2
          ? (plan.fsdp_replicas > 1 ? fmt::format(", HSDP: FSDP2 sharded over {} GPUs, {} replicas",
                                                  plan.FsdpShardGroup(), plan.fsdp_replicas)
                                    : (xla ? std::string(", FSDP sharded over DP x CP")
                                           : std::string(", FSDP2 sharded over DP x CP")))
          : std::string(plan.distributed_optimizer ? ", optimizer sharded over DP x CP"
                                                   : ", optimizer not sharded")));
  const PrecisionRecipe& pr = job.training.precision;
  if (pr.gemm == DType::kFP8 || pr.gemm == DType::kMXFP8 || pr.gemm == DType::kFP4) {
    const DType g = pr.gemm;
    a.push_back(fmt::format(
        "precision: transformer GEMMs in {}: {} keep their types above; each linear layer "
        "saves its input's low-precision cast (1 byte per value) for the weight gradient instead "
        "of the 16-bit tensor; {}",
        DTypeName(g),
        pr.fp8_param_gather
            ? "the weights are the fp8 primary copy (fp8_param_gather); gradients and optimizer "
              "state"
            : "weights, gradients and optimizer state",
        !te_weight_cache ? "weights are cast per use, nothing kept between micro-batches"
        : plan.fsdp2 ? "Transformer Engine's cached casts of FSDP-gathered weights are not counted"
        : job.training.lora.enabled
            ? "Transformer Engine's cached casts of the frozen LoRA base weights are not counted"
        : pr.fp8_weight_transpose_cache && pr.fp8_param_gather
            ? "Transformer Engine keeps each fp8 weight's transpose between micro-batches (the "
              "weight-copies buffer)"
        : pr.fp8_weight_transpose_cache
            ? "Transformer Engine keeps each weight's cast and its transpose between "
              "micro-batches (the weight-copies buffer)"
        : pr.fp8_param_gather
            ? "no_fp8_weight_transpose_cache: Transformer Engine keeps no copy beyond the fp8 "
              "primary weights; backward transposes them again"
            : "no_fp8_weight_transpose_cache: Transformer Engine keeps each weight's cast "
              "between micro-batches (the weight-copies buffer), not its transpose; backward "
              "transposes it again"));
  }
  if (job.training.lora.enabled) {
    const LoraSpec& l = job.training.lora;
    std::string targets;
    for (const std::string& t : l.target_modules) targets += (targets.empty() ? "" : ", ") + t;
    std::string extras;
    if (l.dropout > 0 && l.dropout_before) extras += "1-byte dropout masks";
    if (plan.sequence_parallel && plan.tp > 1) {
      extras += std::string(extras.empty() ? "" : " and ") +
                "whole-sequence inputs gathered beside column-parallel layers";
    }
    a.push_back(fmt::format(
        "LoRA rank {} on {}: base weights frozen (weights only: no main gradients or optimizer "
        "state); the adapters ({} parameters on PP rank 0's GPU, split over TP) train with the "
        "state above; activations are full training's{}",
        l.rank, targets, FormatCount(static_cast<double>(adapters.front())),
        extras.empty() ? "" : " plus the adapters' " + extras));
  }
  a.push_back(job.model.make_vocab_size_divisible_by > 0
                  ? fmt::format("vocabulary {} padded to {} (multiple of {} x TP)",
                                job.model.vocab_size, job.model.PaddedVocabSize(plan.tp),
                                job.model.make_vocab_size_divisible_by)
                  : fmt::format("vocabulary {}, not padded ({} uses vocab_size rows)",
                                job.model.vocab_size, job.framework));
  a.push_back(
      fmt::format("activations: Korthikanti et al. 2022 per tensor; {} attention{}{}",
                  job.training.flash_attention ? "flash" : "unfused (s x s scores stored)",
                  plan.sequence_parallel ? ", sequence parallel" : "",
                  job.training.hidden_dropout > 0 ? ", dropout masks stored" : ", no dropout"));
  a.push_back(fmt::format("{} micro-batch{} per iteration (GBS {} / (MBS {} x DP {}))", m,
                          m == 1 ? "" : "es", job.training.global_batch_size,
                          job.training.micro_batch_size, plan.dp));
  a.push_back(
      fmt::format("AT-RISK above {:.0f}% of HBM{}: context, allocator fragmentation and "
                  "library workspaces are not modelled in full",
                  kAtRiskFraction * 100,
                  xla ? "" : ", or where the caching allocator's reserve below exceeds HBM"));
  if (xla) {
    a.push_back(
        "JAX/XLA: no PyTorch caching allocator; XLA's buffer assignment plans the step and "
        "JAX preallocates a fraction of HBM (XLA_PYTHON_CLIENT_MEM_FRACTION), so there is no "
        "reserved-over-allocated overhead to add");
    a.push_back(job.training.xla_memory_fraction > 0
                    ? fmt::format("the step must fit in the {:.2f} GiB that JAX preallocates: "
                                  "XLA_PYTHON_CLIENT_MEM_FRACTION={:g} of {:.2f} GiB HBM",
                                  static_cast<double>(report.capacity_bytes) / kGiB,
                                  job.training.xla_memory_fraction,
                                  static_cast<double>(report.hbm_bytes) / kGiB)
                    : "XLA_PYTHON_CLIENT_MEM_FRACTION not set by the experiment: compared with "
                      "all of HBM (JAX's own default preallocates 75%; container images often "
                      "set more)");
  } else {
    a.push_back(fmt::format(
        "reserved by the caching allocator at the peak: {:.2f} GiB = peak x {:.3f} (median "
        "reserved / allocated of the training-step snapshots in the corpus; what "
        "torch.cuda.max_memory_reserved and torchtitan's memory log report)",
        static_cast<double>(report.reserved_peak_bytes) / kGiB, kCachingAllocatorReserve));
  }
  for (const auto& n : job.notes) a.push_back(n);
  return report;
}

}  // namespace sextant
