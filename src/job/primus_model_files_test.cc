
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "config/environment.h"
#include "config/yaml_loader.h"
#include "job/moe_layer_frequency.h"
#include "model/model_library.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(CorpusPath("primus/primus/configs/models"));

// Model files are read as users' experiments read them: config/'s loader resolves `bases:` and
// `extends:` chains, job/ parses moe_layer_freq.
ConfigNode LoadModelFile(const std::string& path) {
  return LoadConfigFile(path, Environment::FromMap({}));
}

int64_t IntOr(const ConfigNode& cfg, const char* key, int64_t fallback) {
  const ConfigNode* v = cfg.Find(key);
  if (v == nullptr || v->IsNull()) return fallback;
  return ReadInt(*v, key).value();
}

bool BoolOr(const ConfigNode& cfg, const char* key, bool fallback) {
  const ConfigNode* v = cfg.Find(key);
  if (v == nullptr || v->IsNull()) return fallback;
  return ReadBool(*v, key).value();
}

std::string StringOr(const ConfigNode& cfg, const char* key, const std::string& fallback) {
  const ConfigNode* v = cfg.Find(key);
  if (v == nullptr || v->IsNull()) return fallback;
  return ReadString(*v, key).value();
}

// Differences between a Primus model file and the published architecture that are known and
// deliberate: the library follows the model's own config.json. Each must still be a real
// difference (checked), so a fix in Primus makes its line here fail and be removed.
const std::map<std::pair<std::string, std::string>, std::string>& KnownDifferences() {
  static const std::map<std::pair<std::string, std::string>, std::string> known = {
      {{"qwen3_4B", "kv_channels"},
       "Primus leaves kv_channels unset (2560/32 = 80); Qwen3-4B head_dim is 128"},
      {{"qwen3_32B", "kv_channels"},
       "Primus leaves kv_channels unset (5120/64 = 80); Qwen3-32B head_dim is 128"},
      {{"gpt_oss_20B", "moe_shared_expert_intermediate_size"},
       "Primus sets a 2880 shared expert; gpt-oss has none (config.json, model card)"},
      {{"gpt_oss_120B", "moe_shared_expert_intermediate_size"},
       "Primus sets a 2880 shared expert; gpt-oss has none (config.json, model card)"},
  };
  return known;
}

struct Comparison {
  std::string file;
  std::set<std::pair<std::string, std::string>> differences_seen;
  void Check(const std::string& stem, const std::string& key, int64_t yaml, int64_t library) {
    const auto id = std::make_pair(stem, key);
    if (KnownDifferences().count(id)) {
      EXPECT_NE(yaml, library) << file << ": " << key << " now agrees; remove the known difference";
      differences_seen.insert(id);
      return;
    }
    EXPECT_EQ(yaml, library) << file << ": " << key << " (Primus) differs from the library entry";
  }
};

// Re-reads every Primus Megatron model file that names a library entry, resolving its
// `extends` chain, and checks the transcribed dimensions against the entry.
TEST(PrimusModelFileTest, LibraryAgreesWithPrimusMegatronModelFiles) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  ASSERT_TRUE(fs::is_directory(kModels / "megatron")) << kModels;
  int compared = 0;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& item : fs::directory_iterator(kModels / "megatron")) {
    if (item.path().extension() != ".yaml") continue;
    const std::string stem = item.path().stem().string();
    const ModelEntry* entry = FindModel(stem);
    if (entry == nullptr || entry->spec.architecture != Architecture::kTransformer) continue;
    SCOPED_TRACE(stem);
    const ModelSpec& m = entry->spec;
    const ConfigNode cfg = LoadModelFile(item.path().string());
    Comparison c{item.path().filename().string(), {}};

    const int64_t layers = IntOr(cfg, "num_layers", -1);
    const int64_t hidden = IntOr(cfg, "hidden_size", -1);
    const int64_t heads = IntOr(cfg, "num_attention_heads", -1);
    c.Check(stem, "num_layers", layers, m.num_layers);
    c.Check(stem, "hidden_size", hidden, m.hidden_size);
    c.Check(stem, "num_attention_heads", heads, m.num_attention_heads);
    const int64_t num_experts = IntOr(cfg, "num_experts", 0);
    c.Check(stem, "num_experts", num_experts, m.moe.num_experts);
    const bool mla = BoolOr(cfg, "multi_latent_attention", false);
    c.Check(stem, "multi_latent_attention", mla, m.attention == AttentionType::kMultiLatent);
    std::vector<bool> pattern;
    if (num_experts > 0) {
      pattern = MoeLayerPattern(cfg.Find("moe_layer_freq"), layers);
      std::vector<bool> library_pattern;
      for (int64_t i = 0; i < m.num_layers; ++i) library_pattern.push_back(m.IsMoeLayer(i));
      EXPECT_EQ(pattern, library_pattern) << c.file << ": moe_layer_freq";
      c.Check(stem, "moe_router_topk", IntOr(cfg, "moe_router_topk", -1), m.moe.router_topk);
      c.Check(stem, "moe_ffn_hidden_size",
              IntOr(cfg, "moe_ffn_hidden_size", IntOr(cfg, "ffn_hidden_size", -1)),
              m.moe.ffn_hidden_size);
      c.Check(stem, "moe_shared_expert_intermediate_size",
              IntOr(cfg, "moe_shared_expert_intermediate_size", 0),
              m.moe.shared_expert_ffn_hidden_size);
    }
    // The dense MLP width matters only when some layer is dense.
    const bool has_dense_layer =
        num_experts == 0 || std::count(pattern.begin(), pattern.end(), false) > 0;
    if (has_dense_layer)
      c.Check(stem, "ffn_hidden_size", IntOr(cfg, "ffn_hidden_size", -1), m.ffn_hidden_size);
    if (mla) {
      c.Check(stem, "q_lora_rank", IntOr(cfg, "q_lora_rank", 0), m.mla.q_lora_rank);
      c.Check(stem, "kv_lora_rank", IntOr(cfg, "kv_lora_rank", -1), m.mla.kv_lora_rank);
      c.Check(stem, "qk_head_dim", IntOr(cfg, "qk_head_dim", -1), m.mla.qk_head_dim);
      c.Check(stem, "qk_pos_emb_head_dim", IntOr(cfg, "qk_pos_emb_head_dim", -1),
              m.mla.qk_pos_emb_head_dim);
      c.Check(stem, "v_head_dim", IntOr(cfg, "v_head_dim", -1), m.mla.v_head_dim);
    } else {
      const bool gqa = BoolOr(cfg, "group_query_attention", false);
      c.Check(stem, "num_query_groups", gqa ? IntOr(cfg, "num_query_groups", -1) : heads,
              m.num_query_groups);
      c.Check(stem, "kv_channels", IntOr(cfg, "kv_channels", heads > 0 ? hidden / heads : -1),
              m.kv_channels);
    }
    c.Check(stem, "mtp_num_layers", IntOr(cfg, "mtp_num_layers", 0), m.mtp_num_layers);
    if (IntOr(cfg, "vocab_size", -1) != -1) {
      c.Check(stem, "vocab_size", IntOr(cfg, "vocab_size", -1), m.vocab_size);
    }
    seen.insert(c.differences_seen.begin(), c.differences_seen.end());
    ++compared;
  }
  // 31 of the Primus Megatron model files describe library entries.
  EXPECT_GE(compared, 30);
  for (const auto& [id, why] : KnownDifferences()) {
    EXPECT_TRUE(seen.count(id)) << id.first << " " << id.second << " was not compared: " << why;
  }
}

// Every TorchTitan and MaxText model file in Primus resolves by its file stem (and MaxText's by
// its model_name), except the models the library does not carry.
TEST(PrimusModelFileTest, TorchTitanAndMaxTextModelFilesResolve) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::set<std::string> not_in_library = {"model_base", "gemma4_26B", "gemma4_31B"};
  int resolved = 0;
  for (const char* framework : {"torchtitan", "maxtext"}) {
    for (const auto& item : fs::directory_iterator(kModels / framework)) {
      if (item.path().extension() != ".yaml") continue;
      const std::string stem = item.path().stem().string();
      if (not_in_library.count(stem)) continue;
      EXPECT_NE(FindModel(stem), nullptr) << framework << "/" << stem;
      const ConfigNode cfg = LoadModelFile(item.path().string());
      const std::string model_name = StringOr(cfg, "model_name", "default");
      if (model_name != "default") {
        EXPECT_EQ(FindModel(model_name), FindModel(stem)) << stem;
      }
      ++resolved;
    }
  }
  EXPECT_GE(resolved, 40);
}

// MaxText's Grok-1 file spells out the dimensions in MaxText's own keys.
TEST(PrimusModelFileTest, LibraryAgreesWithMaxTextGrok1) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const ConfigNode cfg = LoadModelFile((kModels / "maxtext/grok1.yaml").string());
  const ModelSpec& m = FindModel("grok1")->spec;
  EXPECT_EQ(IntOr(cfg, "base_num_decoder_layers", -1), m.num_layers);
  EXPECT_EQ(IntOr(cfg, "base_emb_dim", -1), m.hidden_size);
  EXPECT_EQ(IntOr(cfg, "base_num_query_heads", -1), m.num_attention_heads);
  EXPECT_EQ(IntOr(cfg, "base_num_kv_heads", -1), m.num_query_groups);
  EXPECT_EQ(IntOr(cfg, "head_dim", -1), m.kv_channels);
  EXPECT_EQ(IntOr(cfg, "base_mlp_dim", -1), m.ffn_hidden_size);
  EXPECT_EQ(IntOr(cfg, "base_moe_mlp_dim", -1), m.moe.ffn_hidden_size);
  EXPECT_EQ(IntOr(cfg, "vocab_size", -1), m.vocab_size);
  EXPECT_EQ(IntOr(cfg, "num_experts", -1), m.moe.num_experts);
  EXPECT_EQ(IntOr(cfg, "num_experts_per_tok", -1), m.moe.router_topk);
  const ConfigNode* model_name = cfg.Find("model_name");  // from model_base.yaml
  ASSERT_NE(model_name, nullptr);
  EXPECT_EQ(model_name->scalar, "default");
}

// extends: later files win, and the file's own keys win over everything it extends.
TEST(PrimusModelFileTest, ExtendsChainMergesWithLaterWinning) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const ConfigNode cfg = LoadModelFile((kModels / "megatron/deepseek_v3.yaml").string());
  EXPECT_EQ(StringOr(cfg, "normalization", ""), "RMSNorm");  // llama_base.yaml over language_model
  EXPECT_EQ(IntOr(cfg, "moe_router_topk", -1), 8);           // deepseek_v3.yaml over its base (6)
  EXPECT_EQ(ReadDouble(*cfg.Find("hidden_dropout"), "hidden_dropout"), 0.0);  // not 0.1
  EXPECT_EQ(IntOr(cfg, "conv_L_cache", -1), 3);  // from primus_megatron_model.yaml
  EXPECT_EQ(cfg.Find("extends"), nullptr);
}

// Primus's hybrid model files name their bases with `bases:` instead of `extends:`.
TEST(PrimusModelFileTest, BasesKeyIsAnExtendsChain) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const ConfigNode cfg = LoadModelFile((kModels / "megatron/zebra_llama_1B.yaml").string());
  EXPECT_EQ(cfg.Find("bases"), nullptr);
  EXPECT_NE(cfg.Find("conv_L_cache"), nullptr);  // primus_megatron_model.yaml, via mamba_base
}

std::vector<bool> Pattern(const std::string& yaml_value, int64_t layers) {
  const ConfigNode root = ParseYaml("moe_layer_freq: " + yaml_value, "m.yaml");
  return MoeLayerPattern(root.Find("moe_layer_freq"), layers);
}

TEST(MoeLayerPatternTest, MegatronForms) {
  EXPECT_EQ(Pattern("2", 5), (std::vector<bool>{true, false, true, false, true}));  // i % 2 == 0
  EXPECT_EQ(Pattern("\"1\"", 3), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(Pattern("\"([0]*2+[1]*3)\"", 5), (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(Pattern("\"[1, 0]*2\"", 4), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(Pattern("[0, 1, 1]", 3), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(MoeLayerPattern(nullptr, 2), (std::vector<bool>{true, true}));  // unset: all MoE
}

TEST(MoeLayerPatternTest, MalformedValuesAreUserErrors) {
  for (const char* bad :
       {"\"([0]*2+[1]*3\"", "\"[2]*5\"", "\"[1]*4\"", "\"abc\"", "0", "\"[1,]*5+\"", "{a: 1}",
        "[1, [0], 1, 1, 1]", "\"[1]*99999999999\"", "\"(([1]*100000)*100000)\""}) {
    EXPECT_THROW(Pattern(bad, 5), UserError) << bad;
  }
  const std::string deep = "\"" + std::string(1000, '(') + "[1]" + std::string(1000, ')') + "\"";
  EXPECT_THROW(Pattern(deep, 1), UserError);
  try {
    Pattern("\"[1]*4\"", 5);
    ADD_FAILURE() << "a 4-entry pattern for 5 layers was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("m.yaml:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the pattern has 4 entries but num_layers is 5"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sextant
