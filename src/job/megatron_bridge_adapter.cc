// Primus's Megatron-Bridge backend (framework: megatron_bridge). Its model file names a
// Megatron-Bridge recipe and a Hugging Face checkpoint (recipe, flavor, hf_path) instead of
// the model's dimensions, and its overrides are the recipe function's keyword arguments
// (primus/backends/megatron_bridge/config_utils.py calls the recipe with them). Those are
// Megatron-Core's names for the parallel sizes, batch, sequence and recompute settings, plus a
// few of the recipe's own (peft, peft_dim, precision_config, ...), which are translated here to
// the Megatron settings they stand for; the job is then built by the Megatron adapter.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "job/framework_adapter.h"
#include "job/framework_defaults.h"

namespace sextant {

const FrameworkAdapter& MegatronAdapter();

namespace {

// The recipe's own keyword arguments seen in Primus's examples
// (examples/megatron_bridge/configs/*) and Megatron-Bridge's finetune recipes; read below or
// ignored (logging, data, learning-rate schedule).
constexpr std::string_view kBridgeKeys[] = {"recipe",
                                            "flavor",
                                            "hf_path",
                                            "dataset",
                                            "dataset_name",
                                            "peft",
                                            "peft_dim",
                                            "peft_alpha",
                                            "precision_config",
                                            "comm_overlap_config",
                                            "packed_sequence",
                                            "pipeline_dtype",
                                            "finetune_lr",
                                            "pretrained_checkpoint",
                                            "wandb_project",
                                            "wandb_entity",
                                            "wandb_exp_name",
                                            "skip_save",
                                            "mock",
                                            "data_paths"};

// Megatron-Bridge's mixed-precision recipes (src/megatron/bridge/training/mixed_precision.py)
// as the Megatron settings each one sets.
struct PrecisionConfig {
  std::string_view name;
  std::string_view half;        // "bf16" or "fp16"
  std::string_view fp8;         // cfg.fp8, empty = none
  std::string_view fp8_recipe;  // cfg.fp8_recipe
  std::string_view fp4;         // cfg.fp4, empty = none
};
constexpr PrecisionConfig kPrecisionConfigs[] = {
    {"bf16_mixed", "bf16", "", "", ""},
    {"fp16_mixed", "fp16", "", "", ""},
    {"bf16_with_fp8_delayed_scaling_mixed", "bf16", "hybrid", "delayed", ""},
    {"fp16_with_fp8_delayed_scaling_mixed", "fp16", "hybrid", "delayed", ""},
    {"bf16_with_mxfp8_mixed", "bf16", "e4m3", "mxfp8", ""},
    {"fp16_with_mxfp8_mixed", "fp16", "e4m3", "mxfp8", ""},
    {"bf16_with_fp8_current_scaling_mixed", "bf16", "hybrid", "tensorwise", ""},
    {"fp16_with_fp8_current_scaling_mixed", "fp16", "hybrid", "tensorwise", ""},
    {"bf16_with_fp8_subchannel_scaling_mixed", "bf16", "hybrid", "blockwise", ""},
    {"fp16_with_fp8_subchannel_scaling_mixed", "fp16", "hybrid", "blockwise", ""},
    {"bf16_with_nvfp4_mixed", "bf16", "", "", "e2m1"},
};

// The recipe registers each name with hyphens too ("bf16-mixed").
const PrecisionConfig* FindPrecisionConfig(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  for (const PrecisionConfig& p : kPrecisionConfigs) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// The Hugging Face repository's model name: "Qwen/Qwen3-8B" -> "Qwen3-8B".
std::string RepositoryName(const std::string& hf_path) {
  const size_t slash = hf_path.find_last_of('/');
  return slash == std::string::npos ? hf_path : hf_path.substr(slash + 1);
}

class MegatronBridge final : public FrameworkAdapter {
 public:
  std::string_view Name() const override { return "megatron_bridge"; }

  std::string ParallelKey(ParallelAxis axis) const override {
    return MegatronAdapter().ParallelKey(axis);
  }

  std::vector<std::string> KnownKeys() const override {
    std::vector<std::string> keys = MegatronAdapter().KnownKeys();
    keys.insert(keys.end(), std::begin(kBridgeKeys), std::end(kBridgeKeys));
    return keys;
  }

  void Build(AdapterContext& ctx, Job& job) const override {
    const ConfigReader& c = ctx.config;
    const SourceLocation model_where{ctx.module.model_file.empty() ? ctx.module.experiment_file
                                                                   : ctx.module.model_file};
    const std::string hf_path = c.String("hf_path", "");
    std::vector<std::string> names;
    if (!hf_path.empty()) names = {hf_path, RepositoryName(hf_path)};
    names.push_back(ctx.module.model_stem);
    const ModelEntry& library = FindLibraryModel(names, model_where, "hf_path");
    RequireSupportedArchitecture(library.spec, "model library entry", model_where);
    if (!hf_path.empty() && FindModel(hf_path) == nullptr &&
        FindModel(RepositoryName(hf_path)) == nullptr) {
      ctx.notes.push_back(fmt::format(
          "hf_path {} is not in Sextant's model library: the model is {}, by the model file's "
          "name {}",
          hf_path.size() > 80 ? hf_path.substr(0, 80) + "..." : hf_path, library.spec.name,
          ctx.module.model_stem));
    }

    // The recipe's settings as Megatron's: a copy of the configuration with the translations
    // added, each located where its recipe key was written.
    ConfigNode translated = c.Root();
    std::vector<std::string> said;
    TranslatePrecision(c, translated, said);
    TranslatePeft(c, translated, said);
    ApplyRecipeDefaults(c, translated, said);

    ModuleConfig module = ctx.module;
    module.model_file.clear();  // the dimensions come from the library entry
    module.model_stem = library.spec.name;
    AdapterContext megatron{.module = module,
                            .config = ConfigReader(translated),
                            .architecture = ctx.architecture,
                            .provenance = ctx.provenance,
                            .notes = ctx.notes};
    megatron.gpus_per_node = ctx.gpus_per_node;
    megatron.requested_nodes = ctx.requested_nodes;
    megatron.library_model_origin = fmt::format(
        "{} ({}) from Sextant's model library: Megatron-Bridge builds it from the checkpoint's "
        "config",
        library.spec.name, hf_path.empty() ? ctx.module.model_reference : hf_path);
    MegatronAdapter().Build(megatron, job);
    ctx.fixed_data_parallel = megatron.fixed_data_parallel;
    ctx.fixed_data_parallel_key = megatron.fixed_data_parallel_key;
    ctx.global_batch_per_data_rank = megatron.global_batch_per_data_rank;
    ctx.global_batch_per_device = megatron.global_batch_per_device;
    ctx.allow_uneven_layers = megatron.allow_uneven_layers;
    ctx.micro_batches_per_step = megatron.micro_batches_per_step;
    ctx.pipeline_local_batch = megatron.pipeline_local_batch;

    for (const std::string& s : said) ctx.notes.push_back(s);
    if (c.Bool("packed_sequence", false)) {
      ctx.notes.push_back(
          "packed_sequence true: projected as full sequences; attention within each packed "
          "sample (less work than over the whole sequence) is not modelled");
    }
    const std::string recipe = c.String("recipe", "");
    const std::string flavor = c.String("flavor", "");
    ctx.notes.push_back(fmt::format(
        "Megatron-Bridge recipe {}{}{} is Python and not read: what it sets and the experiment "
        "does not (recompute, fusions, parallel sizes) takes Megatron-Core's defaults",
        recipe.empty() ? "(none named)" : recipe, flavor.empty() ? "" : ".", flavor));
  }

 private:
  // What every Megatron-Bridge recipe's ConfigContainer sets (src/megatron/bridge/recipes/
  // common.py: DistributedDataParallelConfig(use_distributed_optimizer=True,
  // overlap_grad_reduce=True, overlap_param_gather=True)), from the framework-defaults table,
  // and its model providers' fused cross-entropy, where the experiment leaves them unset:
  // Megatron-Core's own argument defaults are off.
  static void ApplyRecipeDefaults(const ConfigReader& c, ConfigNode& out,
                                  std::vector<std::string>& said) {
    const FrameworkDefaults& bridge = DefaultsForFramework("megatron_bridge");
    const SourceLocation where{"Megatron-Bridge recipe default"};
    std::vector<std::string> applied;
    auto fill = [&](std::string_view key, bool value) {
      if (c.Find(key) != nullptr) return;
      out.SetPath(key, ConfigNode::Scalar(value ? "true" : "false", where));
      applied.push_back(fmt::format("{} {}", key, value));
    };
    fill("use_distributed_optimizer", bridge.distributed_optimizer);
    fill("overlap_grad_reduce", bridge.overlap_grad_reduce);
    fill("overlap_param_gather", bridge.overlap_param_gather);
    // GPTModelProvider.cross_entropy_loss_fusion = True (src/megatron/bridge/models/
    // gpt_provider.py).
    fill("cross_entropy_loss_fusion", bridge.cross_entropy_loss_fusion);
    if (!applied.empty()) {
      said.push_back(fmt::format("Megatron-Bridge recipe defaults: {}", fmt::join(applied, ", ")));
    }
  }

  static void TranslatePrecision(const ConfigReader& c, ConfigNode& out,
                                 std::vector<std::string>& said) {
    if (!c.IsSet("precision_config")) return;
    const std::string name = c.String("precision_config", "");
    const PrecisionConfig* p = FindPrecisionConfig(name);
    if (p == nullptr) {
      std::vector<std::string> known;
      for (const PrecisionConfig& q : kPrecisionConfigs) known.emplace_back(q.name);
      c.Fail("precision_config",
             fmt::format("unknown mixed-precision recipe \"{}\" (Megatron-Bridge's: {})", name,
                         fmt::join(known, ", ")));
    }
    const SourceLocation where = c.Where("precision_config");
    auto set = [&](std::string_view key, std::string_view value) {
      out.SetPath(key, ConfigNode::Scalar(std::string(value), where));
    };
    set("bf16", p->half == "bf16" ? "true" : "false");
    set("fp16", p->half == "fp16" ? "true" : "false");
    if (!p->fp8.empty()) {
      set("fp8", p->fp8);
      set("fp8_recipe", p->fp8_recipe);
    }
    if (!p->fp4.empty()) set("fp4", p->fp4);
    said.push_back(fmt::format("precision_config {}: {}{}{}", name, p->half,
                               p->fp8.empty() ? "" : fmt::format(", fp8 {}", p->fp8_recipe),
                               p->fp4.empty() ? "" : ", fp4 GEMMs"));
  }

  // peft: "lora" / "dora" builds Megatron-Bridge's LoRA (src/megatron/bridge/peft/lora.py:
  // dim 32, alpha 32, dropout 0, on linear_qkv, linear_proj, linear_fc1, linear_fc2, the same
  // defaults as Primus's Megatron LoRA); peft_dim / peft_alpha set its rank and alpha.
  static void TranslatePeft(const ConfigReader& c, ConfigNode& out,
                            std::vector<std::string>& said) {
    if (!c.IsSet("peft")) {
      for (std::string_view key : {"peft_dim", "peft_alpha"}) {
        if (c.IsSet(key)) {
          said.push_back(fmt::format("{} has no effect without peft", key));
        }
      }
      return;
    }
    std::string scheme = c.String("peft", "");
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (scheme == "none" || scheme.empty()) return;
    if (scheme != "lora" && scheme != "dora") {
      c.Fail("peft", fmt::format("unknown scheme \"{}\" (lora, dora or none)", scheme));
    }
    const SourceLocation where = c.Where("peft");
    out.SetPath("lora.enabled", ConfigNode::Scalar("true", where));
    out.SetPath("stage", ConfigNode::Scalar("sft", where));
    if (c.IsSet("peft_dim")) {
      out.SetPath("lora.dim", ConfigNode::Scalar(c.String("peft_dim", ""), c.Where("peft_dim")));
    }
    if (c.IsSet("peft_alpha")) {
      out.SetPath("lora.alpha",
                  ConfigNode::Scalar(c.String("peft_alpha", ""), c.Where("peft_alpha")));
    }
    if (scheme == "dora") {
      said.push_back(
          "peft dora projected as LoRA: DoRA's per-column weight norm and magnitude vector "
          "(one more pass over each adapted weight) are not modelled");
    }
  }
};

}  // namespace

const FrameworkAdapter& MegatronBridgeAdapter() {
  static const MegatronBridge adapter;
  return adapter;
}

}  // namespace sextant
