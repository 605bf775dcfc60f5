// Megatron-LM (and Primus's Megatron backend): the configuration keys are Megatron's
// argument names, which are also Sextant's canonical vocabulary.
// Derivations follow megatron/training/arguments.py (validate_args) unless noted.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "job/framework_adapter.h"
#include "job/framework_defaults.h"
#include "job/job_validation.h"
#include "job/moe_layer_frequency.h"
#include "parallel/pipeline_layout.h"
#include "util/dtype.h"
#include "util/error.h"

namespace sextant {
namespace {

// Keys that decide the parallel shape and the layer split; recorded for error messages.
constexpr std::string_view kTrackedKeys[] = {"tensor_model_parallel_size",
                                             "pipeline_model_parallel_size",
                                             "context_parallel_size",
                                             "expert_model_parallel_size",
                                             "expert_tensor_parallel_size",
                                             "virtual_pipeline_model_parallel_size",
                                             "num_virtual_stages_per_pipeline_rank",
                                             "num_layers_per_virtual_pipeline_stage",
                                             "pipeline_model_parallel_layout",
                                             "account_for_embedding_in_pipeline_split",
                                             "account_for_loss_in_pipeline_split",
                                             "decoder_first_pipeline_num_layers",
                                             "decoder_last_pipeline_num_layers",
                                             "num_layers",
                                             "hidden_size",
                                             "num_attention_heads",
                                             "num_query_groups",
                                             "num_experts",
                                             "moe_router_topk",
                                             "micro_batch_size",
                                             "global_batch_size",
                                             "seq_length",
                                             "sequence_parallel",
                                             "use_distributed_optimizer",
                                             "use_torch_fsdp2",
                                             "recompute_granularity",
                                             "overlap_moe_expert_parallel_comm",
                                             "recompute_method",
                                             "recompute_num_layers",
                                             "vocab_size",
                                             "make_vocab_size_divisible_by"};

// A library model whose shape the configuration changed (`--num_layers 12 --hidden_size 768`)
// is another model: it is not reported under the library's name, and the changes are said.
void NameChangedArchitecture(const ModelSpec& library, ModelSpec& model,
                             std::vector<std::string>& notes) {
  std::vector<std::string> changes;
  auto compare = [&](std::string_view key, int64_t was, int64_t is) {
    if (was != is) changes.push_back(fmt::format("{} {} -> {}", key, was, is));
  };
  compare("num_layers", library.num_layers, model.num_layers);
  compare("hidden_size", library.hidden_size, model.hidden_size);
  // The dense FFN width shapes nothing when every layer routes its tokens to experts
  // (gpt-oss: Primus's model file sets ffn_hidden_size beside an all-MoE layer pattern).
  bool dense_layer = false;
  for (int64_t layer = 0; layer < model.num_layers && !dense_layer; ++layer) {
    dense_layer = !model.IsMoeLayer(layer);
  }
  if (dense_layer) compare("ffn_hidden_size", library.ffn_hidden_size, model.ffn_hidden_size);
  compare("num_attention_heads", library.num_attention_heads, model.num_attention_heads);
  compare("num_query_groups", library.num_query_groups, model.num_query_groups);
  compare("vocab_size", library.vocab_size, model.vocab_size);
  compare("num_experts", library.moe.num_experts, model.moe.num_experts);
  compare("kv_channels", library.kv_channels, model.kv_channels);
  if (library.swiglu != model.swiglu) {
    changes.push_back(fmt::format("swiglu {} -> {}", library.swiglu, model.swiglu));
  }
  if (changes.empty()) return;
  model.name = library.name + "-modified";
  notes.push_back(
      fmt::format("model {}: {} with {}", model.name, library.name, fmt::join(changes, ", ")));
}

// Keys of Megatron-LM arguments Sextant reads or that commonly appear in overrides; the
// module defaults of a Primus checkout add the rest.
constexpr std::string_view kMegatronKeys[] = {"num_layers",
                                              "hidden_size",
                                              "ffn_hidden_size",
                                              "num_attention_heads",
                                              "group_query_attention",
                                              "num_query_groups",
                                              "kv_channels",
                                              "swiglu",
                                              "untie_embeddings_and_output_weights",
                                              "vocab_size",
                                              "padded_vocab_size",
                                              "make_vocab_size_divisible_by",
                                              "tokenizer_type",
                                              "tokenizer_model",
                                              "normalization",
                                              "qk_layernorm",
                                              "add_bias_linear",
                                              "add_qkv_bias",
                                              "position_embedding_type",
                                              "max_position_embeddings",
                                              "seq_length",
                                              "micro_batch_size",
                                              "global_batch_size",
                                              "tensor_model_parallel_size",
                                              "pipeline_model_parallel_size",
                                              "context_parallel_size",
                                              "expert_model_parallel_size",
                                              "expert_tensor_parallel_size",
                                              "virtual_pipeline_model_parallel_size",
                                              "num_virtual_stages_per_pipeline_rank",
                                              "num_layers_per_virtual_pipeline_stage",
                                              "pipeline_model_parallel_layout",
                                              "account_for_embedding_in_pipeline_split",
                                              "account_for_loss_in_pipeline_split",
                                              "decoder_first_pipeline_num_layers",
                                              "decoder_last_pipeline_num_layers",
                                              "sequence_parallel",
                                              "use_distributed_optimizer",
                                              "use_torch_fsdp2",
                                              "use_megatron_fsdp",
                                              "use_custom_fsdp",
                                              "overlap_grad_reduce",
                                              "overlap_param_gather",
                                              "recompute_activations",
                                              "recompute_granularity",
                                              "recompute_method",
                                              "recompute_num_layers",
                                              "recompute_layer_ids",
                                              "recompute_modules",
                                              "num_experts",
                                              "moe_router_topk",
                                              "moe_ffn_hidden_size",
                                              "moe_shared_expert_intermediate_size",
                                              "moe_layer_freq",
                                              "moe_router_enable_expert_bias",
                                              "moe_router_num_groups",
                                              "moe_router_group_topk",
                                              "moe_expert_capacity_factor",
                                              "moe_router_load_balancing_type",
                                              "moe_enable_deepep",
                                              "moe_permute_fusion",
                                              "moe_grouped_gemm",
                                              "moe_use_legacy_grouped_gemm",
                                              "use_turbo_grouped_gemm",
                                              "gradient_accumulation_fusion",
                                              "multi_latent_attention",
                                              "q_lora_rank",
                                              "kv_lora_rank",
                                              "qk_head_dim",
                                              "qk_pos_emb_head_dim",
                                              "v_head_dim",
                                              "mtp_num_layers",
                                              "fp8",
                                              "fp8_recipe",
                                              "fp8_param_gather",
                                              "no_fp8_weight_transpose_cache",
                                              "fp4",
                                              "fp4_recipe",
                                              "bf16",
                                              "fp16",
                                              "cross_entropy_loss_fusion",
                                              "cross_entropy_fusion_impl",
                                              "use_flash_attn",
                                              "optimizer",
                                              "use_precision_aware_optimizer",
                                              "main_grads_dtype",
                                              "accumulate_allreduce_grads_in_fp32",
                                              "grad_reduce_in_bf16",
                                              "main_params_dtype",
                                              "exp_avg_dtype",
                                              "exp_avg_sq_dtype",
                                              "hidden_dropout",
                                              "attention_dropout",
                                              "use_turbo_deepep",
                                              "turbo_sync_free_moe_stage",
                                              "overlap_moe_expert_parallel_comm",
                                              "delay_wgrad_compute",
                                              "moe_shared_expert_overlap",
                                              "moe_token_dispatcher_type",
                                              "enable_zero_bubble",
                                              "patch_zero_bubble",
                                              "zero_bubble_v_schedule",
                                              "zero_bubble_v_schedule_mem_setup",
                                              "zero_bubble_max_pending_backward",
                                              "patch_primus_pipeline",
                                              "pp_algorithm",
                                              "allow_padding_num_layers",
                                              "train_iters",
                                              "lr",
                                              "min_lr",
                                              "weight_decay",
                                              "model_type"};

// Architectures the projection does not model, recognised by the keys their Primus model
// files set.
void RejectUnsupported(const AdapterContext& ctx, const ConfigReader& a) {
  auto refuse = [&](std::string_view what, std::string_view key) {
    const ConfigNode* node = a.Find(key);
    ThrowUserError(a.Where(key), "",
                   fmt::format("unsupported architecture: {} ({}={} in model {}); Sextant "
                               "projects decoder-only transformer language models (dense and MoE)",
                               what, key, node ? RenderValue(*node) : "?", ctx.module.model_stem));
  };
  const std::string model_type = a.String("model_type", "gpt");
  if (model_type == "mamba") {
    refuse(a.Bool("is_hybrid_model", false) ? "hybrid Mamba / attention model"
                                            : "Mamba state-space model",
           "model_type");
  }
  if (model_type == "deepseek_v4" || a.Bool("hybrid_attention_enabled", false)) {
    refuse("DeepSeek-V4 hybrid compressed / sparse attention", "model_type");
  }
  if (a.IsSet("linear_attention_freq"))
    refuse("hybrid linear-attention model", "linear_attention_freq");
  if (a.IsSet("experimental_attention_variant")) {
    refuse("experimental attention variant", "experimental_attention_variant");
  }
  if (a.IsSet("lfm_layer_types"))
    refuse("hybrid convolution / attention model (LFM2)", "lfm_layer_types");
  if (a.Find("num_joint_layers") != nullptr || a.Find("num_single_layers") != nullptr) {
    refuse("diffusion transformer (Flux)",
           a.Find("num_joint_layers") ? "num_joint_layers" : "num_single_layers");
  }
  for (const std::string& file : ctx.module.model_files) {
    if (std::filesystem::path(file).stem() == "diffusion_model") {
      ThrowUserError(SourceLocation{ctx.module.model_file}, "",
                     "unsupported architecture: diffusion model (extends diffusion_model.yaml); "
                     "Sextant projects decoder-only transformer language models (dense and MoE)");
    }
  }
}

// Primus's SFT trainer section `lora:` (primus/configs/modules/megatron/sft_trainer.yaml; the
// LoRA dataclass of primus/backends/megatron/peft/lora.py gives the defaults, its ModuleMatcher
// the meaning of target_modules and exclude_modules).
LoraSpec ReadLora(const AdapterContext& ctx) {
  const ConfigReader& c = ctx.config;
  LoraSpec l;
  const ConfigNode* section = c.Find("lora");
  if (section == nullptr || section->IsNull()) return l;
  if (!section->IsMap()) {
    // MegatronSFTTrainer reads getattr(lora, "enabled", False): anything but a map is off.
    ctx.notes.push_back("lora is not a map of settings: LoRA is off (Primus reads lora.enabled)");
    return l;
  }
  if (!c.Bool("lora.enabled", false)) return l;
  // MegatronSFTTrainer builds the adapters; the pre-training trainer never reads the section.
  if (c.String("stage", "") != "sft") {
    ctx.notes.push_back(
        "lora.enabled is read only by Primus's SFT trainer (stage: sft): projected as full "
        "training");
    return l;
  }
  // The LoRA dataclass is built only when enabled: then a setting it lacks stops the run.
  static const std::set<std::string, std::less<>> kKnown = {"enabled",
                                                            "dim",
                                                            "alpha",
                                                            "dropout",
                                                            "dropout_position",
                                                            "lora_A_init_method",
                                                            "lora_B_init_method",
                                                            "target_modules",
                                                            "exclude_modules",
                                                            "a2a_experimental",
                                                            "lora_dtype"};
  for (const auto& [key, value] : section->fields) {
    if (kKnown.count(key) == 0) {
      c.Fail("lora." + key,
             "not a setting of Primus's LoRA (enabled, dim, alpha, dropout, "
             "dropout_position, target_modules, exclude_modules, ...)");
    }
  }
  l.enabled = true;
  l.rank = c.SizeInt("lora.dim", l.rank, SizeRange{1, 1 << 20});
  ctx.provenance.Record("lora.dim", "lora.dim", c.Where("lora.dim"));
  l.alpha = c.Double("lora.alpha", l.alpha);
  l.dropout = c.Double("lora.dropout", l.dropout);
  if (!(l.dropout >= 0 && l.dropout < 1)) {
    c.Fail("lora.dropout", fmt::format("{} does not lie in [0, 1)", l.dropout));
  }
  const std::string position = c.String("lora.dropout_position", "pre");
  if (position != "pre" && position != "post") {
    c.Fail("lora.dropout_position", fmt::format("unknown value \"{}\" (pre or post)", position));
  }
  l.dropout_before = position == "pre";
  const std::vector<std::string> targets = c.IsSet("lora.target_modules")
                                               ? c.StringList("lora.target_modules")
                                               : std::vector<std::string>{};
  const std::vector<std::string> excluded = c.StringList("lora.exclude_modules");
  if (!c.IsSet("lora.target_modules") && excluded.empty()) return l;  // the four defaults
  if (!targets.empty() && !excluded.empty()) {
    c.Fail("lora.exclude_modules", "applies only when target_modules is empty (ModuleMatcher)");
  }
  l.target_modules.clear();
  if (targets.empty()) {
    // No targets: every linear layer (Megatron's column- and row-parallel linears) whose name
    // is not excluded; the router is not a linear layer.
    for (const char* module : {"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2",
                               "linear_q_proj", "linear_q_down_proj", "linear_q_up_proj",
                               "linear_kv_down_proj", "linear_kv_up_proj", "output_layer"}) {
      if (std::find(excluded.begin(), excluded.end(), module) == excluded.end()) {
        l.target_modules.emplace_back(module);
      }
    }
    return l;
  }
  bool narrowed = false;
  for (const std::string& pattern : targets) {
    // Wildcard paths ("*.layers.0.*.linear_qkv") name the module by their last component;
    // which layers they pick is not modelled.
    const size_t dot = pattern.rfind('.');
    const std::string name = dot == std::string::npos ? pattern : pattern.substr(dot + 1);
    narrowed = narrowed || name != pattern;
    l.target_modules.push_back(name);
  }
  if (narrowed) {
    ctx.notes.push_back(
        "lora.target_modules: patterns with a module path are applied to every layer "
        "(their last component names the module)");
  }
  return l;
}

DType RequireDType(const ConfigReader& c, std::string_view key, DType fallback) {
  const std::optional<std::string> name = c.String(key);
  if (!name) return fallback;
  const std::optional<DType> dtype = ParseDType(*name);
  if (!dtype) c.Fail(key, fmt::format("unknown dtype \"{}\"", *name));
  return *dtype;
}

void ApplyArchitecture(AdapterContext& ctx, ModelSpec& spec, const ModelEntry* library) {
  const ConfigReader& a = ctx.architecture;
  auto set_int = [&](std::string_view key, int64_t& field) {
    if (std::optional<int64_t> value = a.Size(key)) field = *value;
  };
  auto set_bool = [&](std::string_view key, bool& field) {
    if (std::optional<bool> value = a.Bool(key)) field = *value;
  };
  set_int("num_layers", spec.num_layers);
  set_int("hidden_size", spec.hidden_size);
  set_int("num_attention_heads", spec.num_attention_heads);
  set_bool("swiglu", spec.swiglu);
  set_bool("untie_embeddings_and_output_weights", spec.untie_embeddings_and_output_weights);
  set_bool("qk_layernorm", spec.qk_layernorm);
  set_bool("add_bias_linear", spec.add_bias_linear);
  set_bool("add_qkv_bias", spec.add_qkv_bias);
  set_int("max_position_embeddings", spec.max_position_embeddings);
  set_int("make_vocab_size_divisible_by", spec.make_vocab_size_divisible_by);

  if (a.IsSet("ffn_hidden_size")) {
    spec.ffn_hidden_size = *a.Size("ffn_hidden_size");
  } else if (spec.ffn_hidden_size <= 0 && spec.hidden_size > 0) {
    // validate_args: 4h, or for SwiGLU 2/3 of that rounded down to a multiple of 64.
    spec.ffn_hidden_size =
        spec.swiglu ? (4 * spec.hidden_size * 2 / 3) / 64 * 64 : 4 * spec.hidden_size;
  }
  if (a.IsSet("kv_channels")) {
    spec.kv_channels = *a.Size("kv_channels");
  } else if ((spec.kv_channels <= 0 || a.IsSet("hidden_size") || a.IsSet("num_attention_heads")) &&
             spec.num_attention_heads > 0) {
    if (spec.hidden_size % spec.num_attention_heads != 0 &&
        spec.attention != AttentionType::kMultiLatent) {
      // Name the one the command line changed, if either.
      a.Fail(a.Where("num_attention_heads").file.starts_with("--") ? "num_attention_heads"
                                                                   : "hidden_size",
             fmt::format("hidden_size {} is not divisible by num_attention_heads {}: Megatron's "
                         "validate_args derives kv_channels from them (set kv_channels to give "
                         "the head size)",
                         spec.hidden_size, spec.num_attention_heads));
    }
    spec.kv_channels = spec.hidden_size / spec.num_attention_heads;  // validate_args default
  }
  // group_query_attention false means one key/value head per query head (MHA).
  const std::optional<bool> gqa = a.Bool("group_query_attention");
  if (gqa.has_value() && !*gqa) {
    spec.num_query_groups = spec.num_attention_heads;
  } else if (a.IsSet("num_query_groups")) {
    spec.num_query_groups = *a.Size("num_query_groups");
  } else if (gqa.value_or(false)) {
    a.Fail("num_query_groups", "group_query_attention is true but num_query_groups is not set");
  }
  if (spec.num_query_groups <= 0) spec.num_query_groups = spec.num_attention_heads;
  if (spec.num_attention_heads % spec.num_query_groups != 0) {
    // Each key/value group serves the same number of query heads (TransformerConfig).
    a.Fail("num_query_groups", fmt::format("{} does not divide num_attention_heads {}",
                                           spec.num_query_groups, spec.num_attention_heads));
  }

  if (std::optional<std::string> norm = a.String("normalization")) {
    if (*norm == "RMSNorm" || *norm == "rmsnorm") {
      spec.normalization = NormType::kRMSNorm;
    } else if (*norm == "LayerNorm" || *norm == "layernorm") {
      spec.normalization = NormType::kLayerNorm;
    } else {
      a.Fail("normalization",
             fmt::format("unknown normalization \"{}\" (RMSNorm or LayerNorm)", *norm));
    }
  }
  if (std::optional<std::string> position = a.String("position_embedding_type")) {
    spec.learned_position_embeddings = (*position == "learned_absolute");
  }

  if (std::optional<bool> mla = a.Bool("multi_latent_attention")) {
    spec.attention = *mla ? AttentionType::kMultiLatent : AttentionType::kStandard;
  }
  if (spec.attention == AttentionType::kMultiLatent) {
    set_int("q_lora_rank", spec.mla.q_lora_rank);
    set_int("kv_lora_rank", spec.mla.kv_lora_rank);
    set_int("qk_head_dim", spec.mla.qk_head_dim);
    set_int("qk_pos_emb_head_dim", spec.mla.qk_pos_emb_head_dim);
    set_int("v_head_dim", spec.mla.v_head_dim);
    if (a.Find("q_lora_rank") != nullptr && !a.IsSet("q_lora_rank")) spec.mla.q_lora_rank = 0;
  }
  if (a.Find("mtp_num_layers") != nullptr)
    spec.mtp_num_layers = a.Size("mtp_num_layers").value_or(0);

  if (a.Find("num_experts") != nullptr) spec.moe.num_experts = a.Size("num_experts").value_or(0);
  if (spec.IsMoe()) {
    set_int("moe_router_topk", spec.moe.router_topk);
    if (a.IsSet("moe_ffn_hidden_size")) {
      spec.moe.ffn_hidden_size = *a.Size("moe_ffn_hidden_size");
    } else if (spec.moe.ffn_hidden_size <= 0) {
      spec.moe.ffn_hidden_size = spec.ffn_hidden_size;  // validate_args default
    }
    if (a.Find("moe_shared_expert_intermediate_size") != nullptr) {
      spec.moe.shared_expert_ffn_hidden_size =
          a.Size("moe_shared_expert_intermediate_size").value_or(0);
    }
    set_bool("moe_router_enable_expert_bias", spec.moe.router_bias);
    if (a.Find("moe_router_num_groups") != nullptr) {
      spec.moe.router_groups = a.Size("moe_router_num_groups").value_or(0);
    }
    if (a.Find("moe_router_group_topk") != nullptr) {
      spec.moe.router_group_topk = a.Size("moe_router_group_topk").value_or(0);
    }
    if (a.Find("moe_expert_capacity_factor") != nullptr) {
      spec.moe.capacity_factor = a.Double("moe_expert_capacity_factor").value_or(0.0);
    }
    if (a.Find("moe_layer_freq") != nullptr ||
        spec.moe.moe_layers.size() != static_cast<size_t>(spec.num_layers)) {
      spec.moe.moe_layers = MoeLayerPattern(a.Find("moe_layer_freq"), spec.num_layers);
    }
  } else {
    spec.moe = MoeSpec{};
  }

  // The real vocabulary, padded later as Megatron pads it; never a placeholder.
  if (a.IsSet("vocab_size")) {
    spec.vocab_size = *a.Size("vocab_size");
  } else if (spec.vocab_size > 0) {
    // Already the library entry's vocabulary (no model file was read).
  } else if (library != nullptr && library->spec.vocab_size > 0) {
    spec.vocab_size = library->spec.vocab_size;
    ctx.notes.push_back(
        fmt::format("vocab_size {} from the model library entry {} (the model file "
                    "leaves it to the tokenizer)",
                    spec.vocab_size, library->spec.name));
  } else {
    const std::string tokenizer = ctx.config.String("tokenizer_model", "");
    spec.vocab_size = VocabSizeForTokenizer(tokenizer);
    if (spec.vocab_size <= 0) {
      ThrowUserError(ctx.config.Where("tokenizer_model"), "vocab_size",
                     fmt::format("unknown vocabulary size (tokenizer_model {}); set --vocab_size",
                                 tokenizer.empty() ? "not set" : tokenizer));
    }
    ctx.notes.push_back(fmt::format("vocab_size {} of tokenizer {} (Hugging Face config.json)",
                                    spec.vocab_size, tokenizer));
  }
}

void ApplyTraining(AdapterContext& ctx, Job& job) {
  const ConfigReader& c = ctx.config;
  TrainingSettings& t = job.training;
  t.seq_length = c.Size("seq_length", job.model.seq_length);
  job.model.seq_length = t.seq_length;
  t.micro_batch_size = c.Size("micro_batch_size", 1);
  t.global_batch_size = c.Size("global_batch_size", 0);
  t.hidden_dropout = c.Double("hidden_dropout", t.hidden_dropout);
  t.attention_dropout = c.Double("attention_dropout", t.attention_dropout);
  t.flash_attention = c.Bool("use_flash_attn", t.flash_attention);
  t.cross_entropy_loss_fusion = c.Bool("cross_entropy_loss_fusion", t.cross_entropy_loss_fusion);
  // Megatron's --cross-entropy-fusion-impl: choices native | te, default native.
  if (const std::string impl = c.String("cross_entropy_fusion_impl", "native"); impl == "te") {
    t.cross_entropy_impl = CrossEntropyImpl::kTransformerEngine;
  } else if (impl == "native") {
    t.cross_entropy_impl = CrossEntropyImpl::kNative;
  } else {
    c.Fail("cross_entropy_fusion_impl", fmt::format("'{}' is not native or te", impl));
  }
  t.overlap_grad_reduce = c.Bool("overlap_grad_reduce", t.overlap_grad_reduce);
  t.overlap_param_gather = c.Bool("overlap_param_gather", t.overlap_param_gather);
  t.deepep = c.Bool("use_turbo_deepep", false) || c.Bool("moe_enable_deepep", false);
  t.ep_a2a_combined_1f1b = c.Bool("overlap_moe_expert_parallel_comm", false);
  t.delay_wgrad_compute = c.Bool("delay_wgrad_compute", false);
  t.ep_overlap = t.deepep || t.ep_a2a_combined_1f1b;
  const int64_t stage = c.Int("turbo_sync_free_moe_stage", 0);
  if (stage < 0 || stage > 3) {
    c.Fail("turbo_sync_free_moe_stage", fmt::format("{} is not a stage: 0 to 3", stage));
  }
  const SyncFreeMoeOptions sync_free = SyncFreeMoeStage(static_cast<int>(stage));
  t.sync_free_moe_stage = static_cast<int>(stage);
  if (sync_free.turbo_deepep && c.Find("use_turbo_deepep") != nullptr &&
      !c.Bool("use_turbo_deepep", false) && job.model.IsMoe()) {
    // Primus's sync-free patch turns DeepEP on from stage 2 whatever use_turbo_deepep says.
    ctx.notes.push_back(fmt::format(
        "use_turbo_deepep false ({}) has no effect: turbo_sync_free_moe_stage {} turns Turbo "
        "DeepEP on",
        c.Where("use_turbo_deepep").ToString(), stage));
  }
  t.deepep = t.deepep || sync_free.turbo_deepep;
  t.ep_overlap = t.ep_overlap || t.deepep;
  if (sync_free.fused_permutation) {
    t.moe_permutation = MoePermutation::kFused;
  } else if (c.Find("moe_permute_fusion") != nullptr) {
    t.moe_permutation =
        c.Bool("moe_permute_fusion", false) ? MoePermutation::kFused : MoePermutation::kIndexSelect;
  } else {
    t.moe_permutation =
        MoePermutationFor(DefaultsForFramework(job.framework), job.model.name, t.deepep);
  }
  // How the experts' GEMMs launch: Turbo's grouped kernel when asked for (or required by a
  // sync-free stage >= 2); the grouped_gemm package (moe_use_legacy_grouped_gemm) loops over
  // the experts on 4 streams as TE does; without moe_grouped_gemm, SequentialMLP runs the
  // experts one after the other, whatever the other flags say.
  if (c.Find("moe_grouped_gemm") != nullptr && !c.Bool("moe_grouped_gemm", true)) {
    t.expert_gemm_launch = ExpertGemmLaunch::kSequentialLoop;
  } else if (c.Bool("use_turbo_grouped_gemm", false) || sync_free.turbo_grouped_gemm) {
    t.expert_gemm_launch = ExpertGemmLaunch::kGroupedKernel;
  } else if (c.Bool("moe_use_legacy_grouped_gemm", false)) {
    t.expert_gemm_launch = ExpertGemmLaunch::kGroupedGemmPackage;
  } else {
    t.expert_gemm_launch = DefaultsForFramework(job.framework).expert_gemm_launch;
  }
  t.gradient_accumulation_fusion = c.Bool("gradient_accumulation_fusion", true);
  t.lora = ReadLora(ctx);

  // Recompute. recompute_activations is the older spelling of selective recompute.
  RecomputeSpec& r = t.recompute;
  std::string granularity = c.String("recompute_granularity", "");
  if (granularity.empty() && c.Bool("recompute_activations", false)) granularity = "selective";
  if (granularity == "full") {
    r.granularity = RecomputeGranularity::kFull;
  } else if (granularity == "selective") {
    r.granularity = RecomputeGranularity::kSelective;
  } else if (!granularity.empty()) {
    c.Fail("recompute_granularity",
           fmt::format("unknown value \"{}\" (full or selective)", granularity));
  }
  const std::string method = c.String("recompute_method", "");
  if (method == "block") {
    r.method = RecomputeMethod::kBlock;
  } else if (method == "uniform" || method.empty()) {
    r.method = RecomputeMethod::kUniform;
  } else {
    c.Fail("recompute_method", fmt::format("unknown value \"{}\" (uniform or block)", method));
  }
  r.num_layers = c.Size("recompute_num_layers", 0);
  if (r.granularity == RecomputeGranularity::kSelective) {
    // arguments.py: "recompute method is not yet supported for selective recomputing
    // granularity"; TransformerConfig.__post_init__: with selective "recompute_num_layers must
    // be None".
    for (const char* key : {"recompute_method", "recompute_num_layers"}) {
      if (!c.IsSet(key)) continue;
      c.Fail(key, fmt::format("Megatron refuses it with selective recompute "
                              "(recompute_granularity selective): add --{} null",
                              key));
    }
  }
  const bool full_by_count =
      r.granularity == RecomputeGranularity::kFull && !c.IsSet("recompute_layer_ids");
  if (full_by_count && method.empty()) {
    // TransformerConfig.__post_init__: "Using recompute_granularity: full so recompute_method
    // must be "block" or "uniform"" (Primus's recompute_layer_ids is the one exception).
    c.Fail("recompute_method",
           "full recompute needs it (uniform or block) with recompute_num_layers, or Primus's "
           "recompute_layer_ids: Megatron refuses full recompute without; --recompute_method "
           "uniform --recompute_num_layers 1 recomputes every layer");
  }
  if (full_by_count && r.method == RecomputeMethod::kBlock && !c.IsSet("recompute_num_layers")) {
    // TransformerConfig.__post_init__: "When using recompute_granularity: full
    // recompute_num_layers must be between 1 and num_layers_per_pipeline_rank".
    c.Fail("recompute_num_layers",
           "recompute_method block needs it: the number of layers recomputed at the start of "
           "each pipeline stage, e.g. --recompute_num_layers 1 (Megatron refuses full recompute "
           "without it)");
  }
  if (full_by_count && r.method == RecomputeMethod::kUniform && !c.IsSet("recompute_num_layers")) {
    c.Fail("recompute_num_layers",
           "recompute_method uniform needs it: the number of layers in each checkpointed group, "
           "e.g. --recompute_num_layers 1 to recompute every layer one at a time (Megatron "
           "refuses full recompute without it)");
  }
  if (full_by_count && r.method == RecomputeMethod::kBlock && r.num_layers <= 0) {
    // The block method checkpoints the first recompute_num_layers layers of each stage: none.
    ctx.notes.push_back(fmt::format(
        "recompute_method block with recompute_num_layers 0 ({}): no layer is recomputed",
        c.Where("recompute_num_layers").ToString()));
  } else if (full_by_count && r.num_layers <= 0) {
    // Uniform with recompute_num_layers 0: Megatron's uniform loop would not advance; taken as
    // one layer per checkpointed group, every layer.
    r.num_layers = 1;
    ctx.notes.push_back(fmt::format(
        "recompute_method uniform with recompute_num_layers 0 ({}): every layer recomputed, "
        "one layer per checkpointed group",
        c.Where("recompute_num_layers").ToString()));
  }
  for (const std::string& id : c.StringList("recompute_layer_ids")) {
    ConfigNode probe = ConfigNode::Scalar(id, c.Where("recompute_layer_ids"));
    const int64_t layer = *ReadInt(probe, "recompute_layer_ids");
    if (layer < 0 || layer >= job.model.num_layers) {
      c.Fail("recompute_layer_ids", fmt::format("layer {} is not one of the model's {} layers",
                                                layer, job.model.num_layers));
    }
    r.layer_ids.push_back(layer);
  }
  r.modules = c.StringList("recompute_modules");
  if (r.granularity == RecomputeGranularity::kSelective && r.modules.empty()) {
    r.modules = {"core_attn"};  // Megatron's default selective recompute
  }
  if (r.granularity == RecomputeGranularity::kNone) {
    r = RecomputeSpec{};
  }

  // Precision.
  PrecisionRecipe& p = t.precision;
  if (c.Bool("fp16", false) && c.Bool("bf16", true)) {
    // arguments.py: "if args.bf16: assert not args.fp16".
    c.Fail("fp16", fmt::format("fp16 and bf16 are both true (bf16 at {}); Megatron accepts one "
                               "of them: add --bf16 false",
                               c.Where("bf16").ToString()));
  }
  if (c.Bool("fp16", false)) {
    p.params = DType::kFP16;
  } else if (c.Bool("bf16", true)) {
    p.params = DType::kBF16;
  } else {
    p.params = DType::kFP32;
  }
  p.gemm = p.params;
  const ConfigNode* fp8 = c.Find("fp8");
  bool fp8_on = false;
  if (fp8 != nullptr && !fp8->IsNull()) {
    const std::string value = *ReadString(*fp8, "fp8");
    fp8_on = !(value == "false" || value == "False" || value == "0" || value.empty());
    // Megatron-Core's --fp8-format choices (megatron/training/arguments.py; its TE config
    // raises "E4M3 and HYBRID are the only supported FP8 formats" for anything else): a typo
    // is not FP8 training.
    if (fp8_on && value != "e4m3" && value != "hybrid") {
      c.Fail("fp8", fmt::format("\"{}\" is not an FP8 format (e4m3, hybrid; false or null for "
                                "none)",
                                ShortText(value)));
    }
  }
  if (fp8_on) {
    // Megatron-Core's --fp8-recipe choices (megatron/training/arguments.py), "delayed" by
    // default; a user-defined "custom" recipe has no cost to model.
    const std::string recipe = c.String("fp8_recipe", "delayed");
    if (!p.UseFp8Recipe(recipe)) {
      c.Fail("fp8_recipe",
             fmt::format("\"{}\" is not a recipe Sextant models (delayed, tensorwise, blockwise, "
                         "mxfp8)",
                         ShortText(recipe)));
    }
    p.fp8_param_gather = c.Bool("fp8_param_gather", false);
    // Primus's TE patches (backends/megatron/patches/te_patches/linear_fp8_cache_patches.py)
    // build TE's linear layers with keep_fp8_weight_transpose_cache=False under this flag.
    p.fp8_weight_transpose_cache = !c.Bool("no_fp8_weight_transpose_cache", false);
  }
  // FP4 training (Megatron-Core arguments.py --fp4-format e2m1 with --fp4-recipe; Primus's
  // Megatron backend adds the mxfp4 recipe): the GEMMs run in FP4 and, as with FP8, keep the
  // quantised inputs for backward.
  const ConfigNode* fp4 = c.Find("fp4");
  if (fp4 != nullptr && !fp4->IsNull()) {
    const std::string value = *ReadString(*fp4, "fp4");
    if (!(value == "false" || value == "False" || value == "0" || value.empty()))
      p.gemm = DType::kFP4;
  }
  // Megatron accumulates and all-reduces gradients in the parameter dtype unless
  // accumulate_allreduce_grads_in_fp32 is set, which arguments.py forces for bf16.
  if (p.params == DType::kFP16 && !c.Bool("accumulate_allreduce_grads_in_fp32", false)) {
    p.main_grads = DType::kFP16;
  }
  // grad_reduce_in_bf16 turns accumulate_allreduce_grads_in_fp32 off (arguments.py), so the
  // DDP gradient buffer takes the parameters' bf16 (distributed_data_parallel.py: grad_dtype =
  // float if grad_reduce_in_fp32 else param.dtype): half the gradient memory and reduce bytes.
  if (p.params == DType::kBF16 && c.Bool("grad_reduce_in_bf16", false)) {
    p.main_grads = DType::kBF16;
  }
  if (c.Bool("use_precision_aware_optimizer", false)) {
    p.precision_aware_optimizer = true;
    p.main_grads = RequireDType(c, "main_grads_dtype", p.main_grads);
    p.main_params = RequireDType(c, "main_params_dtype", p.main_params);
    p.exp_avg = RequireDType(c, "exp_avg_dtype", p.exp_avg);
    p.exp_avg_sq = RequireDType(c, "exp_avg_sq_dtype", p.exp_avg_sq);
  }
  const std::string optimizer = c.String("optimizer", "adam");
  if (optimizer == "adam" || optimizer == "adamw" || optimizer == "fused_adam") {
    t.optimizer = OptimizerKind::kAdam;
  } else if (optimizer == "sgd") {
    t.optimizer = OptimizerKind::kSgd;
  } else if (optimizer == "muon" || optimizer == "dist_muon") {
    t.optimizer = OptimizerKind::kMuon;
  } else {
    c.Fail("optimizer", fmt::format("unknown optimizer \"{}\" (adam, sgd, muon)", optimizer));
  }
}

void ApplyParallel(AdapterContext& ctx, Job& job) {
  const ConfigReader& c = ctx.config;
  ParallelPlan& p = job.parallel;
  auto degree = [&](std::string_view key, int fallback) {
    return static_cast<int>(c.SizeInt(key, fallback, kParallelDegreeRange));
  };
  p.tp = degree("tensor_model_parallel_size", 1);
  p.pp = degree("pipeline_model_parallel_size", 1);
  p.cp = degree("context_parallel_size", 1);
  p.ep = degree("expert_model_parallel_size", 1);
  // validate_args: expert_tensor_parallel_size defaults to tensor_model_parallel_size.
  p.etp = c.IsSet("expert_tensor_parallel_size") ? degree("expert_tensor_parallel_size", 1) : p.tp;
  if (!c.IsSet("expert_tensor_parallel_size")) {
    ctx.provenance.Record("expert_tensor_parallel_size",
                          "expert_tensor_parallel_size (= tensor_model_parallel_size)",
                          c.Where("tensor_model_parallel_size"));
  }

  // Virtual stages: three ways to say it; they must agree.
  int vpp = 0;
  std::string vpp_key;
  auto take_vpp = [&](std::string_view key, int value) {
    if (vpp != 0 && value != vpp) {
      ThrowUserError(c.Where(key), key,
                     fmt::format("gives {} virtual stages per pipeline rank but {} gives {}", value,
                                 vpp_key, vpp));
    }
    vpp = value;
    vpp_key = std::string(key);
    ctx.provenance.Record("virtual_pipeline_model_parallel_size", std::string(key), c.Where(key));
  };
  if (c.IsSet("virtual_pipeline_model_parallel_size")) {
    take_vpp("virtual_pipeline_model_parallel_size",
             degree("virtual_pipeline_model_parallel_size", 1));
  }
  if (c.IsSet("num_virtual_stages_per_pipeline_rank")) {
    take_vpp("num_virtual_stages_per_pipeline_rank",
             degree("num_virtual_stages_per_pipeline_rank", 1));
  }
  if (c.IsSet("num_layers_per_virtual_pipeline_stage")) {
    const int64_t per_stage = degree("num_layers_per_virtual_pipeline_stage", 1);
    const int64_t layers = job.model.num_layers;
    if (layers % (per_stage * p.pp) != 0) {
      ThrowUserError(
          c.Where("num_layers_per_virtual_pipeline_stage"), "num_layers_per_virtual_pipeline_stage",
          fmt::format(
              "num_layers {} is not divisible by num_layers_per_virtual_pipeline_stage {} x "
              "pipeline_model_parallel_size {}",
              layers, per_stage, p.pp));
    }
    take_vpp("num_layers_per_virtual_pipeline_stage",
             static_cast<int>(layers / (per_stage * p.pp)));
  }
  p.layout = c.String("pipeline_model_parallel_layout", "");
  if (!p.layout.empty() && vpp == 0) {
    // Megatron takes the number of virtual stages from the layout: stages / PP.
    std::vector<LayoutStage> stages;
    try {
      stages = ParsePipelineLayout(p.layout);
    } catch (const UserError& e) {
      ThrowUserError(c.Where("pipeline_model_parallel_layout"), "", e.what());
    }
    if (stages.size() % p.pp != 0) {
      ThrowUserError(c.Where("pipeline_model_parallel_layout"), "pipeline_model_parallel_layout",
                     fmt::format("has {} stages, not a multiple of pipeline_model_parallel_size {}",
                                 stages.size(), p.pp));
    }
    vpp = static_cast<int>(stages.size() / p.pp);
    ctx.provenance.Record("virtual_pipeline_model_parallel_size", "pipeline_model_parallel_layout",
                          c.Where("pipeline_model_parallel_layout"));
  }
  p.vpp = vpp > 0 ? vpp : 1;
  p.first_stage_layers = c.Size("decoder_first_pipeline_num_layers", -1);
  p.last_stage_layers = c.Size("decoder_last_pipeline_num_layers", -1);
  // Megatron-Core counts the embedding and/or the loss as a layer of the first/last stage
  // (AccountedPipelineLayout); as the equivalent layout. Megatron refuses these flags with an
  // explicit layout or first/last stage sizes, and a split they do not divide.
  const bool embedding_slot = c.Bool("account_for_embedding_in_pipeline_split", false);
  const bool loss_slot = c.Bool("account_for_loss_in_pipeline_split", false);
  if ((embedding_slot || loss_slot) && p.pp > 1) {
    const std::string_view flag = embedding_slot ? "account_for_embedding_in_pipeline_split"
                                                 : "account_for_loss_in_pipeline_split";
    if (!p.layout.empty() || p.first_stage_layers >= 0 || p.last_stage_layers >= 0) {
      c.Fail(flag,
             "cannot be combined with pipeline_model_parallel_layout or "
             "decoder_first/last_pipeline_num_layers (Megatron-Core refuses it)");
    }
    const int64_t stages = static_cast<int64_t>(p.pp) * p.vpp;
    p.layout = AccountedPipelineLayout(job.model.num_layers, stages, embedding_slot, loss_slot);
    p.embedding_counts_as_layer = embedding_slot;
    p.loss_counts_as_layer = loss_slot;
    if (p.layout.empty()) {
      c.Fail(flag,
             AccountedLayoutRefusal(job.model.num_layers, p.pp, p.vpp, embedding_slot, loss_slot));
    }
    ctx.notes.push_back(fmt::format(
        "{}{}: pipeline layout {}", embedding_slot ? "account_for_embedding_in_pipeline_split" : "",
        loss_slot ? (embedding_slot ? " + account_for_loss_in_pipeline_split"
                                    : "account_for_loss_in_pipeline_split")
                  : "",
        p.layout));
  }

  ctx.allow_uneven_layers = c.Bool("allow_padding_num_layers", false);
  p.sequence_parallel = c.Bool("sequence_parallel", false);
  if (p.sequence_parallel && p.tp == 1) {
    // Set on the command line (--sequence_parallel): the user asked for it, so say no.
    if (c.Where("sequence_parallel").file.starts_with("--")) {
      ThrowUserError(c.Where("sequence_parallel"), "sequence_parallel",
                     "requires tensor_model_parallel_size > 1 (it splits the sequence over the "
                     "tensor-parallel group)");
    }
    // validate_args turns sequence parallelism off when TP is 1.
    p.sequence_parallel = false;
  }
  p.distributed_optimizer = c.Bool("use_distributed_optimizer", false);
  p.fsdp2 = c.Bool("use_torch_fsdp2", false);
  if (p.fsdp2) {
    if (const std::string why = MegatronFsdp2Refusal(p); !why.empty()) {
      c.Fail("use_torch_fsdp2",
             fmt::format("is not supported with {} (Megatron-LM arguments.py validate_args)", why));
    }
  }
  if (!p.fsdp2 && (c.Bool("use_megatron_fsdp", false) || c.Bool("use_custom_fsdp", false))) {
    p.fsdp2 = true;
    ctx.notes.push_back(
        "Megatron FSDP projected as full sharding of parameters, gradients and optimizer state");
  }
}

// Megatron-Core's TransformerConfig.__post_init__ refuses these combinations of the combined
// 1F1B all-to-all overlap before training starts; the layout ones (EP > 1, VPP with PP > 1)
// are ValidateJob's, as later flags can change them.
void CheckCombinedOneFOneB(const ConfigReader& c, const Job& job) {
  const TrainingSettings& t = job.training;
  const std::string refused = "Megatron-Core refuses it (transformer_config.py)";
  if (t.delay_wgrad_compute && !t.ep_a2a_combined_1f1b) {
    c.Fail("delay_wgrad_compute",
           fmt::format("needs overlap_moe_expert_parallel_comm true: {}; add "
                       "--overlap_moe_expert_parallel_comm true",
                       refused));
  }
  if (t.delay_wgrad_compute && c.Bool("moe_use_legacy_grouped_gemm", false)) {
    c.Fail("delay_wgrad_compute",
           fmt::format("is not supported with moe_use_legacy_grouped_gemm true ({}): {}; add "
                       "--moe_use_legacy_grouped_gemm false",
                       c.Where("moe_use_legacy_grouped_gemm").ToString(), refused));
  }
  if (!t.ep_a2a_combined_1f1b) return;
  if (t.recompute.granularity == RecomputeGranularity::kFull) {
    c.Fail("overlap_moe_expert_parallel_comm",
           fmt::format("cannot run with recompute_granularity full ({}): {}",
                       c.Where("recompute_granularity").ToString(), refused));
  }
  if (c.Bool("moe_shared_expert_overlap", false)) {
    c.Fail("overlap_moe_expert_parallel_comm",
           fmt::format("cannot run with moe_shared_expert_overlap true ({}): {}; add "
                       "--moe_shared_expert_overlap false",
                       c.Where("moe_shared_expert_overlap").ToString(), refused));
  }
  // DeepEP runs the flex dispatcher whatever the key says; unset (no Primus checkout), unknown.
  const std::string dispatcher = c.String("moe_token_dispatcher_type", "alltoall");
  if (!t.deepep && dispatcher != "alltoall" && dispatcher != "flex") {
    c.Fail("overlap_moe_expert_parallel_comm",
           fmt::format("needs moe_token_dispatcher_type alltoall or flex, not {} ({}): {}",
                       dispatcher, c.Where("moe_token_dispatcher_type").ToString(), refused));
  }
  if (job.model.mtp_num_layers > 1) {
    c.Fail("overlap_moe_expert_parallel_comm",
           fmt::format("supports at most one MTP layer, not mtp_num_layers {} ({}): {}",
                       job.model.mtp_num_layers, c.Where("mtp_num_layers").ToString(), refused));
  }
}

// The cost model prices the all-to-all dispatcher. Megatron's MoEAllGatherTokenDispatcher (the
// default, and Primus's language_model.yaml) all-gathers every token over the TP x EP group and
// reduce-scatters the outputs: per rank (EP - 1) x tokens x h each way, against the
// all-to-all's top-k x tokens x h x (EP - 1) / EP, i.e. EP / top-k times the volume.
void NoteAllGatherDispatcher(AdapterContext& ctx, const Job& job) {
  const ConfigReader& c = ctx.config;
  if (!job.model.IsMoe() || job.parallel.ep < 2 || job.training.deepep) return;
  if (c.String("moe_token_dispatcher_type", "alltoall") != "allgather") return;
  // The factor stays symbolic: --target-ep-size may still change EP.
  ctx.notes.push_back(fmt::format(
      "moe_token_dispatcher_type allgather ({}) projected as the alltoall dispatcher: the "
      "all-gather dispatcher moves every token to every EP rank, EP / top-k times the "
      "all-to-all's volume (top-k {}), which the EP communication time does not include",
      c.Where("moe_token_dispatcher_type").ToString(), job.model.moe.router_topk));
}

// The schedule an experiment asks for, in the order Primus applies its patches: its own
// pipeline (patch_primus_pipeline with pp_algorithm; primus_pipeline.yaml), then Megatron's
// zero-bubble patch (patch_zero_bubble with enable_zero_bubble; zero_bubble.yaml: V shape when
// zero_bubble_v_schedule, its memory setup half/min/zb choosing the variant, and
// zero_bubble_max_pending_backward = 2·PP meaning ZB-H2), else 1F1B.
ScheduleKind ConfiguredSchedule(const ConfigReader& c, int pp) {
  if (c.Bool("patch_primus_pipeline", false)) {
    const std::string algorithm = c.String("pp_algorithm", "1f1b-interleaved");
    ScheduleKind kind = ScheduleKind::k1F1B;
    if (!LookupScheduleKind(algorithm, &kind)) {
      c.Fail("pp_algorithm",
             fmt::format("unknown pipeline algorithm '{}' (Primus's are 1f1b, 1f1b-interleaved, "
                         "zero-bubble, zero-bubble-heuristic, zbv-formatted, v-half, v-min)",
                         algorithm));
    }
    return kind;
  }
  if (!c.Bool("patch_zero_bubble", false) || !c.Bool("enable_zero_bubble", false)) {
    return ScheduleKind::k1F1B;
  }
  if (c.Bool("zero_bubble_v_schedule", false)) {
    const std::string setup = c.String("zero_bubble_v_schedule_mem_setup", "zb");
    if (setup == "half") return ScheduleKind::kZbvGreedyHalf;
    if (setup == "min") return ScheduleKind::kZbvGreedyMin;
    if (setup == "zb") return ScheduleKind::kZbvFormatted;
    c.Fail("zero_bubble_v_schedule_mem_setup",
           fmt::format("'{}' is not one of half, min, zb", setup));
  }
  const std::string pending = c.String("zero_bubble_max_pending_backward", "auto");
  int64_t count = 0;
  auto [ptr, ec] = std::from_chars(pending.data(), pending.data() + pending.size(), count);
  const bool numeric = ec == std::errc() && ptr == pending.data() + pending.size();
  return numeric && count >= 2 * static_cast<int64_t>(pp) ? ScheduleKind::kZeroBubbleH2
                                                          : ScheduleKind::kZeroBubbleH1;
}

class Megatron final : public FrameworkAdapter {
 public:
  std::string_view Name() const override { return "megatron"; }

  std::string Fp8Override() const override { return "fp8 hybrid"; }
  std::string ParallelKey(ParallelAxis axis) const override {
    switch (axis) {
      case ParallelAxis::kTensor: return "tensor_model_parallel_size";
      case ParallelAxis::kPipeline: return "pipeline_model_parallel_size";
      case ParallelAxis::kExpert: return "expert_model_parallel_size";
      case ParallelAxis::kContext: return "context_parallel_size";
    }
    return "";
  }

  std::vector<std::string> KnownKeys() const override {
    return std::vector<std::string>(std::begin(kMegatronKeys), std::end(kMegatronKeys));
  }

  void Build(AdapterContext& ctx, Job& job) const override {
    for (std::string_view key : kTrackedKeys) {
      if (ctx.config.Find(key) != nullptr) {
        ctx.provenance.Record(std::string(key), std::string(key), ctx.config.Where(key));
      }
    }
    RejectUnsupported(ctx, ctx.architecture);
    const ModelEntry* library = nullptr;
    if (ctx.module.model_file.empty()) {
      if (ctx.module.model_stem.empty()) {
        ThrowUserError(SourceLocation{ctx.module.experiment_file}, "modules.pre_trainer.model",
                       "missing: name the model file (e.g. llama3.1_8B.yaml)");
      }
      library =
          &FindLibraryModel({ctx.module.model_stem}, SourceLocation{ctx.module.experiment_file},
                            "modules.pre_trainer.model");
      RequireSupportedArchitecture(library->spec, "model library entry",
                                   SourceLocation{ctx.module.experiment_file});
      job.model = library->spec;
      ctx.notes.push_back(
          !ctx.library_model_origin.empty()
              ? "model " + ctx.library_model_origin
              : fmt::format("model {} from Sextant's model library ({} not read: no Primus "
                            "checkout; use --primus-path)",
                            library->spec.name, ctx.module.model_reference));
    } else {
      library = FindModel(ctx.module.model_stem);
      job.model = ModelSpec{};
      job.model.name = ctx.module.model_stem;
      if (library != nullptr) {
        job.model.family = library->spec.family;
        if (library->spec.architecture != Architecture::kTransformer) {
          RequireSupportedArchitecture(library->spec, "model library entry",
                                       SourceLocation{ctx.module.model_file});
        }
      }
    }
    ApplyArchitecture(ctx, job.model, library);
    if (library != nullptr && job.model.name == library->spec.name) {
      NameChangedArchitecture(library->spec, job.model, ctx.notes);
    }
    ApplyTraining(ctx, job);
    ApplyParallel(ctx, job);
    CheckCombinedOneFOneB(ctx.config, job);
    NoteAllGatherDispatcher(ctx, job);
    if (job.model.IsMoe() && job.model.moe.router_topk <= 0) {
      ctx.config.Fail("moe_router_topk", "must be positive for an MoE model");
    }
    if (const MoeSpec& moe = job.model.moe; moe.router_groups > 0 && job.model.IsMoe()) {
      // Megatron's group-limited routing (moe_utils.group_limited_topk) splits the experts
      // into equal groups and takes the top-k among the chosen groups' experts.
      if (moe.num_experts % moe.router_groups != 0) {
        ctx.config.Fail("moe_router_num_groups",
                        fmt::format("{} does not divide the {} experts into equal groups",
                                    moe.router_groups, moe.num_experts));
      }
      if (moe.router_group_topk <= 0 || moe.router_group_topk > moe.router_groups ||
          moe.router_group_topk * (moe.num_experts / moe.router_groups) < moe.router_topk) {
        ctx.config.Fail("moe_router_group_topk",
                        fmt::format("{} groups of the {} cannot hold the top-{} experts",
                                    moe.router_group_topk, moe.router_groups, moe.router_topk));
      }
    }
    if (job.model.num_layers <= 0 || job.model.hidden_size <= 0 ||
        job.model.num_attention_heads <= 0) {
      ThrowUserError(SourceLocation{ctx.module.model_file.empty() ? ctx.module.experiment_file
                                                                  : ctx.module.model_file},
                     "", "the model needs num_layers, hidden_size and num_attention_heads");
    }

    job.training.pipeline_schedule =
        ForVirtualStages(ConfiguredSchedule(ctx.config, job.parallel.pp), job.parallel.vpp);
    // Primus reads pp_algorithm only when its pipeline patch is on: a schedule named without it
    // does not run, and the user is told rather than left with 1F1B unawares.
    const std::string algorithm = ctx.config.String("pp_algorithm", "1f1b-interleaved");
    if (!ctx.config.Bool("patch_primus_pipeline", false) && algorithm != "1f1b" &&
        algorithm != "1f1b-interleaved") {
      ctx.notes.push_back(fmt::format(
          "pp_algorithm {} is not used: Primus applies it only with patch_primus_pipeline true "
          "(running {})",
          algorithm, ScheduleKindName(job.training.pipeline_schedule)));
    }
  }
};

}  // namespace

const FrameworkAdapter& MegatronAdapter() {
  static const Megatron adapter;
  return adapter;
}

}  // namespace sextant
