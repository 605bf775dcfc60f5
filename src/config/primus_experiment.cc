#include "config/primus_experiment.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/yaml_loader.h"
#include "util/close_matches.h"

namespace fs = std::filesystem;

namespace sextant {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string RequireString(const ConfigNode& parent, std::string_view key, std::string_view path) {
  const ConfigNode* node = parent.Find(key);
  if (node == nullptr || node->IsNull()) {
    ThrowUserError(parent.where, path, "missing (required)");
  }
  std::optional<std::string> text = ReadString(*node, path);
  if (!text || text->empty()) ThrowUserError(node->where, path, "must be a non-empty string");
  return *text;
}

std::string Stem(const std::string& reference) {
  const std::string file = fs::path(reference).filename().string();
  std::string_view stem = file;  // trimmed as a view: GCC 12 misreads a shrinking resize
  for (std::string_view suffix : {".yaml", ".yml", ".toml"}) {
    if (stem.size() > suffix.size() && stem.ends_with(suffix)) {
      stem.remove_suffix(suffix.size());
      break;
    }
  }
  return std::string(stem);
}

std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) names.push_back(it->path().lexically_relative(dir).string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

const Environment& EnvOf(const ExperimentOptions& options, const Environment& fallback) {
  return options.env != nullptr ? *options.env : fallback;
}

void LoadModuleLayers(ModuleConfig& out, const ConfigNode& module, const ExperimentOptions& options,
                      const Environment& env) {
  const std::string config_name =
      module.Find("config") != nullptr
          ? RequireString(module, "config", "modules." + out.module_name + ".config")
          : std::string();
  // Module defaults: the Primus checkout first, else Sextant's own copy.
  if (!config_name.empty()) {
    std::vector<fs::path> candidates;
    if (!out.primus_path.empty()) {
      candidates.push_back(fs::path(out.primus_path) / "primus/configs/modules" / out.framework /
                           config_name);
    }
    if (!options.sextant_defaults_dir.empty()) {
      candidates.push_back(fs::path(options.sextant_defaults_dir) / out.framework / config_name);
    }
    for (const fs::path& candidate : candidates) {
      if (LookUpConfigPath(candidate, module.Find("config")->where,
                           "modules." + out.module_name + ".config",
                           config_name) != ConfigPathKind::kNone) {
        out.module_config_file = candidate.lexically_normal().string();
        out.defaults = LoadConfigFile(out.module_config_file, env, &out.files_read, &out.notes);
        break;
      }
    }
    if (out.module_config_file.empty()) {
      out.notes.push_back(fmt::format("module defaults {} for {} not found; built-in defaults used",
                                      config_name, out.framework));
    }
  }

  // Model file: the Primus checkout, else the model library by file stem (the adapter).
  if (const ConfigNode* model = module.Find("model"); model != nullptr && !model->IsNull()) {
    out.model_reference = RequireString(module, "model", "modules." + out.module_name + ".model");
    out.model_stem = Stem(out.model_reference);
    if (!out.primus_path.empty()) {
      const fs::path dir = fs::path(out.primus_path) / "primus/configs/models" / out.framework;
      const fs::path file = dir / out.model_reference;
      const std::string key = "modules." + out.module_name + ".model";
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) {
        out.notes.push_back(
            fmt::format("no model files for framework {} in the Primus checkout", out.framework));
      } else if (LookUpConfigPath(file, model->where, key, out.model_reference) ==
                 ConfigPathKind::kNone) {
        const std::string hint = DidYouMean(ClosestNames(out.model_reference, FilesIn(dir)));
        ThrowUserError(
            model->where, key,
            fmt::format("model file {} not found in {}{}", ShortText(out.model_reference),
                        dir.lexically_normal().string(), hint));
      } else {
        out.model_file = file.lexically_normal().string();
        out.model = LoadConfigFile(out.model_file, env, &out.model_files, &out.notes);
        out.files_read.insert(out.files_read.end(), out.model_files.begin(), out.model_files.end());
      }
    }
  }
  if (!out.model.IsMap()) out.model = ConfigNode::Map();
  if (!out.defaults.IsMap()) out.defaults = ConfigNode::Map();

  out.merged = out.defaults;
  MergeInto(out.merged, out.model);
  MergeInto(out.merged, out.overrides);
}

// A MaxText run config over the chain of files its `base_config` names, each relative to the
// file naming it (MaxText's pyconfig loads them so, the file last). MaxText's own base.yml
// ends the chain; where it is not next to the file, the adapter's copy of its defaults stands
// in and a note says so.
// `file` is `path` as already read.
ConfigNode OverMaxTextBases(ConfigNode file, const std::string& path, const Environment& env,
                            ModuleConfig& out, std::vector<std::string>& chain) {
  std::error_code canonical_ec;
  fs::path canonical = fs::weakly_canonical(path, canonical_ec);
  if (canonical_ec) canonical = fs::path(path);
  if (std::find(chain.begin(), chain.end(), canonical.string()) != chain.end()) {
    ThrowUserError(SourceLocation{path}, "base_config",
                   fmt::format("cycle: {} -> {}", fmt::join(chain, " -> "), path));
  }
  if (chain.size() >= 16) {
    ThrowUserError(SourceLocation{path}, "base_config", "more than 16 files in the chain");
  }
  chain.push_back(canonical.string());
  const ConfigNode* base = file.Find("base_config");
  if (base == nullptr || base->IsNull()) return file;
  const std::optional<std::string> name = ReadString(*base, "base_config");
  if (!name || name->empty()) ThrowUserError(base->where, "base_config", "must be a file name");
  const fs::path parent = fs::path(path).parent_path() / *name;
  if (LookUpConfigPath(parent, base->where, "base_config", *name) != ConfigPathKind::kRegularFile) {
    if (fs::path(*name).filename() == "base.yml") {
      out.notes.push_back(fmt::format(
          "MaxText's {} is not next to {}: its defaults as Sextant's MaxText adapter knows them",
          *name, path));
      return file;
    }
    ThrowUserError(base->where, "base_config",
                   fmt::format("{} not found next to the file", ShortText(*name)));
  }
  const std::string parent_path = parent.lexically_normal().string();
  ConfigNode merged = OverMaxTextBases(
      LoadConfigFile(parent_path, env, &out.files_read, &out.notes), parent_path, env, out, chain);
  MergeInto(merged, file);
  return merged;
}

}  // namespace

std::string FindEnclosingPrimusCheckout(const std::string& experiment_file) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::path(experiment_file), ec).parent_path();
  for (int depth = 0; depth < 16 && !dir.empty(); ++depth) {
    if (fs::is_directory(dir / "primus/configs/models", ec)) return dir.string();
    const fs::path parent = dir.parent_path();
    if (parent == dir) break;
    dir = parent;
  }
  return "";
}

ModuleConfig LoadPrimusExperiment(const std::string& path, const ExperimentOptions& options) {
  const Environment process = Environment::Process();
  const Environment& env = EnvOf(options, process);
  ModuleConfig out;
  out.experiment_file = path;
  ConfigNode experiment = LoadConfigFile(path, env, &out.files_read, &out.notes);

  const ConfigNode* modules = experiment.Find("modules");
  if (modules == nullptr &&
      (experiment.Find("model_name") != nullptr || experiment.Find("base_config") != nullptr)) {
    // MaxText's own run config (MaxText/configs/*.yml, what `python -m MaxText.train` and
    // launchers such as maxtext-slurm take): its keys over the files its base_config chain
    // names, then MaxText's base.yml defaults, with `model_name` naming the model ("default":
    // the dimensions written in the file). The same keys a Primus MaxText experiment overrides.
    ModuleConfig maxtext;
    maxtext.experiment_file = path;
    maxtext.module_name = "job";
    maxtext.framework = "maxtext";
    maxtext.files_read = out.files_read;
    maxtext.notes = out.notes;
    maxtext.notes.push_back(
        "read as a MaxText config (model_name or base_config, no Primus "
        "modules:)");
    std::vector<std::string> chain;
    maxtext.overrides = OverMaxTextBases(std::move(experiment), path, env, maxtext, chain);
    maxtext.defaults = ConfigNode::Map();
    maxtext.model = ConfigNode::Map();
    maxtext.merged = maxtext.overrides;
    return maxtext;
  }
  if (modules == nullptr || !modules->IsMap() || modules->fields.empty()) {
    // Primus's hardware files (examples/hardware_configs/*.yaml) hold one hardware_config: map.
    const bool hardware = experiment.IsMap() && experiment.Find("hardware_config") != nullptr;
    ThrowUserError(experiment.where, "modules",
                   hardware ? "not a Primus experiment file but a hardware config (a top-level "
                              "hardware_config:): give it with --hardware-config, and the "
                              "experiment with --config"
                            : "not a Primus experiment file: expected modules.pre_trainer with "
                              "framework, config, model and overrides (or, for a MaxText "
                              "config, model_name or base_config)");
  }
  const ConfigNode* module = modules->Find("pre_trainer");
  out.module_name = "pre_trainer";
  if (module == nullptr) {
    // SFT experiments describe a post_trainer; its memory and time are those of training.
    for (const auto& [name, value] : modules->fields) {
      if (value.IsMap() && value.Find("framework") != nullptr) {
        module = &value;
        out.module_name = name;
        break;
      }
    }
    if (module == nullptr) {
      ThrowUserError(modules->where, "modules",
                     "no module with a framework (expected pre_trainer)");
    }
    out.notes.push_back("projected module: modules." + out.module_name);
  }
  if (!module->IsMap())
    ThrowUserError(module->where, "modules." + out.module_name, "must be a map");
  // Primus's launcher reads the envelope keys and hands each module only its config, model and
  // overrides (primus/core/launcher/parser.py parse_meta_info, parse_trainer_module): anything
  // else at the top of the file never reaches a trainer, here or there.
  static const std::set<std::string, std::less<>> kEnvelope = {
      "work_group", "user_name", "exp_name", "workspace",
      "modules",    "platform",  "extends",  "env"};  // env: exported by the runtime
                                                      // (primus/core/runtime/train_runtime.py)
  std::string ignored;
  SourceLocation first{path};
  for (const auto& [key, value] : experiment.fields) {
    if (kEnvelope.count(key) != 0) continue;
    if (ignored.empty() && !value.key_where.file.empty()) first = value.key_where;
    ignored += (ignored.empty() ? "" : ", ") + key;
  }
  if (!ignored.empty()) {
    out.warnings.push_back(
        fmt::format("{}: {} outside `modules:` not applied: Primus passes a trainer only "
                    "modules.{}.overrides (move them there)",
                    first.ToString(), ignored, out.module_name));
  }
  out.framework =
      Lower(RequireString(*module, "framework", "modules." + out.module_name + ".framework"));
  out.env = ConfigNode::Map(experiment.where);
  if (const ConfigNode* env_block = experiment.Find("env"); env_block != nullptr) {
    if (env_block->IsMap()) {
      out.env = *env_block;
    } else if (!env_block->IsNull()) {
      ThrowUserError(env_block->where, "env", "must be a map of environment variables");
    }
  }

  if (const ConfigNode* overrides = module->Find("overrides"); overrides != nullptr) {
    if (overrides->IsMap()) {
      out.overrides = *overrides;
    } else if (!overrides->IsNull()) {
      ThrowUserError(overrides->where, "modules." + out.module_name + ".overrides",
                     "must be a map of keys");
    }
  }
  if (!out.overrides.IsMap()) out.overrides = ConfigNode::Map(module->where);

  out.primus_path = options.primus_path;
  if (out.primus_path.empty()) {
    out.primus_path = FindEnclosingPrimusCheckout(path);
    if (!out.primus_path.empty()) {
      out.notes.push_back("Primus checkout found above the experiment file: " + out.primus_path);
    }
  } else if (std::error_code ec;
             !fs::is_directory(fs::path(out.primus_path) / "primus/configs", ec)) {
    ThrowUserError(SourceLocation{ShortText(out.primus_path)}, "--primus-path",
                   "not a Primus checkout (no primus/configs directory)");
  }
  LoadModuleLayers(out, *module, options, env);
  return out;
}

ModuleConfig LoadFrameworkFile(const std::string& path, const std::string& framework,
                               const ExperimentOptions& options) {
  const Environment process = Environment::Process();
  const Environment& env = EnvOf(options, process);
  ModuleConfig out;
  out.experiment_file = path;
  out.module_name = "job";
  out.framework = Lower(framework);
  out.overrides = LoadConfigFile(path, env, &out.files_read, &out.notes);
  out.defaults = ConfigNode::Map();
  out.model = ConfigNode::Map();
  out.merged = out.overrides;
  return out;
}

}  // namespace sextant
