// The registry of framework adapters, and helpers they share.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "job/framework_adapter.h"

namespace sextant {

// Defined in <framework>_adapter.cc. A static library drops object files nothing refers
// to, so self-registering globals would vanish; the list is spelled out here instead.
const FrameworkAdapter& MegatronAdapter();
const FrameworkAdapter& MegatronBridgeAdapter();
const FrameworkAdapter& TorchTitanAdapter();
const FrameworkAdapter& MaxTextAdapter();

const std::vector<const FrameworkAdapter*>& FrameworkAdapters() {
  static const std::vector<const FrameworkAdapter*> adapters = {
      &MegatronAdapter(), &MegatronBridgeAdapter(), &TorchTitanAdapter(), &MaxTextAdapter()};
  return adapters;
}

const FrameworkAdapter* FindFrameworkAdapter(std::string_view framework) {
  std::string key(framework);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const FrameworkAdapter* adapter : FrameworkAdapters()) {
    if (adapter->Name() == key) return adapter;
  }
  return nullptr;
}

const ModelEntry& FindLibraryModel(const std::vector<std::string>& names,
                                   const SourceLocation& where, std::string_view what,
                                   std::string_view remedy) {
  std::vector<std::string> tried;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    if (const ModelEntry* entry = FindModel(name)) return *entry;
    tried.push_back(name);
  }
  std::vector<std::string> similar;
  if (!tried.empty()) similar = SimilarModelNames(tried.front());
  ThrowUserError(
      where, what,
      fmt::format("model not in Sextant's model library (tried {}){}; {}", fmt::join(tried, ", "),
                  similar.empty() ? "" : fmt::format("; similar: {}", fmt::join(similar, ", ")),
                  remedy));
}

void RequireSupportedArchitecture(const ModelSpec& spec, std::string_view why,
                                  const SourceLocation& where) {
  std::string_view kind;
  switch (spec.architecture) {
    case Architecture::kTransformer: return;
    case Architecture::kStateSpace: kind = "state-space (Mamba) model"; break;
    case Architecture::kHybrid: kind = "hybrid attention / state-space model"; break;
    case Architecture::kDiffusion: kind = "diffusion model"; break;
    case Architecture::kDlrm: kind = "recommendation (DLRM) model"; break;
  }
  ThrowUserError(where, "",
                 fmt::format("unsupported architecture: {} {}{}; Sextant projects decoder-only "
                             "transformer language models (dense and MoE)",
                             kind, spec.name, why.empty() ? "" : fmt::format(" ({})", why)));
}

int64_t VocabSizeForTokenizer(std::string_view tokenizer) {
  if (tokenizer.empty()) return 0;
  // "org/Name-Instruct" and "org/Name-hf" share the base model's vocabulary.
  std::string_view base = tokenizer.substr(
      tokenizer.rfind('/') == std::string_view::npos ? 0 : tokenizer.rfind('/') + 1);
  for (std::string_view suffix : {"-Instruct", "-instruct", "-hf", "-Base", "-base"}) {
    if (base.size() > suffix.size() && base.ends_with(suffix)) base.remove_suffix(suffix.size());
  }
  const std::string name(base);
  if (const ModelEntry* entry = FindModel(name); entry != nullptr && entry->spec.vocab_size > 0) {
    return entry->spec.vocab_size;
  }
  // Tokenizers of models the library does not hold: vocab_size of each model's Hugging
  // Face config.json (the embedding rows the checkpoint ships with).
  struct Known {
    std::string_view prefix;
    int64_t vocab;
  };
  static constexpr Known kKnown[] = {
      {"meta-llama/Llama-2-", 32000},
      {"meta-llama/Llama-3", 128256},
      {"meta-llama/Meta-Llama-3", 128256},
      {"meta-llama/Llama-4-", 202048},
      {"mistralai/Mixtral-8x7B-v0.1", 32000},
      {"mistralai/Mixtral-8x22B-v0.1", 32000},
      {"Qwen/Qwen2.5-3B", 151936},
      {"Qwen/Qwen2.5-7B", 152064},
      {"Qwen/Qwen2.5-14B", 152064},
      {"Qwen/Qwen2.5-32B", 152064},
      {"Qwen/Qwen2.5-72B", 152064},
      {"Qwen/Qwen3-", 151936},
      {"deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 151936},
      {"deepseek-ai/DeepSeek-V2", 102400},  // also DeepSeek-V2-Lite
      {"deepseek-ai/DeepSeek-V3", 129280},
      {"moonshotai/Kimi-K2", 163840},
      {"MiniMaxAI/MiniMax-M2", 200064},
      {"THUDM/glm-4-9b", 151552},
      {"openai/gpt-oss-", 201088},
  };
  for (const Known& known : kKnown) {
    if (tokenizer.starts_with(known.prefix)) return known.vocab;
  }
  return 0;
}

}  // namespace sextant
