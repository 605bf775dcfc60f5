// TorchTitan job configs (TOML, or a Primus experiment YAML with the same sections).
// Key names: torchtitan/config/job_config.py.
#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "job/framework_adapter.h"
#include "job/framework_defaults.h"
#include "job/torchtitan_schedules.h"
#include "parallel/pipeline_layout.h"
#include "util/checked_math.h"
#include "util/close_matches.h"
#include "util/dtype.h"

namespace sextant {
namespace {

constexpr std::string_view kTorchTitanKeys[] = {
    "model.name", "model.flavor", "model.hf_assets_path", "model.converters",
    "training.local_batch_size", "training.global_batch_size", "training.seq_len",
    "training.mixed_precision_param", "training.mixed_precision_reduce", "training.steps",
    "parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree",
    "parallelism.tensor_parallel_degree", "parallelism.pipeline_parallel_degree",
    "parallelism.context_parallel_degree", "parallelism.expert_parallel_degree",
    "parallelism.expert_tensor_parallel_degree", "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_schedule", "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers", "activation_checkpoint.mode",
    "activation_checkpoint.selective_ac_option",
    "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns", "optimizer.name",
    "compile.enable", "training.compile", "use_turbo_deepep",
    // The rest of torchtitan's JobConfig fields of these sections (config/job_config.py):
    // accepted as it accepts them; those that change memory or time but are not modelled are
    // named in the projection's notes (kUnmodelledKeys).
    "model.tokenizer_path", "model.print_after_conversion", "training.dataset",
    "training.dataset_path", "training.max_norm", "training.enable_cpu_offload", "training.dtype",
    "training.gc_freq", "training.gc_debug", "training.dataloader",
    "parallelism.fsdp_reshard_after_forward", "parallelism.disable_loss_parallel",
    "parallelism.enable_async_tensor_parallel", "parallelism.module_fqns_per_model_part",
    "parallelism.pipeline_parallel_schedule_csv",
    "parallelism.pipeline_parallel_expert_parallel_overlap",
    "parallelism.context_parallel_load_balancer", "parallelism.context_parallel_rotate_method",
    "parallelism.expert_parallel_comm_backend", "activation_checkpoint.early_stop",
    "activation_checkpoint.memory_budget", "activation_checkpoint.visualize_memory_budget_pareto",
    "activation_checkpoint.preserve_rng_state", "activation_checkpoint.determinism_check",
    "activation_checkpoint.debug", "compile.components", "compile.backend",
    // --sync-free-stage (Primus Turbo's Megatron
    // backend; here its DeepEP alone)
    "turbo_sync_free_moe_stage"};

// JobConfig settings that change memory or step time in ways the projection does not model,
// with the value that leaves the projection exact.
struct UnmodelledKey {
  std::string_view key, neutral, effect;
};
constexpr UnmodelledKey kUnmodelledKeys[] = {
    {"parallelism.fsdp_reshard_after_forward", "default",
     "gathered parameters kept between forward and backward"},
    {"training.enable_cpu_offload", "false",
     "parameters, gradients and optimizer state in host "
     "memory"},
    {"parallelism.enable_async_tensor_parallel", "false", "TP collectives overlapped with GEMMs"},
    {"parallelism.disable_loss_parallel", "false", "the loss computed on gathered logits"},
    {"parallelism.pipeline_parallel_expert_parallel_overlap", "false",
     "expert all-to-all overlapped across pipeline micro-batches"},
    {"activation_checkpoint.early_stop", "false", "recompute stopped early in backward"},
};

std::string StripSuffix(std::string text, std::string_view suffix) {
  if (text.size() > suffix.size() && text.ends_with(suffix))
    text.resize(text.size() - suffix.size());
  return text;
}

// torchtitan's own TOML: its JobConfig refuses a field it does not define ("Invalid field
// names"). In the sections whose every field Sextant knows (kTorchTitanKeys), a typo would
// otherwise be ignored and the projection made with the default. A warning, not an error:
// another torchtitan version may define fields this one does not.
void WarnAboutUnknownFields(const AdapterContext& ctx, Job& job) {
  if (!ctx.module.experiment_file.ends_with(".toml")) return;
  static const std::set<std::string, std::less<>> kFullyKnown = {
      "model", "training", "parallelism", "activation_checkpoint", "compile"};
  std::vector<std::string> known(std::begin(kTorchTitanKeys), std::end(kTorchTitanKeys));
  size_t unknown = 0;
  for (const ConfigField& section : ctx.module.overrides.fields) {
    if (!kFullyKnown.contains(section.first) || !section.second.IsMap()) continue;
    for (const ConfigField& field : section.second.fields) {
      const std::string key = section.first + "." + field.first;
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      if (++unknown > kMaxWarningsOfOneKind) continue;  // counted, not listed
      const SourceLocation where = ctx.config.Where(key);
      job.warnings.push_back(fmt::format(
          "{}{}: not a field of torchtitan's [{}] (its JobConfig refuses it as an invalid "
          "field name); ignored{}",
          where.file.empty() ? "" : where.ToString() + ": ", ShortText(key), section.first,
          DidYouMean(ClosestNames(key, known))));
    }
  }
  if (unknown > kMaxWarningsOfOneKind) {
    job.warnings.push_back(
        fmt::format("... and {} more fields torchtitan's JobConfig does not define; ignored",
                    unknown - kMaxWarningsOfOneKind));
  }
}

class TorchTitan final : public FrameworkAdapter {
 public:
  std::string_view Name() const override { return "torchtitan"; }

  // torchtitan's float8 training is a model converter (components/quantization).
  std::string Fp8Override() const override { return "model.converters quantize.linear.float8"; }
  std::string ParallelKey(ParallelAxis axis) const override {
    switch (axis) {
      case ParallelAxis::kTensor: return "parallelism.tensor_parallel_degree";
      case ParallelAxis::kPipeline: return "parallelism.pipeline_parallel_degree";
      case ParallelAxis::kExpert: return "parallelism.expert_parallel_degree";
      case ParallelAxis::kContext: return "parallelism.context_parallel_degree";
    }
    return "";
  }

  std::vector<std::string> KnownKeys() const override {
    return std::vector<std::string>(std::begin(kTorchTitanKeys), std::end(kTorchTitanKeys));
  }

  void Build(AdapterContext& ctx, Job& job) const override {
    const ConfigReader& c = ctx.config;
    WarnAboutUnknownFields(ctx, job);
    auto track = [&](std::string canonical, std::string_view key) {
      if (c.Find(key) != nullptr)
        ctx.provenance.Record(std::move(canonical), std::string(key), c.Where(key));
    };

    // Model: TorchTitan names a model family and a flavor; the dimensions live in
    // TorchTitan's code, so they come from Sextant's library.
    const std::string name = c.String("model.name", "");
    const std::string flavor = c.String("model.flavor", "");
    const std::string hf_path = c.String("model.hf_assets_path", "");
    if (name.empty()) c.Fail("model.name", "missing: TorchTitan needs model.name and model.flavor");
    const std::string hf_name = std::filesystem::path(hf_path).filename().string();
    // torchtitan builds the model from model.name's flavor table alone (train.py:
    // model_args[job_config.model.flavor]); hf_assets_path only points at the tokenizer and
    // checkpoint. So a flavor decides the dimensions, and one the library does not know is
    // refused rather than replaced by the checkpoint's or the Primus model file's name.
    if (!flavor.empty() && FindModel(name + "_" + flavor) == nullptr &&
        FindModel(name + flavor) == nullptr) {
      const std::vector<std::string> similar = SimilarModelNames(name + "_" + flavor);
      c.Fail("model.flavor",
             fmt::format(
                 "{} flavor \"{}\" is not in Sextant's model library (torchtitan builds "
                 "the model from the flavor){}",
                 ShortText(name), ShortText(flavor),
                 similar.empty() ? "" : fmt::format("; similar: {}", fmt::join(similar, ", "))));
    }
    const ModelEntry& entry =
        flavor.empty()
            ? FindLibraryModel({StripSuffix(ctx.module.model_stem, "-fp8"), hf_name, name},
                               c.Where("model.name"), "model.name")
            : FindLibraryModel({name + "_" + flavor, name + flavor}, c.Where("model.flavor"),
                               "model.flavor");
    RequireSupportedArchitecture(entry.spec, "", c.Where("model.name"));
    job.model = entry.spec;
    job.model.make_vocab_size_divisible_by = DefaultsForFramework("torchtitan").vocab_multiple;
    ctx.notes.push_back(fmt::format("TorchTitan model {} flavor {}: dimensions of library entry {}",
                                    name, flavor, entry.spec.name));

    // Parallelism.
    ParallelPlan& p = job.parallel;
    auto degree = [&](std::string_view key, int fallback) {
      return static_cast<int>(c.SizeInt(key, fallback, kParallelDegreeRange));
    };
    p.tp = degree("parallelism.tensor_parallel_degree", 1);
    p.pp = degree("parallelism.pipeline_parallel_degree", 1);
    p.cp = degree("parallelism.context_parallel_degree", 1);
    p.ep = degree("parallelism.expert_parallel_degree", 1);
    p.etp = degree("parallelism.expert_tensor_parallel_degree", 1);
    track("tensor_model_parallel_size", "parallelism.tensor_parallel_degree");
    track("pipeline_model_parallel_size", "parallelism.pipeline_parallel_degree");
    track("context_parallel_size", "parallelism.context_parallel_degree");
    track("expert_model_parallel_size", "parallelism.expert_parallel_degree");
    track("expert_tensor_parallel_size", "parallelism.expert_tensor_parallel_degree");
    // torchtitan's ParallelDims: etp must be 1 (experts whole) or equal to tp.
    if (p.etp != 1 && p.etp != p.tp) {
      c.Fail("parallelism.expert_tensor_parallel_degree",
             fmt::format("must be 1 or the tensor_parallel_degree ({}), found {}", p.tp, p.etp));
    }
    p.sequence_parallel =
        p.tp > 1;  // TorchTitan's TP plan always shards norms/dropout over the sequence
    const int replicate = degree("parallelism.data_parallel_replicate_degree", 1);
    track("data_parallel_replicate_degree", "parallelism.data_parallel_replicate_degree");
    const int64_t shard = c.Int("parallelism.data_parallel_shard_degree", -1);
    if (shard == 0 || shard < -1 || shard > kParallelDegreeRange.max) {
      c.Fail("parallelism.data_parallel_shard_degree", "must be -1 (fill) or a positive integer");
    }
    if (shard == -1) {
      // Filled from the world size; FSDP whenever the shard group has more than one GPU.
      p.fsdp2 = true;
      p.fsdp_replicas = replicate;  // HSDP: the shard degree is what the replicas leave
      ctx.fixed_data_parallel = 0;
    } else {
      p.fsdp2 = shard > 1;
      // HSDP: shard groups of `shard` GPUs, replicated `replicate` times (without sharding,
      // replicate alone is DDP).
      if (p.fsdp2) p.fsdp_replicas = replicate;
      const std::optional<int64_t> dp = CheckedMul(shard, replicate);
      if (!dp || *dp > kParallelDegreeRange.max) {
        c.Fail("parallelism.data_parallel_shard_degree",
               fmt::format("{} x data_parallel_replicate_degree {} is more than {} GPUs", shard,
                           replicate, kParallelDegreeRange.max));
      }
      ctx.fixed_data_parallel = static_cast<int>(*dp);
      ctx.fixed_data_parallel_key =
          "parallelism.data_parallel_shard_degree x parallelism.data_parallel_replicate_degree";
    }
    // Stages per pipeline rank and the schedule, as torchtitan's pipeline_parallel.py decides
    // them: a single-stage schedule (1F1B, GPipe) runs one stage per rank, a multi-stage one
    // two unless pipeline_parallel_layers_per_stage says otherwise; with it, the stage count is
    // ceil((layers + first_stage_less_layers + last_stage_less_layers) / layers_per_stage).
    const std::string schedule = c.String("parallelism.pipeline_parallel_schedule", "1F1B");
    const TorchTitanSchedule* chosen = FindTorchTitanSchedule(schedule);
    if (chosen == nullptr) {
      c.Fail("parallelism.pipeline_parallel_schedule",
             fmt::format("unknown schedule \"{}\" ({})", schedule, [] {
               std::string names;
               for (const TorchTitanSchedule& t : TorchTitanSchedules())
                 names += (names.empty() ? "" : ", ") + std::string(t.name);
               return names;
             }()));
    }
    if (p.pp > 1) {
      int stages_per_rank = chosen->multi_stage ? 2 : 1;
      if (c.IsSet("parallelism.pipeline_parallel_layers_per_stage")) {
        const int64_t per_stage = degree("parallelism.pipeline_parallel_layers_per_stage", 1);
        const int64_t first_less =
            c.Int("parallelism.pipeline_parallel_first_stage_less_layers", 1);
        const int64_t last_less = c.Int("parallelism.pipeline_parallel_last_stage_less_layers", 1);
        const int64_t stages =
            (job.model.num_layers + first_less + last_less + per_stage - 1) / per_stage;
        if (stages % p.pp != 0) {
          c.Fail("parallelism.pipeline_parallel_layers_per_stage",
                 fmt::format("{} layers (+{} +{} for the embedding and the output) in stages of "
                             "{} make {} stages, which {} pipeline ranks do not share evenly",
                             job.model.num_layers, first_less, last_less, per_stage, stages, p.pp));
        }
        stages_per_rank = static_cast<int>(stages / p.pp);
        if (!chosen->multi_stage && stages_per_rank != 1) {
          c.Fail("parallelism.pipeline_parallel_layers_per_stage",
                 fmt::format("{} stages per rank, but {} runs exactly one", stages_per_rank,
                             chosen->name));
        }
        if (chosen->multi_stage && stages_per_rank < 2) {
          c.Fail("parallelism.pipeline_parallel_layers_per_stage",
                 fmt::format("1 stage per rank, but {} needs at least two", chosen->name));
        }
        track("virtual_pipeline_model_parallel_size",
              "parallelism.pipeline_parallel_layers_per_stage");
      } else if (chosen->multi_stage) {
        ctx.notes.push_back(
            fmt::format("{}: 2 stages per pipeline rank, torchtitan's default without "
                        "parallelism.pipeline_parallel_layers_per_stage",
                        chosen->name));
      }
      p.vpp = stages_per_rank;
      // torchtitan weighs the embedding and the output as first/last_stage_less_layers layers
      // and splits the rest over the stages, the first stages taking the remainder: the
      // equivalent layout string wherever that is not Sextant's even split.
      // The V schedules (ZBVZeroBubble, DualPipeV) split the same way over their 2 x PP stages,
      // which are then placed down and back up the ranks.
      const int64_t stages = int64_t{p.pp} * p.vpp;
      {
        const int64_t input_weight =
            c.Int("parallelism.pipeline_parallel_first_stage_less_layers", 1);
        const int64_t output_weight =
            c.Int("parallelism.pipeline_parallel_last_stage_less_layers", 1);
        const std::string layout =
            TorchTitanPipelineLayout(job.model.num_layers, stages, input_weight, output_weight);
        const bool even = job.model.num_layers % stages == 0 &&
                          layout == TorchTitanPipelineLayout(job.model.num_layers, stages, 0, 0);
        if (layout.empty() && job.model.num_layers % stages != 0) {
          c.Fail("parallelism.pipeline_parallel_degree",
                 fmt::format("{} layers (+{} +{} for the embedding and the output) cannot be "
                             "split over {} pipeline stages",
                             job.model.num_layers, input_weight, output_weight, stages));
        }
        if (!layout.empty() && !even) {
          p.layout = layout;
          ctx.notes.push_back(fmt::format(
              "{} layers over {} pipeline stages, the embedding and the output weighing {} and "
              "{} layers (torchtitan's split): layout {}",
              job.model.num_layers, stages, input_weight, output_weight, p.layout));
        }
      }
      if (chosen->approximate) {
        // torchtitan places InterleavedZeroBubble's stages looped, as Interleaved1F1B's
        // (pipeline_parallel.py: "v" placement only for ZBVZeroBubble and DualPipeV).
        ctx.notes.push_back(fmt::format(
            "{} simulated as {}: the same looped stages and micro-batches in flight; its split "
            "backward's smaller bubble is not simulated, so the bubble is an upper bound",
            chosen->name, ScheduleKindName(chosen->simulated)));
      }
      job.training.pipeline_schedule = ForVirtualStages(chosen->simulated, p.vpp);
    }

    // Batch and sequence.
    TrainingSettings& t = job.training;
    t.seq_length = c.SizeInt("training.seq_len", 2048, *SizeRangeOf("seq_length"));
    job.model.seq_length = t.seq_length;
    track("seq_length", "training.seq_len");
    const int64_t local_batch =
        c.SizeInt("training.local_batch_size", 8, *SizeRangeOf("micro_batch_size"));
    // -1 (TorchTitan's default) = local batch x DP.
    const int64_t global_batch =
        c.SizeInt("training.global_batch_size", -1, {-1, SizeRangeOf("global_batch_size")->max});
    if (global_batch == 0) {
      c.Fail("training.global_batch_size", "must be -1 (local batch x DP) or positive, found 0");
    }
    t.micro_batch_size = p.pp > 1 ? c.SizeInt("parallelism.pipeline_parallel_microbatch_size", 1,
                                              *SizeRangeOf("micro_batch_size"))
                                  : local_batch;
    track("micro_batch_size",
          p.pp > 1 ? "parallelism.pipeline_parallel_microbatch_size" : "training.local_batch_size");
    if (global_batch > 0) {
      t.global_batch_size = global_batch;
      track("global_batch_size", "training.global_batch_size");
      if (p.pp > 1) ctx.pipeline_local_batch = local_batch;
    } else {
      t.global_batch_size = 0;
      ctx.global_batch_per_data_rank = local_batch;  // TorchTitan: local batch x DP
      track("global_batch_size", "training.local_batch_size");
    }

    for (const UnmodelledKey& u : kUnmodelledKeys) {
      if (c.Find(u.key) == nullptr) continue;
      const std::string value = c.String(u.key, std::string(u.neutral));
      if (value == u.neutral) continue;
      ctx.notes.push_back(fmt::format("{} = {} ({}): not modelled, projected as {}", u.key, value,
                                      u.effect, u.neutral));
    }

    // Activation checkpointing.
    const std::string mode = c.String("activation_checkpoint.mode", "selective");
    if (mode == "memory_budget") {
      c.Fail("activation_checkpoint.mode",
             "memory_budget (torch.compile's activation memory budget picks what to save) is not "
             "modelled: project with none, selective or full");
    }
    RecomputeSpec& r = t.recompute;
    if (mode == "full") {
      r.granularity = RecomputeGranularity::kFull;
      r.num_layers = 1;
    } else if (mode == "selective") {
      const std::string option = c.String("activation_checkpoint.selective_ac_option", "2");
      // per_op_sac_force_recompute_mm_shapes_by_fqns: the matmuls of these modules are
      // recomputed although op-level AC would save them (torchtitan/distributed/
      // activation_checkpoint.py). Listing every linear of the block leaves op-level AC saving
      // little more than the attention outputs: close to full recompute.
      const std::vector<std::string> forced =
          c.StringList("activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns");
      auto listed = [&](std::string_view fqn) {
        return std::find(forced.begin(), forced.end(), fqn) != forced.end();
      };
      bool every_linear = !forced.empty();
      for (std::string_view fqn : {"attention.wq", "attention.wk", "attention.wv", "attention.wo",
                                   "feed_forward.w1", "feed_forward.w2", "feed_forward.w3"}) {
        every_linear = every_linear && listed(fqn);
      }
      if (option == "op" && every_linear) {
        r.granularity = RecomputeGranularity::kFull;
        r.num_layers = 1;
        ctx.notes.push_back(
            "TorchTitan op-level checkpointing with every linear layer in "
            "per_op_sac_force_recompute_mm_shapes_by_fqns projected as full recompute (the "
            "attention outputs op-level AC still saves are not counted)");
      } else if (option == "op") {
        // torchtitan's per-op policy (distributed/activation_checkpoint.py _save_list): the
        // attention outputs and every other matmul output are saved, the rest recomputed.
        r.granularity = RecomputeGranularity::kSelective;
        r.per_op_policy = true;
        ctx.notes.push_back(
            "TorchTitan op-level selective checkpointing: attention outputs and every other "
            "matmul output saved, the rest recomputed in backward");
        if (!forced.empty()) {
          ctx.notes.push_back(
              "per_op_sac_force_recompute_mm_shapes_by_fqns names only some linear layers: "
              "their forced recompute is not modelled");
        }
      } else {
        ConfigNode probe =
            ConfigNode::Scalar(option, c.Where("activation_checkpoint.selective_ac_option"));
        const int64_t every =
            ReadInt(probe, "activation_checkpoint.selective_ac_option").value_or(1);
        if (every < 1)
          c.Fail("activation_checkpoint.selective_ac_option", "must be 'op' or a positive integer");
        // Layer-level selective AC: every `every`-th block is fully recomputed.
        r.granularity = RecomputeGranularity::kFull;
        for (int64_t layer = 0; layer < job.model.num_layers; layer += every)
          r.layer_ids.push_back(layer);
      }
    } else if (mode != "none") {
      c.Fail("activation_checkpoint.mode",
             fmt::format("unknown mode \"{}\" (none, selective, full)", mode));
    }

    // Precision: FSDP mixed precision keeps fp32 master weights and bf16 compute copies.
    PrecisionRecipe& precision = t.precision;
    const std::string param_dtype = c.String("training.mixed_precision_param", "bfloat16");
    const std::optional<DType> dtype = ParseDType(param_dtype);
    if (!dtype)
      c.Fail("training.mixed_precision_param", fmt::format("unknown dtype \"{}\"", param_dtype));
    precision.params = *dtype;
    precision.gemm = *dtype;
    // Converter names: torchtitan's "float8" / "mx" and their quantize.linear.* /
    // quantize.grouped_mm.* spellings, and Primus's "primus_turbo" (kernels, no dtype).
    std::vector<std::string> low_precision;
    for (std::string converter : c.StringList("model.converters")) {
      std::erase_if(converter, [](char ch) {
        return ch == '[' || ch == ']' || ch == '"' || ch == '\'' || ch == ' ';
      });
      if (converter.empty() || converter == "primus_turbo") continue;
      const bool fp8 = converter == "float8" || converter.ends_with(".float8");
      const bool mx = converter == "mx" || converter.ends_with(".mx");
      if ((fp8 || mx) && converter.starts_with("quantize.grouped_mm.")) {
        // Only the MoE experts' grouped matmuls (torchtitan components/quantization: the
        // grouped_mm converters swap GroupedExperts, the linear ones nn.Linear).
        if (!job.model.IsMoe()) {
          ctx.notes.push_back(fmt::format(
              "model.converters: \"{}\" converts MoE expert matmuls; {} has none: no effect",
              converter, job.model.name));
          continue;
        }
        precision.expert_gemm = fp8 ? DType::kFP8 : DType::kMXFP8;
        if (fp8) precision.fp8_current_scaling = true;
        continue;
      }
      if (fp8) {
        // torchao's default float8 recipe scales each tensor dynamically (tensorwise).
        precision.gemm = DType::kFP8;
        precision.fp8_current_scaling = true;
        low_precision.push_back(converter);
      } else if (mx) {
        precision.gemm = DType::kMXFP8;
        precision.fp8_current_scaling = false;
        low_precision.push_back(converter);
      } else {
        ctx.notes.push_back(fmt::format(
            "model.converters: \"{}\" ({}) is not a converter Sextant models (float8, mx, "
            "quantize.linear.float8, quantize.linear.mx, quantize.grouped_mm.float8, "
            "quantize.grouped_mm.mx, primus_turbo): projected without it",
            converter, c.Where("model.converters").ToString()));
      }
    }
    // The linear converters swap nn.Linear modules; the MoE experts are GroupedExperts
    // parameters, which keep the parameter dtype unless a grouped_mm converter or Primus
    // Turbo's FP8 grouped GEMM (primus_turbo.use_turbo_grouped_mm with use_moe_fp8, Primus
    // backends/torchtitan/patches/turbo/moe_grouped_mm_patches.py) converts them.
    if (job.model.IsMoe() && !precision.expert_gemm && precision.gemm != *dtype) {
      const bool turbo_fp8_experts = c.Bool("primus_turbo.enable_primus_turbo", false) &&
                                     c.Bool("primus_turbo.use_turbo_grouped_mm", false) &&
                                     c.Bool("primus_turbo.use_moe_fp8", true);
      precision.expert_gemm = turbo_fp8_experts ? DType::kFP8 : *dtype;
    }
    if (low_precision.size() > 1) {
      // Applied in order, each swapping the Linear layers the previous one produced.
      ctx.notes.push_back(fmt::format(
          "model.converters: {} low-precision converters ({}): projected with the last, {}",
          low_precision.size(), fmt::join(low_precision, ", "), low_precision.back()));
    }
    const std::string optimizer = c.String("optimizer.name", "AdamW");
    if (optimizer != "AdamW" && optimizer != "Adam") {
      c.Fail("optimizer.name",
             fmt::format("unsupported optimizer \"{}\" (AdamW or Adam)", optimizer));
    }
    t.optimizer = OptimizerKind::kAdam;
    t.flash_attention = true;
    // torch.compile fuses the element-wise ops (compile.enable; training.compile before
    // 2025); torchtitan's default is eager.
    t.fused_elementwise = c.Bool("compile.enable", c.Bool("training.compile", false));
    // compile.components (default model and loss): the compiled model rematerialises its
    // pointwise outputs; the compiled loss fuses the fp32 upcast into the cross-entropy.
    std::vector<std::string> components = c.StringList("compile.components");
    for (const std::string& what : components) {
      if (what != "model" && what != "loss") {
        c.Fail("compile.components",
               fmt::format("\"{}\" is not a component torchtitan compiles (model, loss)", what));
      }
    }
    if (!c.IsSet("compile.components")) components = {"model", "loss"};
    auto compiled = [&](const char* what) {
      return t.fused_elementwise &&
             std::find(components.begin(), components.end(), what) != components.end();
    };
    t.compiled_graph = compiled("model");
    if (compiled("loss")) t.cross_entropy_loss_fusion = true;
    ctx.notes.push_back(
        t.fused_elementwise
            ? fmt::format("torch.compile on ({}): element-wise ops fused{}{}",
                          c.IsSet("compile.enable") ? "compile.enable" : "training.compile",
                          t.compiled_graph ? "; norm outputs and the MLP activation product "
                                             "recomputed in backward, not stored"
                                           : "",
                          compiled("loss") ? "; the loss fused with its fp32 upcast" : "")
            : "eager (no torch.compile): each element-wise op is its own kernel with fp32 "
              "up-casts, and its output is stored for backward");
    // --enable-deepep / --sync-free-stage arrive as this Primus Turbo key.
    t.deepep = c.Bool("use_turbo_deepep", false);
    t.ep_overlap = t.deepep;  // Primus Turbo's DeepEP, as Primus's projection models it
    t.moe_permutation =
        MoePermutationFor(DefaultsForFramework("torchtitan"), job.model.name, t.deepep);
  }
};

}  // namespace

const FrameworkAdapter& TorchTitanAdapter() {
  static const TorchTitan adapter;
  return adapter;
}

}  // namespace sextant
