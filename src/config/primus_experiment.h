// A Primus experiment file resolved into the configuration of its trainer module:
//   modules.pre_trainer.{framework, config, model, overrides}
// The module configuration is three layers, later wins (deep merge):
//   module defaults (`config:`, e.g. pre_trainer.yaml and what it extends)
//   < model file (`model:`, e.g. llama3.1_8B.yaml and what it extends)
//   < the experiment's `overrides:`.
// Environment and command-line layers are applied on top by the job builder.
#pragma once

#include <string>
#include <vector>

#include "config/config_node.h"
#include "config/environment.h"

namespace sextant {

struct ExperimentOptions {
  // Root of a Primus checkout (the directory holding primus/configs/). Empty: look for one
  // above the experiment file, else use Sextant's own defaults and model library.
  std::string primus_path;
  // Sextant's own module defaults: <dir>/<framework>/<config file>. Empty: none.
  std::string sextant_defaults_dir;
  const Environment* env = nullptr;  // nullptr = the process environment
};

struct ModuleConfig {
  std::string experiment_file;
  std::string module_name;  // "pre_trainer" (or "post_trainer" for SFT experiments)
  std::string framework;    // lower case: "megatron", "torchtitan", "maxtext", ...
  std::string primus_path;  // the checkout used, or empty

  std::string module_config_file;  // defaults file used; empty if none was found
  std::string model_reference;     // `model:` as written (after interpolation)
  std::string model_stem;          // file name without directory and .yaml: "llama3.1_8B"
  std::string model_file;          // model file used; empty = take the model from the library

  ConfigNode defaults;   // module defaults after extends
  ConfigNode model;      // model file after extends (an empty map when not read)
  ConfigNode overrides;  // the experiment's overrides
  ConfigNode merged;     // defaults < model < overrides
  // The experiment's top-level `env:`: variables Primus's runtime exports before the trainer
  // starts (primus/core/runtime/train_runtime.py), e.g. XLA_PYTHON_CLIENT_MEM_FRACTION. An
  // empty map when the file has none.
  ConfigNode env;

  std::vector<std::string> model_files;  // the model file's extends chain, bases first
  std::vector<std::string> files_read;   // every file read
  std::vector<std::string> notes;        // assumptions made while resolving
  std::vector<std::string> warnings;     // what the file says that does not take effect
};

// Reads a Primus experiment YAML. UserError (file:line, key) for a missing `modules:`,
// framework, an unreadable file, or a model file not found in the Primus checkout.
ModuleConfig LoadPrimusExperiment(const std::string& path, const ExperimentOptions& options);

// A framework's own job file without Primus's `modules:` wrapper (e.g. a TorchTitan
// TOML): the whole file is the module configuration for `framework`.
ModuleConfig LoadFrameworkFile(const std::string& path, const std::string& framework,
                               const ExperimentOptions& options);

// The Primus checkout that holds `experiment_file` (an ancestor directory with
// primus/configs/models), or empty.
std::string FindEnclosingPrimusCheckout(const std::string& experiment_file);

}  // namespace sextant
