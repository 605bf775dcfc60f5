// sextant models list | show NAME: the built-in model library, exact parameter counts per
// component and FLOPs per token.
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "model/flop_count.h"
#include "model/model_library.h"
#include "model/parameter_count.h"
#include "report/console_table.h"
#include "report/table.h"
#include "util/close_matches.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant::cli {
namespace {

// Keys keep the order written here, so the output reads top-down like the human form.
using Json = nlohmann::ordered_json;

const char* ArchitectureName(Architecture a) {
  switch (a) {
    case Architecture::kTransformer: return "transformer";
    case Architecture::kStateSpace: return "state-space";
    case Architecture::kHybrid: return "hybrid";
    case Architecture::kDiffusion: return "diffusion";
    case Architecture::kDlrm: return "dlrm";
  }
  return "unknown";
}

bool Supported(const ModelSpec& m) { return m.architecture == Architecture::kTransformer; }

std::string AttentionText(const ModelSpec& m) {
  if (m.attention == AttentionType::kMultiLatent) return "MLA";
  if (m.num_query_groups == m.num_attention_heads) return "MHA";
  if (m.num_query_groups == 1) return "MQA";
  return "GQA";
}

std::string ExpertsText(const ModelSpec& m) {
  if (!m.IsMoe()) return "";
  std::string s = fmt::format("{} top-{}", m.moe.num_experts, m.moe.router_topk);
  if (m.moe.shared_expert_ffn_hidden_size > 0) s += " +shared";
  return s;
}

struct Counts {
  int64_t total = 0;
  int64_t active = 0;
};

Counts CountsOf(const ModelSpec& m) {
  if (!Supported(m)) return {};
  const ModelParams p = CountParameters(m);
  return {p.Total(), p.Active(m)};
}

// A published parameter count is a whole number of parameters, written as one.
Json PublishedCount(double count) {
  if (std::isfinite(count) && std::abs(count) < 9e15)
    return static_cast<int64_t>(std::llround(count));
  return count;
}

Json ListJson() {
  Json models = Json::array();
  for (const ModelEntry& e : ModelLibrary()) {
    const ModelSpec& m = e.spec;
    const Counts c = CountsOf(m);
    Json j = {{"name", m.name},
              {"family", m.family},
              {"architecture", ArchitectureName(m.architecture)},
              {"supported", Supported(m)},
              {"published_params", PublishedCount(e.published_params)},
              {"source", e.source},
              {"aliases", e.aliases}};
    if (Supported(m)) {
      // Megatron's names, as `models show` writes them; the short ones stay for scripts
      // that read them.
      j["num_layers"] = m.num_layers;
      j["layers"] = m.num_layers;
      j["hidden_size"] = m.hidden_size;
      j["num_attention_heads"] = m.num_attention_heads;
      j["num_query_groups"] = m.num_query_groups;
      j["attention"] = AttentionText(m);
      j["num_experts"] = m.moe.num_experts;
      j["moe_router_topk"] = m.moe.router_topk;
      j["router_topk"] = m.moe.router_topk;
      j["total_params"] = c.total;
      j["active_params"] = c.active;
    }
    if (e.published_active_params > 0)
      j["published_active_params"] = PublishedCount(e.published_active_params);
    models.push_back(std::move(j));
  }
  return {{"models", models}};
}

Table ModelListTable() {
  Table t("models", "Built-in model library",
          {{"name", "name"},
           {"family", "family"},
           {"layers", "layers"},
           {"hidden", "hidden"},
           {"heads", "heads/groups"},
           {"experts", "experts"},
           {"total", "total"},
           {"active", "active"},
           {"published", "published"}});
  for (const ModelEntry& e : ModelLibrary()) {
    const ModelSpec& m = e.spec;
    if (!Supported(m)) {
      t.AddRow({m.name, m.family, Cell{}, Cell{},
                std::string("(") + ArchitectureName(m.architecture) + ")", Cell{}, Cell{}, Cell{},
                FormatCount(e.published_params)});
      continue;
    }
    const Counts c = CountsOf(m);
    const std::string heads = m.attention == AttentionType::kMultiLatent
                                  ? fmt::format("{} MLA", m.num_attention_heads)
                                  : fmt::format("{}/{}", m.num_attention_heads, m.num_query_groups);
    t.AddRow({m.name, m.family, m.num_layers, m.hidden_size, heads, ExpertsText(m),
              FormatCount(c.total), FormatCount(c.active), FormatCount(e.published_params)});
  }
  t.AddNote("total/active: parameters, exact counts with the unpadded vocabulary.");
  t.AddNote("active: the parameters one token uses (top-k of the routed experts).");
  t.AddNote("heads/groups: query heads / key-value groups.");
  t.AddNote(
      "Non-transformer entries (state-space, diffusion) are recognised in configs, not projected.");
  return t;
}

const ModelEntry& LookupModel(const std::string& name) {
  const ModelEntry* e = FindModel(name);
  if (e != nullptr) return *e;
  ThrowUserError("unknown model '" + name + "'" + DidYouMean(SimilarModelNames(name)) +
                 " ('sextant models list' shows all)");
}

// One row per component; "layers" sums over all transformer layers.
struct Component {
  const char* key;
  const char* label;
  int64_t value;
};

std::vector<Component> Components(const ModelParams& p) {
  auto sum = [&](int64_t LayerParams::*f) {
    int64_t s = 0;
    for (const LayerParams& l : p.layers) s += l.*f;
    return s;
  };
  int64_t mtp = p.mtp_extra;
  for (const LayerParams& l : p.mtp_layers) mtp += l.Total();
  return {{"embedding", "embedding", p.embedding},
          {"attention", "attention (all layers)", sum(&LayerParams::attention)},
          {"attention_bias", "attention output bias + sinks", sum(&LayerParams::attention_bias)},
          {"norms", "layer norms", sum(&LayerParams::norms)},
          {"dense_mlp", "dense MLP", sum(&LayerParams::dense_mlp)},
          {"router", "MoE router", sum(&LayerParams::router)},
          {"routed_experts", "routed experts", sum(&LayerParams::routed_experts)},
          {"shared_experts", "shared experts", sum(&LayerParams::shared_experts)},
          {"final_norm", "final norm", p.final_norm},
          {"output_layer", "output layer (untied)", p.output_layer},
          {"mtp", "MTP modules", mtp}};
}

Json DimensionsJson(const ModelSpec& m) {
  Json j = {{"num_layers", m.num_layers},
            {"hidden_size", m.hidden_size},
            {"ffn_hidden_size", m.ffn_hidden_size},
            {"num_attention_heads", m.num_attention_heads},
            {"num_query_groups", m.num_query_groups},
            {"kv_channels", m.kv_channels},
            {"vocab_size", m.vocab_size},
            {"padded_vocab_size", m.PaddedVocabSize(1)},
            {"max_position_embeddings", m.max_position_embeddings},
            {"seq_length", m.seq_length},
            {"swiglu", m.swiglu},
            {"untie_embeddings_and_output_weights", m.untie_embeddings_and_output_weights},
            {"learned_position_embeddings", m.learned_position_embeddings},
            {"normalization", m.normalization == NormType::kRMSNorm ? "RMSNorm" : "LayerNorm"},
            {"norms_per_layer", m.norms_per_layer},
            {"qk_layernorm", m.qk_layernorm},
            {"add_qkv_bias", m.add_qkv_bias},
            {"add_bias_linear", m.add_bias_linear},
            {"attention_sinks", m.attention_sinks},
            {"attention", AttentionText(m)},
            {"sliding_window", m.sliding_window},
            {"sliding_window_period", m.sliding_window_period},
            {"mtp_num_layers", m.mtp_num_layers}};
  if (m.global_attention.kv_channels > 0 || m.global_attention.num_query_groups > 0 ||
      m.global_attention.shared_kv) {
    // Global layers with their own geometry (Gemma 4).
    const ModelSpec::LayerAttention global = m.AttentionOf(m.sliding_window_period - 1);
    j.update(Json{{"global_kv_channels", global.head_dim},
                  {"global_num_query_groups", global.kv_heads},
                  {"global_shared_kv", global.kv_tensors == 1}});
  }
  if (m.attention == AttentionType::kMultiLatent) {
    j["q_lora_rank"] = m.mla.q_lora_rank;
    j["kv_lora_rank"] = m.mla.kv_lora_rank;
    j["qk_head_dim"] = m.mla.qk_head_dim;
    j["qk_pos_emb_head_dim"] = m.mla.qk_pos_emb_head_dim;
    j["v_head_dim"] = m.mla.v_head_dim;
  }
  if (m.IsMoe()) {
    j["num_experts"] = m.moe.num_experts;
    j["moe_router_topk"] = m.moe.router_topk;
    j["moe_ffn_hidden_size"] = m.moe.ffn_hidden_size;
    j["moe_shared_expert_intermediate_size"] = m.moe.shared_expert_ffn_hidden_size;
    j["moe_router_bias"] = m.moe.router_bias;
    if (m.moe.router_groups > 0) {
      j["moe_router_num_groups"] = m.moe.router_groups;
      j["moe_router_group_topk"] = m.moe.router_group_topk;
    }
    j["num_moe_layers"] = m.NumMoeLayers();
  }
  return j;
}

void Show(const std::string& name, bool json) {
  const ModelEntry& e = LookupModel(name);
  const ModelSpec& m = e.spec;
  if (!Supported(m)) {
    if (json) {
      Json j = {{"name", m.name},
                {"family", m.family},
                {"architecture", ArchitectureName(m.architecture)},
                {"supported", false},
                {"published_params", PublishedCount(e.published_params)},
                {"source", e.source}};
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%s (%s, %s architecture): %s parameters published. Source: %s\n", m.name.c_str(),
                  m.family.c_str(), ArchitectureName(m.architecture),
                  FormatCount(e.published_params).c_str(), e.source.c_str());
      std::printf(
          "The projection model supports decoder-only transformers only; this entry is listed so "
          "that configurations naming it are recognised.\n");
    }
    return;
  }
  const ModelParams p = CountParameters(m);
  const int64_t total = p.Total();
  const int64_t active = p.Active(m);
  FlopInputs in;
  in.seq_length = m.seq_length;
  in.global_batch = 1;
  in.vocab_size = m.PaddedVocabSize(1);
  const double tokens = static_cast<double>(m.seq_length);
  const double model_flops = MegatronModelFlops(m, in) / tokens;
  const double recompute_flops = MegatronFullRecomputeFlops(m, in) / tokens;
  const double six_n = 6.0 * static_cast<double>(active);

  if (json) {
    Json components = Json::object();
    for (const Component& c : Components(p)) components[c.key] = c.value;
    Json j = {{"name", m.name},
              {"family", m.family},
              {"architecture", ArchitectureName(m.architecture)},
              {"supported", true},
              {"aliases", e.aliases},
              {"source", e.source},
              {"dimensions", DimensionsJson(m)},
              {"params", components},
              {"total_params", total},
              {"active_params", active},
              {"published_params", PublishedCount(e.published_params)},
              {"flops_per_token",
               {{"seq_length", m.seq_length},
                {"megatron_model", model_flops},
                {"megatron_full_recompute", recompute_flops},
                {"six_times_active_params", six_n}}}};
    if (e.published_active_params > 0)
      j["published_active_params"] = PublishedCount(e.published_active_params);
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }

  Table dims("dimensions", fmt::format("{} ({})", m.name, m.family),
             {{"key", "dimension"}, {"value", "value"}});
  const Json dimensions = DimensionsJson(m);
  for (const auto& [key, value] : dimensions.items()) {
    dims.AddRow({key, value.is_string() ? value.get<std::string>() : value.dump()});
  }
  dims.AddNote("Source: " + e.source);
  if (!e.aliases.empty()) {
    std::string a;
    for (const std::string& s : e.aliases) a += (a.empty() ? "" : ", ") + s;
    dims.AddNote("Also known as: " + a);
  }
  std::printf("%s\n", RenderConsoleTable(dims, 0).c_str());

  Table params("parameters", "Parameters by component (unpadded vocabulary)",
               {{"component", "component"}, {"params", "parameters"}, {"share", "share (%)", 2}});
  for (const Component& c : Components(p)) {
    if (c.value == 0) continue;
    params.AddRow(
        {c.label, c.value, 100.0 * static_cast<double>(c.value) / static_cast<double>(total)});
  }
  params.AddRow({std::string("total"), total, 100.0});
  params.AddRow({std::string("active per token"), active,
                 100.0 * static_cast<double>(active) / static_cast<double>(total)});
  params.AddNote(fmt::format(
      "Published: {} ({:+.2f}% difference). Total = {}.", FormatCount(e.published_params),
      100.0 * (static_cast<double>(total) - e.published_params) / e.published_params,
      FormatCount(static_cast<double>(total))));
  std::printf("%s\n", RenderConsoleTable(params, 0).c_str());

  Table flops("flops",
              fmt::format("Training FLOPs per token at seq {} (forward + backward)", m.seq_length),
              {{"formula", "formula"}, {"gflops", "GFLOP/token", 2}});
  flops.AddRow({std::string("Megatron model FLOPs (causal)"), model_flops / 1e9});
  flops.AddRow({std::string("with full recompute (hardware)"), recompute_flops / 1e9});
  flops.AddRow({std::string("6 x active parameters"), six_n / 1e9});
  flops.AddNote(fmt::format("Logits use the padded vocabulary ({}).", m.PaddedVocabSize(1)));
  std::printf("%s", RenderConsoleTable(flops, 0).c_str());
}

}  // namespace

void AddModelsCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("models", "The built-in model library");
  cmd->require_subcommand(1);

  auto* list = cmd->add_subcommand("list", "List every model with its size");
  auto list_json = std::make_shared<bool>(false);
  list->add_flag("--json", *list_json, "Machine-readable output");
  list->callback([list_json] {
    if (*list_json) {
      std::printf("%s\n", ListJson().dump(2).c_str());
    } else {
      std::printf("%s", RenderConsoleTable(ModelListTable(), 0).c_str());
    }
  });

  auto* show =
      cmd->add_subcommand("show", "Dimensions, parameters per component and FLOPs of one model");
  auto name = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  show->add_option("NAME", *name, "Model name or alias (e.g. llama3.1_8B, Llama-3.1-8B)")
      ->required();
  show->add_flag("--json", *show_json, "Machine-readable output");
  show->callback([name, show_json] { Show(*name, *show_json); });
}

}  // namespace sextant::cli
