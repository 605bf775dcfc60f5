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
#include "util/close_matches.h"

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
  std::string_view half;          // "bf16" or "fp16"
  std::string_view fp8;           // cfg.fp8, empty = none
  std::string_view fp8_recipe;    // cfg.fp8_recipe
  std::string_view fp4;           // cfg.fp4, empty = none
  bool fp8_param_gather = false;  // cfg.fp8_param_gather: the weights themselves in FP8
};
constexpr PrecisionConfig kPrecisionConfigs[] = {
    {"bf16_mixed", "bf16", "", "", ""},
    {"fp16_mixed", "fp16", "", "", ""},
    {"bf16_with_fp8_delayed_scaling_mixed", "bf16", "hybrid", "delayed", "", true},
    {"fp16_with_fp8_delayed_scaling_mixed", "fp16", "hybrid", "delayed", "", true},
    {"bf16_with_mxfp8_mixed", "bf16", "e4m3", "mxfp8", "", true},
    {"fp16_with_mxfp8_mixed", "fp16", "e4m3", "mxfp8", "", true},
    {"bf16_with_fp8_current_scaling_mixed", "bf16", "hybrid", "tensorwise", "", true},
    {"fp16_with_fp8_current_scaling_mixed", "fp16", "hybrid", "tensorwise", "", true},
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

// What the recipe functions of Primus's Megatron-Bridge examples set beyond the settings
// every recipe shares, read from Megatron-Bridge @101f516 (2025-11-10):
// src/megatron/bridge/recipes/qwen/qwen3.py (qwen3_32b_pretrain_config: enable_recompute;
// qwen3_32b_finetune_config: recompute full / uniform / 1), recipes/llama/llama3.py (the LoRA
// branch of llama3_8b_finetune_config: dim 8, alpha 16; of llama31_70b_finetune_config: dim 16,
// alpha 32; both without the distributed optimizer and the fused cross-entropy) and
// recipes/qwen/qwen3_moe.py (qwen3_30b_a3b_finetune_config's LoRA: dim 8, alpha 16 on
// linear_qkv and linear_proj). Their parallel sizes are not listed: Primus's examples set them.
struct RecipeFacts {
  std::string_view flavor;
  bool recompute_full = false;  // full, uniform, one layer per chunk
  int lora_dim = 0;             // 0: LoRA's own default
  int lora_alpha = 0;
  std::string_view lora_targets;  // comma list; empty: LoRA's default four
  bool lora_without_distributed_optimizer = false;
  bool lora_without_loss_fusion = false;
};
constexpr RecipeFacts kRecipeFacts[] = {
    {"qwen3_32b_pretrain_config", true, 0, 0, "", false, false},
    {"qwen3_32b_finetune_config", true, 0, 0, "", false, false},
    {"llama3_8b_finetune_config", false, 8, 16, "", true, true},
    {"llama31_70b_finetune_config", false, 16, 32, "", true, true},
    {"qwen3_30b_a3b_finetune_config", false, 8, 16, "linear_qkv,linear_proj", false, false},
    // Read and found to set nothing beyond the shared settings (LoRA's own defaults).
    {"qwen3_8b_pretrain_config", false, 0, 0, "", false, false},
    {"qwen3_8b_finetune_config", false, 0, 0, "", false, false},
};

const RecipeFacts* FindRecipeFacts(std::string_view flavor) {
  for (const RecipeFacts& r : kRecipeFacts) {
    if (r.flavor == flavor) return &r;
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
    // The checkpoint names the model; only a model file without one is taken by its own name.
    std::vector<std::string> names;
    if (!hf_path.empty()) {
      std::string repository = RepositoryName(hf_path);
      names = {hf_path, repository};
      // Hugging Face's "-hf" marks a checkpoint converted to its format (Llama-2-70b-hf);
      // Meta names its Llama 3.1 repositories "Meta-Llama-3.1-70B".
      if (repository.size() > 3 &&
          EqualsIgnoringCase(repository.substr(repository.size() - 3), "-hf")) {
        repository.resize(repository.size() - 3);
        names.push_back(repository);
      }
      if (repository.size() > 5 && EqualsIgnoringCase(repository.substr(0, 5), "meta-")) {
        names.push_back(repository.substr(5));
      }
    } else if (!ctx.module.model_stem.empty()) {
      names = {ctx.module.model_stem};
    }
    const ModelEntry* found = nullptr;
    for (const std::string& name : names) {
      if ((found = FindModel(name)) != nullptr) break;
    }
    if (found == nullptr) {
      const std::string shown = names.empty() ? std::string("(no model named)")
                                              : fmt::format("{}", fmt::join(names, ", "));
      const std::vector<std::string> similar =
          names.empty() ? std::vector<std::string>{} : SimilarModelNames(names.back());
      ThrowUserError(
          model_where, hf_path.empty() ? "model" : "hf_path",
          fmt::format(
              "{}not in Sextant's model library (tried {}){}. Megatron-Bridge builds the "
              "model from the checkpoint's config, which is not read here; a model the "
              "library lacks is added to it (docs/CONTRIBUTING.md)",
              hf_path.empty() ? "the model file names no hf_path, and its name is " : "",
              shown.size() > 200 ? shown.substr(0, 200) + "..." : shown,
              similar.empty() ? "" : fmt::format("; similar: {}", fmt::join(similar, ", "))));
    }
    const ModelEntry& library = *found;
    RequireSupportedArchitecture(library.spec, "model library entry", model_where);

    // The recipe's settings as Megatron's: a copy of the configuration with the translations
    // added, each located where its recipe key was written.
    ConfigNode translated = c.Root();
    std::vector<std::string> said;
    TranslatePrecision(c, translated, said);
    const std::string flavor = c.String("flavor", "");
    const RecipeFacts* facts = FindRecipeFacts(flavor);
    std::vector<std::string> from_recipe;  // what the flavor's own settings supplied
    TranslatePeft(c, facts, translated, said, from_recipe);
    if (facts != nullptr) ApplyRecipeFacts(c, *facts, translated, said, from_recipe);
    ApplyRecipeDefaults(facts != nullptr, translated, said);

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
    if (const ConfigNode* overlap = c.Find("comm_overlap_config");
        overlap != nullptr && !overlap->IsNull()) {
      ctx.notes.push_back(fmt::format(
          "comm_overlap_config ({}): TP communication overlap is not modelled; TP collectives are "
          "projected on the critical path",
          c.Where("comm_overlap_config").ToString()));
    }
    if (c.Bool("packed_sequence", false)) {
      ctx.notes.push_back(
          "packed_sequence true: projected as full sequences; attention within each packed "
          "sample (less work than over the whole sequence) is not modelled");
    }
    const std::string recipe = c.String("recipe", "");
    if (facts != nullptr) return;
    ctx.notes.push_back(fmt::format(
        "Megatron-Bridge recipe {}{}{} is Python and not read: what it sets and the experiment "
        "does not (recompute, its LoRA rank and targets, fusions, parallel sizes) takes "
        "Megatron-Core's and LoRA's defaults; give such settings as overrides (recompute_"
        "granularity, peft_dim, peft_alpha, ...)",
        recipe.empty() ? "(none named)" : recipe, flavor.empty() ? "" : ".", flavor));
  }

 private:
  // The flavor's own settings (kRecipeFacts) where the experiment leaves them unset.
  static void ApplyRecipeFacts(const ConfigReader& c, const RecipeFacts& facts, ConfigNode& out,
                               std::vector<std::string>& said, std::vector<std::string>& applied) {
    const SourceLocation where{std::string("Megatron-Bridge recipe ") + std::string(facts.flavor)};
    if (facts.recompute_full && c.Find("recompute_granularity") == nullptr) {
      out.SetPath("recompute_granularity", ConfigNode::Scalar("full", where));
      out.SetPath("recompute_method", ConfigNode::Scalar("uniform", where));
      out.SetPath("recompute_num_layers", ConfigNode::Scalar("1", where));
      applied.emplace_back("full recompute (uniform, 1 layer per chunk)");
    }
    const ConfigNode* lora = out.FindPath("lora.enabled");
    const bool peft = lora != nullptr && lora->scalar == "true";
    if (peft && facts.lora_without_distributed_optimizer &&
        c.Find("use_distributed_optimizer") == nullptr) {
      out.SetPath("use_distributed_optimizer", ConfigNode::Scalar("false", where));
      applied.emplace_back("no distributed optimizer under LoRA");
    }
    if (peft && facts.lora_without_loss_fusion && c.Find("cross_entropy_loss_fusion") == nullptr) {
      out.SetPath("cross_entropy_loss_fusion", ConfigNode::Scalar("false", where));
      applied.emplace_back("unfused cross-entropy under LoRA");
    }
    said.push_back(
        applied.empty()
            ? fmt::format("recipe {} (Megatron-Bridge @101f516): its settings beyond the shared "
                          "ones are the experiment's",
                          facts.flavor)
            : fmt::format("recipe {} (Megatron-Bridge @101f516): {}", facts.flavor,
                          fmt::join(applied, ", ")));
  }

  // What every Megatron-Bridge recipe's ConfigContainer sets (src/megatron/bridge/recipes/
  // common.py: DistributedDataParallelConfig(use_distributed_optimizer=True,
  // overlap_grad_reduce=True, overlap_param_gather=True)), from the framework-defaults table,
  // and its model providers' fused cross-entropy, where the experiment leaves them unset:
  // Megatron-Core's own argument defaults are off.
  // `out` holds the experiment's configuration with the translations and the flavor's own
  // settings already in it: a key present there is never replaced.
  static void ApplyRecipeDefaults(bool recipe_known, ConfigNode& out,
                                  std::vector<std::string>& said) {
    const FrameworkDefaults& bridge = DefaultsForFramework("megatron_bridge");
    const SourceLocation where{"Megatron-Bridge recipe default"};
    std::vector<std::string> applied;
    auto fill = [&](std::string_view key, bool value) {
      if (out.FindPath(key) != nullptr) return;
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
      said.push_back(fmt::format(
          "{}: {} (recipes/common.py{})",
          recipe_known ? "the recipes' shared settings" : "assumed where the experiment is silent",
          fmt::join(applied, ", "),
          recipe_known ? ""
                       : "; a recipe Sextant has not read may turn them off: set them as "
                         "overrides"));
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
    if (p->fp8_param_gather) set("fp8_param_gather", "true");
    if (!p->fp4.empty()) set("fp4", p->fp4);
    said.push_back(fmt::format("precision_config {}: {}{}{}{}", name, p->half,
                               p->fp8.empty() ? "" : fmt::format(", fp8 {}", p->fp8_recipe),
                               p->fp4.empty() ? "" : ", fp4 GEMMs",
                               p->fp8_param_gather ? ", fp8 primary weights" : ""));
  }

  // peft: "lora" / "dora" builds Megatron-Bridge's LoRA (src/megatron/bridge/peft/lora.py:
  // dim 32, alpha 32, dropout 0, on linear_qkv, linear_proj, linear_fc1, linear_fc2, the same
  // defaults as Primus's Megatron LoRA); peft_dim / peft_alpha set its rank and alpha.
  static void TranslatePeft(const ConfigReader& c, const RecipeFacts* facts, ConfigNode& out,
                            std::vector<std::string>& said, std::vector<std::string>& from_recipe) {
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
    const SourceLocation recipe_where{
        facts ? std::string("Megatron-Bridge recipe ") + std::string(facts->flavor) : ""};
    if (c.IsSet("peft_dim")) {
      out.SetPath("lora.dim", ConfigNode::Scalar(c.String("peft_dim", ""), c.Where("peft_dim")));
    } else if (facts && facts->lora_dim > 0) {
      out.SetPath("lora.dim", ConfigNode::Scalar(std::to_string(facts->lora_dim), recipe_where));
    }
    if (c.IsSet("peft_alpha")) {
      out.SetPath("lora.alpha",
                  ConfigNode::Scalar(c.String("peft_alpha", ""), c.Where("peft_alpha")));
    } else if (facts && facts->lora_alpha > 0) {
      out.SetPath("lora.alpha",
                  ConfigNode::Scalar(std::to_string(facts->lora_alpha), recipe_where));
    }
    if (facts && !facts->lora_targets.empty()) {
      out.SetPath("lora.target_modules",
                  ConfigNode::Scalar(std::string(facts->lora_targets), recipe_where));
    }
    if (facts &&
        ((facts->lora_dim > 0 && !c.IsSet("peft_dim")) ||
         (facts->lora_alpha > 0 && !c.IsSet("peft_alpha")) || !facts->lora_targets.empty())) {
      from_recipe.push_back(fmt::format(
          "LoRA rank {}, alpha {}{}", c.String("peft_dim", std::to_string(facts->lora_dim)),
          c.String("peft_alpha", std::to_string(facts->lora_alpha)),
          facts->lora_targets.empty() ? std::string()
                                      : fmt::format(" on {}", facts->lora_targets)));
    }
    if (!c.IsSet("peft_dim") && facts == nullptr) {
      said.push_back(
          "peft lora without peft_dim: LoRA's default rank 32 and alpha 32 on linear_qkv, "
          "linear_proj, linear_fc1, linear_fc2 (megatron/bridge/peft/lora.py); finetune recipes "
          "often set smaller ranks or fewer targets: give peft_dim / peft_alpha");
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
