// One adapter per training framework turns that framework's configuration into the Job.
// Each lives in its own file (megatron_adapter.cc, megatron_bridge_adapter.cc,
// torchtitan_adapter.cc, maxtext_adapter.cc) and is listed once in framework_registry.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/primus_experiment.h"
#include "job/config_reader.h"
#include "job/job.h"
#include "model/model_library.h"

namespace sextant {

enum class ParallelAxis { kTensor, kPipeline, kExpert, kContext };

// Warnings of one kind (unknown keys, likely typos) listed one per line; the rest are counted
// in one line, so 30,000 unknown keys do not print 30,000 lines.
inline constexpr size_t kMaxWarningsOfOneKind = 20;

// What an adapter reads and what it hands back besides the Job.
struct AdapterContext {
  const ModuleConfig& module;
  // The final configuration: module defaults < model file < overrides < environment <
  // command line.
  ConfigReader config;
  // Model-architecture keys. The same tree as `config` when a model file was read; when
  // the model comes from Sextant's library, only the layers above the module defaults, so
  // trainer defaults never overwrite the library's dimensions.
  ConfigReader architecture;
  Provenance& provenance;
  std::vector<std::string>& notes;
  int gpus_per_node = 8;
  int requested_nodes = 0;  // 0 = the builder chooses the smallest node count that fits

  // Set by adapters whose data-parallel degree is fixed by the configuration (TorchTitan
  // data_parallel_shard_degree, MaxText mesh axes) rather than filled from the world size.
  int fixed_data_parallel = 0;  // 0 = DP = world / (TP x PP x CP)
  std::string fixed_data_parallel_key = {};
  // Global batch as a multiple of the data-parallel degree (TorchTitan local_batch_size
  // with global_batch_size -1), or per device (MaxText per_device_batch_size). 0 = unused.
  int64_t global_batch_per_data_rank = 0;
  double global_batch_per_device = 0;
  // Primus allow_padding_num_layers: layers need not divide evenly over the stages.
  bool allow_uneven_layers = false;
  // MaxText: micro-batches per step; MBS = GBS / DP / this. 0 = MBS set by the adapter.
  int64_t micro_batches_per_step = 0;
  // TorchTitan with pipeline parallelism: the local batch one pipeline schedule runs. A global
  // batch above local x DP is gradient accumulation: one whole schedule per step. 0 = unused.
  int64_t pipeline_local_batch = 0;
  // Megatron with the model from the library: where the entry's name came from, for the note
  // (empty: the module's model file was not read for want of a Primus checkout).
  std::string library_model_origin = {};
};

class FrameworkAdapter {
 public:
  virtual ~FrameworkAdapter() = default;
  virtual std::string_view Name() const = 0;
  // Configuration key of each parallel degree, where PRIMUS_TP/PP/EP/CP are applied.
  virtual std::string ParallelKey(ParallelAxis axis) const = 0;
  // The override that trains the transformer GEMMs in FP8 in this framework's own spelling
  // ("fp8 hybrid" for Megatron), named when a user gives another framework's; "" if none.
  virtual std::string Fp8Override() const { return ""; }
  // Keys the adapter understands, besides those present in the module defaults and model
  // file: the vocabulary for the unknown-override check.
  virtual std::vector<std::string> KnownKeys() const = 0;
  // Fills job.model, job.training and job.parallel (every degree except dp, which the
  // builder derives from the world size). Throws UserError naming file:line and key.
  virtual void Build(AdapterContext& context, Job& job) const = 0;
};

// Registered adapters, and lookup by framework name (case-insensitive); nullptr if none.
const std::vector<const FrameworkAdapter*>& FrameworkAdapters();
const FrameworkAdapter* FindFrameworkAdapter(std::string_view framework);

// Shared helpers for adapters.
// A library model looked up by each name in turn; UserError listing the names tried and
// the closest library names when none matches, and `remedy`: what the user can do instead.
const ModelEntry& FindLibraryModel(
    const std::vector<std::string>& names, const SourceLocation& where, std::string_view what,
    std::string_view remedy =
        "give a Primus checkout with --primus-path or set the dimensions as overrides");
// Refuses models whose architecture the projection does not model.
void RequireSupportedArchitecture(const ModelSpec& spec, std::string_view why,
                                  const SourceLocation& where);
// Real vocabulary size (before padding) for a tokenizer named in a config
// ("meta-llama/Llama-3.1-8B"), from the model library or a table of published
// tokenizer sizes; 0 if unknown.
int64_t VocabSizeForTokenizer(std::string_view tokenizer);

}  // namespace sextant
