#include "job/job_builder.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/primus_experiment.h"
#include "config/yaml_writer.h"
#include "hardware/hardware_library.h"
#include "job/framework_adapter.h"
#include "job/job_validation.h"
#include "job/lora_adapter.h"
#include "job/size_limits.h"
#include "parallel/pipeline_layout.h"
#include "util/checked_math.h"
#include "util/close_matches.h"
#include "util/file_io.h"

namespace fs = std::filesystem;

namespace sextant {
namespace {

// Sextant's own data (bundled example, module defaults): $SEXTANT_DATA_DIR, else the
// source tree the program was built from.
std::string DataDir(const Environment& env) {
  if (std::optional<std::string> dir = env.Get("SEXTANT_DATA_DIR"); dir && !dir->empty())
    return *dir;
  return SEXTANT_SOURCE_DIR;
}

int64_t ParseIntFrom(std::string_view text, const std::string& origin) {
  ConfigNode node = ConfigNode::Scalar(std::string(text), SourceLocation{origin});
  const std::optional<int64_t> value = ReadInt(node, "");
  if (!value) ThrowUserError(SourceLocation{origin}, "", "expected an integer, found nothing");
  return *value;
}

std::set<std::string> KnownKeys(const ModuleConfig& module, const FrameworkAdapter& adapter) {
  std::set<std::string> known;
  for (const ConfigNode* tree : {&module.defaults, &module.model, &module.overrides}) {
    for (const auto& [key, value] : tree->fields) known.insert(key);
    for (std::string& path : LeafPaths(*tree)) known.insert(std::move(path));
  }
  for (std::string& key : adapter.KnownKeys()) known.insert(std::move(key));
  return known;
}

// An experiment's override that no module default or model file holds and the adapter does not
// read, but that is a typo away from a key that is (1 edit, 2 for keys of 12 letters or more,
// ignoring case and separators; farther, it is more likely an argument of its own): Primus merges
// it onto Megatron's args, where nothing reads it (primus/core/config/schema_check.py: "every
// adapter takes unknown keys silently"), so the run keeps the default the user meant to change. A
// warning, not an error: a key with no near neighbour may be a real argument the defaults do not
// list.
void WarnAboutMistypedOverrides(const ModuleConfig& module, const FrameworkAdapter& adapter,
                                std::vector<std::string>& warnings) {
  if (module.framework != "megatron" || module.module_config_file.empty()) return;
  std::set<std::string> known;
  for (const ConfigNode* tree : {&module.defaults, &module.model}) {
    for (const auto& [key, value] : tree->fields) known.insert(key);
  }
  for (std::string& key : adapter.KnownKeys()) known.insert(std::move(key));
  // Known keys by folded length: a key is compared only with those whose length is within the
  // edits allowed (a longer difference is more edits than that).
  std::map<size_t, std::vector<std::pair<std::string, const std::string*>>> by_length;
  for (const std::string& name : known) {
    std::string folded = FoldName(name);
    by_length[folded.size()].emplace_back(std::move(folded), &name);
  }
  size_t found = 0;
  for (const auto& [key, value] : module.overrides.fields) {
    if (known.contains(key)) continue;
    const std::string folded = FoldName(key);
    if (folded.size() > kMaxSuggestedNameLength) continue;  // no key is near a paragraph
    // One edit for a short key ("stage" is not "save"), two from 12 letters on.
    const size_t allowed = folded.size() >= 12 ? 2 : 1;
    std::vector<std::pair<size_t, std::string>> near;
    for (auto it = by_length.lower_bound(folded.size() > allowed ? folded.size() - allowed : 0);
         it != by_length.end() && it->first <= folded.size() + allowed; ++it) {
      for (const auto& [other, name] : it->second) {
        const size_t d = BoundedEditDistance(folded, other, allowed);
        if (d <= allowed) near.emplace_back(d, *name);
      }
    }
    if (near.empty()) continue;
    if (++found > kMaxWarningsOfOneKind) continue;
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> close;
    for (size_t i = 0; i < near.size() && i < 3; ++i) close.push_back(near[i].second);
    const std::string where = value.key_where.ToString();
    warnings.push_back(fmt::format(
        "{}{} is in no module default or model file and Sextant does not read it: Megatron "
        "receives it and nothing reads it, so the default stays{}",
        where.empty() ? "" : where + ": ", ShortText(key), DidYouMean(close)));
  }
  if (found > kMaxWarningsOfOneKind) {
    warnings.push_back(fmt::format(
        "... and {} more overrides a typo away from a module default or model key (not listed)",
        found - kMaxWarningsOfOneKind));
  }
}

// The GPU: --gpu-arch, $PRIMUS_GPU_ARCH, a directory of the experiment path named after a
// GPU (Primus keeps examples under configs/<GPU>/), else MI300X as Primus assumes.
const GpuSpec& ChooseGpu(const JobRequest& request, const Environment& env,
                         const std::string& config_path, std::vector<std::string>& notes) {
  std::string name = request.gpu_arch;
  std::string origin = "--gpu-arch";
  if (name.empty()) {
    if (std::optional<std::string> value = env.Get("PRIMUS_GPU_ARCH"); value && !value->empty()) {
      name = *value;
      origin = "$PRIMUS_GPU_ARCH";
    }
  }
  if (name.empty()) {
    // The whole path, however it was typed: a relative "x.yaml" inside MI355X/ names it too.
    std::error_code ec;
    fs::path absolute = fs::absolute(config_path, ec);
    if (ec) absolute = config_path;
    for (const fs::path& part : absolute.lexically_normal().parent_path()) {
      if (part.string().size() >= 4 && FindGpu(part.string()) != nullptr) {
        name = part.string();
        origin = "directory";
      }
    }
  }
  if (name.empty() && fs::path(config_path).filename() == "llama3.1_8B-BF16-pretrain.yaml" &&
      fs::path(config_path).parent_path().filename() == "examples") {
    name = "MI300X";  // the bundled default example is written for one MI300X node
    origin = "default";
    notes.push_back(
        "GPU MI300X, as the bundled default example states; use --gpu-arch to change it");
  }
  if (name.empty()) {
    name = "MI300X";
    origin = "default";
    notes.push_back("GPU not named in the config: assumed MI300X (Primus default); use --gpu-arch");
  }
  const GpuSpec* gpu = FindGpu(name);
  if (gpu == nullptr) {
    ThrowUserError(SourceLocation{origin == "directory" ? config_path : ""}, origin,
                   fmt::format("unknown GPU \"{}\"{}; `sextant hardware list` shows the library",
                               name, DidYouMean(SimilarGpuNames(name))));
  }
  if (origin == "directory") {
    // By its library name: Primus's MLPerf directories say "MI355" for the MI355X.
    notes.push_back(
        fmt::format("GPU {} from the experiment's directory name{}; use --gpu-arch "
                    "to change it",
                    gpu->name, name == gpu->name ? "" : " " + name));
  } else if (origin != "default") {
    // An architecture code (gfx950) can stand for several products: say which one was taken.
    const std::vector<std::string> same_arch = OtherGpusOfArch(*gpu, name);
    notes.push_back(fmt::format("GPU {} from {} {}{}", gpu->name, origin, name,
                                same_arch.empty()
                                    ? ""
                                    : fmt::format(" ({} is also {}: name the GPU to choose)", name,
                                                  fmt::join(same_arch, ", "))));
  }
  return *gpu;
}

// PRIMUS_TP/PP/EP/CP act where the configuration writes ${PRIMUS_TP...}, as in Primus, which
// substitutes them and nothing more (its examples write
// "tensor_model_parallel_size: ${PRIMUS_TP:1}"); a set variable the files never reference is
// reported and not applied. Then the command-line overrides, on top of `tree`.
void ApplyUpperLayers(const JobRequest& request, const Environment& env, const ModuleConfig& module,
                      const FrameworkAdapter& adapter, std::vector<ConfigNode*> trees,
                      std::vector<std::string>& notes) {
  const std::pair<const char*, ParallelAxis> kEnvironment[] = {
      {"PRIMUS_TP", ParallelAxis::kTensor},
      {"PRIMUS_PP", ParallelAxis::kPipeline},
      {"PRIMUS_EP", ParallelAxis::kExpert},
      {"PRIMUS_CP", ParallelAxis::kContext}};
  for (const auto& [variable, axis] : kEnvironment) {
    const bool referenced = env.WasRead(variable);  // before Get, which marks it read
    const std::optional<std::string> value = env.Get(variable);
    if (!value || value->empty()) continue;
    const std::string origin = std::string("$") + variable;
    ParseIntFrom(*value, origin);  // reject non-numbers here, where the origin is clear
    if (referenced) {
      notes.push_back(
          fmt::format("{}={} from the environment, where the configuration writes "
                      "${{{}}}",
                      variable, *value, variable));
    } else {
      notes.push_back(fmt::format(
          "{}={} is set but the configuration never writes ${{{}}}: not applied (Primus "
          "substitutes it only there); --{} sets {}",
          variable, *value, variable, adapter.ParallelKey(axis), adapter.ParallelKey(axis)));
    }
  }
  if (request.overrides.empty()) return;
  const std::set<std::string> known_set = KnownKeys(module, adapter);
  const std::vector<std::string> known(known_set.begin(), known_set.end());
  for (const auto& [key, value] : request.overrides) {
    if (known_set.count(key) == 0) {
      std::string typed = "--" + key;
      std::replace(typed.begin(), typed.end(), '_', '-');
      // Errors name the flag as the user wrote it.
      const auto as_typed = request.override_flags.find(key);
      const std::string flag =
          as_typed != request.override_flags.end() ? as_typed->second : "--" + key;
      // A Megatron name given to another framework, or a launcher's flag: name what this
      // framework or command calls it.
      std::string hint;
      const FrameworkAdapter* megatron = FindFrameworkAdapter("megatron");
      for (ParallelAxis axis : {ParallelAxis::kTensor, ParallelAxis::kPipeline,
                                ParallelAxis::kExpert, ParallelAxis::kContext}) {
        if (megatron != nullptr && key == megatron->ParallelKey(axis)) {
          hint = fmt::format("; {} calls it --{}", adapter.Name(), adapter.ParallelKey(axis));
        }
      }
      if ((key == "fp8" || key == "fp8_recipe") && !adapter.Fp8Override().empty()) {
        hint = fmt::format("; {} trains in FP8 with --{}", adapter.Name(), adapter.Fp8Override());
      }
      if (key == "nnodes" || key == "num_nodes" || key == "nodes")
        hint = "; the node count is --target-nodes";
      if (key == "gpus_per_node")
        hint = "; GPUs per node come from $GPUS_PER_NODE or --hardware-config";
      if (hint.empty()) {
        // Not a name this framework spells differently: a misspelt command flag or key. A
        // configuration key the user nearly typed (underscores: a Primus/Megatron key) comes
        // before the command's flags that look alike.
        const std::vector<std::string> flags = ClosestNames(typed, request.command_flags);
        const std::vector<std::string> keys = ClosestNames(key, known);
        if (!flags.empty() && !keys.empty() && key.find('_') != std::string::npos &&
            std::find(flags.begin(), flags.end(), typed) == flags.end()) {
          std::vector<std::string> both;
          for (const std::string& k : keys) both.push_back("--" + k);
          both.insert(both.end(), flags.begin(), flags.end());
          ThrowUserError(SourceLocation{flag}, "",
                         fmt::format("unknown configuration key \"{}\" for {}{}", key,
                                     adapter.Name(), DidYouMean(both)));
        }
        if (!flags.empty()) {
          // The command's flag itself, typed with underscores: say what differs.
          const bool underscores = flags.size() == 1 && flags.front() == typed;
          ThrowUserError(
              SourceLocation{underscores ? "--" + key : typed}, "",
              fmt::format("unknown option (and not a configuration key of {}){}{}", adapter.Name(),
                          DidYouMean(flags),
                          underscores ? " (the command's flag is written with dashes)" : ""));
        }
        hint = DidYouMean(keys);
      }
      ThrowUserError(SourceLocation{flag}, "",
                     fmt::format("unknown configuration key \"{}\" for {} (not in the module "
                                 "defaults, the model file or the known {} arguments){}",
                                 key, adapter.Name(), adapter.Name(), hint));
    }
    for (ConfigNode* tree : trees)
      tree->SetPath(key, ConfigNode::Scalar(value, SourceLocation{"--" + key}));
  }
}

// At a node count the user asked for (or the fewest that fit, when the configuration does not
// fix the data-parallel size), the configured global batch may not split into whole
// micro-batches over the new data-parallel size. Primus then rounds the micro-batch count down
// (at least one) and projects (research/primus-projection.md §3.9: n_mb = GBS // (MBS·DP),
// 0 forced to 1); so does this, with the global batch it really runs and a warning. A global
// batch set on the command line is the user's own number and stays an error.
void RoundBatchToScale(Job& job, const JobRequest& request, const Provenance& provenance) {
  TrainingSettings& t = job.training;
  const int64_t per_step = t.micro_batch_size * job.parallel.dp;
  if (request.global_batch_size > 0 || provenance.FromCommandLine("global_batch_size") ||
      per_step <= 0 || t.global_batch_size <= 0 || t.global_batch_size % per_step == 0) {
    return;
  }
  // Rounding stands for a data-parallel size the configuration was not written for. A
  // micro-batch size asked for on the command line that the global batch is no multiple of
  // fits no scale: Megatron refuses such a job (global_batch_size % (micro_batch_size x DP)).
  if ((request.micro_batch_size > 0 || provenance.FromCommandLine("micro_batch_size")) &&
      t.global_batch_size % t.micro_batch_size != 0) {
    ThrowUserError(fmt::format(
        "global_batch_size {}{} is not a multiple of micro_batch_size {}{}: no data-parallel "
        "size splits it into whole micro-batches; give a --global_batch_size that is",
        t.global_batch_size, provenance.Describe("global_batch_size"), t.micro_batch_size,
        provenance.Describe("micro_batch_size")));
  }
  const int64_t micro_batches = std::max<int64_t>(1, t.global_batch_size / per_step);
  const int64_t rounded = micro_batches * per_step;
  job.warnings.push_back(fmt::format(
      "global_batch_size {}{} does not split over micro_batch_size {} x data-parallel size {} "
      "at {} node{}: projected with {} micro-batch{} per rank, a global batch of {} (as Primus "
      "rounds)",
      t.global_batch_size, provenance.Describe("global_batch_size"), t.micro_batch_size,
      job.parallel.dp, job.cluster.num_nodes, job.cluster.num_nodes == 1 ? "" : "s", micro_batches,
      micro_batches == 1 ? "" : "es", rounded));
  t.unrounded_global_batch_size = t.global_batch_size;
  t.global_batch_size = rounded;
}

// More GPUs than any cluster: keeps every product with the world size far from overflow.
constexpr int64_t kMaxWorld = int64_t{1} << 30;

// World size and data parallelism: DP = world / (TP x PP x CP).
void ResolveWorld(const AdapterContext& ctx, const JobRequest& request, Job& job,
                  Provenance& provenance, std::vector<std::string>& notes) {
  ParallelPlan& p = job.parallel;
  const int64_t gpus_per_node = job.cluster.gpus_per_node;
  if (gpus_per_node < 1 || gpus_per_node > 1024) {
    ThrowUserError(fmt::format("{} GPUs per node: must be between 1 and 1024", gpus_per_node));
  }
  const int64_t dense = static_cast<int64_t>(p.tp) * p.pp * p.cp;
  const int64_t experts = static_cast<int64_t>(p.etp) * p.ep * p.pp;
  int64_t nodes = ctx.requested_nodes;
  if (ctx.fixed_data_parallel > 0) {
    const int64_t world =
        CheckedMul(dense, ctx.fixed_data_parallel).value_or(std::numeric_limits<int64_t>::max());
    if (world > kMaxWorld) {
      ThrowUserError(fmt::format("{} = {} and TP x PP x CP = {} make more than {} GPUs",
                                 ctx.fixed_data_parallel_key, ctx.fixed_data_parallel, dense,
                                 kMaxWorld));
    }
    if (world % gpus_per_node != 0) {
      ThrowUserError(fmt::format(
          "{} = {} and TP x PP x CP = {} make {} GPUs, not a whole number of {}-GPU nodes",
          ctx.fixed_data_parallel_key, ctx.fixed_data_parallel, dense, world, gpus_per_node));
    }
    if (nodes > 0 && nodes != world / gpus_per_node) {
      ThrowUserError(fmt::format(
          "{} nodes requested, but {} = {} and TP x PP x CP = {} fix {} GPUs ({} nodes)", nodes,
          ctx.fixed_data_parallel_key, ctx.fixed_data_parallel, dense, world,
          world / gpus_per_node));
    }
    nodes = world / gpus_per_node;
  } else if (nodes <= 0) {
    // The fewest nodes whose GPUs both the dense and the expert grids divide.
    for (nodes = 1; nodes <= 1'000'000; ++nodes) {
      const int64_t world = nodes * gpus_per_node;
      if (world % dense == 0 && world % experts == 0) break;
    }
    if (nodes > 1'000'000)
      ThrowUserError("no node count up to 1,000,000 fits the parallel configuration");
    job.fewest_nodes_chosen = true;
    notes.push_back(fmt::format(
        "{} node(s) of {} GPUs{}: the fewest that fit TP x PP x CP = {} and ETP x EP x PP = {}; "
        "use --target-nodes for more",
        nodes, gpus_per_node,
        gpus_per_node > 8 ? " (the GPU's NVLink domain; $GPUS_PER_NODE sets another node size)"
                          : "",
        dense, experts));
  }
  job.cluster.num_nodes = static_cast<int>(nodes);
  const int64_t world = job.cluster.WorldSize();
  if (world % dense != 0) {
    ThrowUserError(fmt::format(
        "tensor_model_parallel_size {} x pipeline_model_parallel_size {} x context_parallel_size "
        "{} = {} does not divide the {} GPUs of {} node(s){}{}",
        p.tp, p.pp, p.cp, dense, world, nodes, provenance.Describe("tensor_model_parallel_size"),
        request.target_nodes > 0 ? " (--target-nodes)" : ""));
  }
  p.dp = static_cast<int>(world / dense);

  TrainingSettings& t = job.training;
  if (t.global_batch_size <= 0) {
    if (ctx.global_batch_per_data_rank > 0) {
      t.global_batch_size = ctx.global_batch_per_data_rank * p.dp;
    } else if (ctx.global_batch_per_device > 0) {
      const double global = ctx.global_batch_per_device * static_cast<double>(world);
      if (!(global <= static_cast<double>(SizeRangeOf("global_batch_size")->max))) {
        ThrowUserError(
            fmt::format("{} sequences per GPU and step x {} GPUs is more than {} sequences",
                        ctx.global_batch_per_device, world, SizeRangeOf("global_batch_size")->max));
      }
      if (std::abs(global - std::round(global)) > 1e-9) {
        ThrowUserError(fmt::format(
            "{} sequences per GPU and step x {} GPUs is not a whole number of sequences",
            ctx.global_batch_per_device, world));
      }
      t.global_batch_size = static_cast<int64_t>(std::llround(global));
    } else {
      t.global_batch_size = t.micro_batch_size * p.dp;
      notes.push_back(fmt::format(
          "global_batch_size not set: {} = micro_batch_size x DP (no gradient accumulation)",
          t.global_batch_size));
    }
    if (t.global_batch_size % p.dp == 0) t.sequences_per_data_rank = t.global_batch_size / p.dp;
  }
  if (ctx.pipeline_local_batch > 0 && p.dp > 0 &&
      t.global_batch_size > ctx.pipeline_local_batch * p.dp) {
    // torchtitan train.py: gradient_accumulation_steps = global / (local x DP), each step a
    // complete pipeline schedule over local / pipeline_parallel_microbatch_size micro-batches.
    const int64_t steps = t.global_batch_size / (ctx.pipeline_local_batch * p.dp);
    const int64_t per_schedule =
        ctx.pipeline_local_batch / std::max<int64_t>(1, t.micro_batch_size);
    notes.push_back(fmt::format(
        "torchtitan runs {} gradient-accumulation steps per iteration, each a pipeline schedule "
        "of {} micro-batch{} (local_batch_size {} / microbatch size {}) with its own fill and "
        "drain; projected as one schedule of {} micro-batches, whose bubble is {}x smaller",
        steps, per_schedule, per_schedule == 1 ? "" : "es", ctx.pipeline_local_batch,
        t.micro_batch_size, t.NumMicroBatches(p.dp), steps));
  }
  if (ctx.micro_batches_per_step > 0) {
    const int64_t per_rank = t.global_batch_size / std::max(1, p.dp);
    if (t.global_batch_size % p.dp != 0 || per_rank % ctx.micro_batches_per_step != 0 ||
        per_rank / ctx.micro_batches_per_step < 1) {
      ThrowUserError(fmt::format(
          "global batch {} does not split into DP {} x {} micro-batches of whole sequences",
          t.global_batch_size, p.dp, ctx.micro_batches_per_step));
    }
    t.micro_batch_size = per_rank / ctx.micro_batches_per_step;
  }
}

}  // namespace

std::string MergedConfigurationYaml(const Job& job) {
  if (job.configuration == nullptr) return "";
  return "# Merged configuration of " + job.name + ", as sextant read it\n" +
         ToYaml(*job.configuration);
}

std::string DefaultExamplePath() {
  return DataDir(Environment::Process()) + "/examples/llama3.1_8B-BF16-pretrain.yaml";
}

Job BuildJob(const JobRequest& request) {
  const Environment env =
      request.use_environment ? Environment::Process() : Environment::FromMap({});
  std::vector<std::string> notes;

  // 1. The configuration file and its layers.
  const bool is_default = request.config_path.empty();
  const std::string path =
      is_default ? DataDir(env) + "/examples/llama3.1_8B-BF16-pretrain.yaml" : request.config_path;
  ExperimentOptions options;
  options.primus_path = request.primus_path;
  if (options.primus_path.empty()) options.primus_path = env.Get("PRIMUS_PATH").value_or("");
  options.sextant_defaults_dir = DataDir(env) + "/examples/defaults/modules";
  options.env = &env;
  ModuleConfig module = path.ends_with(".toml") ? LoadFrameworkFile(path, "torchtitan", options)
                                                : LoadPrimusExperiment(path, options);
  notes.insert(notes.end(), module.notes.begin(), module.notes.end());
  const FrameworkAdapter* adapter = FindFrameworkAdapter(module.framework);
  if (adapter == nullptr) {
    std::vector<std::string> names;
    for (const FrameworkAdapter* known : FrameworkAdapters()) names.emplace_back(known->Name());
    ThrowUserError(SourceLocation{path}, "framework",
                   fmt::format("unsupported framework \"{}\" (supported: {})", module.framework,
                               fmt::join(names, ", ")));
  }

  // 2. Environment and command line on top; `architecture` omits the module defaults
  //    when the model comes from the library.
  ConfigNode final_config = module.merged;
  ConfigNode architecture = module.model;
  MergeInto(architecture, module.overrides);
  ApplyUpperLayers(request, env, module, *adapter, {&final_config, &architecture}, notes);

  // 3. Hardware.
  ClusterSpec cluster;
  std::vector<std::string> hardware_warnings;
  cluster.gpu = ChooseGpu(request, env, path, notes);
  cluster.gpus_per_node = cluster.gpu.gpus_per_node;
  if (!request.hardware_config.empty()) {
    // A FIFO or a device (/dev/zero) would hang or never end the hardware reader: refuse it.
    int64_t size = 0;
    ::close(OpenRegularFile(request.hardware_config, &size));
    const ClusterSpec library = cluster;
    cluster = LoadHardwareConfig(request.hardware_config, cluster);
    hardware_warnings = HardwareConfigContradictions(library, cluster, request.hardware_config);
    notes.push_back(fmt::format("hardware: {} applied over the library's {} and its network",
                                request.hardware_config, cluster.gpu.name));
  }
  if (std::optional<std::string> value = env.Get("GPUS_PER_NODE"); value && !value->empty()) {
    const int64_t gpus = ParseIntFrom(*value, "$GPUS_PER_NODE");
    if (gpus < 1 || gpus > 1024)
      ThrowUserError(SourceLocation{"$GPUS_PER_NODE"}, "", "must be between 1 and 1024");
    cluster.gpus_per_node = static_cast<int>(gpus);
  }
  double clock = request.gpu_clock_mhz;
  if (clock <= 0) {
    if (std::optional<std::string> value = env.Get("PRIMUS_GPU_CLOCK_MHZ");
        value && !value->empty()) {
      ConfigNode node = ConfigNode::Scalar(*value, SourceLocation{"$PRIMUS_GPU_CLOCK_MHZ"});
      clock = ReadDouble(node, "PRIMUS_GPU_CLOCK_MHZ").value_or(0);
      if (clock <= 0)
        ThrowUserError(SourceLocation{"$PRIMUS_GPU_CLOCK_MHZ"}, "", "must be a positive number");
    }
  }
  if (clock > 0 && cluster.gpu.max_clock_mhz > 0 && clock > cluster.gpu.max_clock_mhz) {
    ThrowUserError(
        SourceLocation{request.gpu_clock_mhz > 0 ? "--gpu-clock-mhz" : "$PRIMUS_GPU_CLOCK_MHZ"}, "",
        fmt::format("{} MHz is above the {}'s maximum clock of {} MHz (its datasheet); "
                    "a different GPU needs --hardware-config",
                    clock, cluster.gpu.name, cluster.gpu.max_clock_mhz));
  }
  if (clock > 0) {
    notes.push_back(fmt::format("GPU clock {} MHz (datasheet {} MHz): compute peaks scaled", clock,
                                cluster.gpu.max_clock_mhz));
    cluster.gpu.SetClockMhz(clock);
  }
  if (request.target_nodes < 0 || request.target_nodes > kMaxNodes) {
    ThrowUserError(SourceLocation{"--target-nodes"}, "",
                   fmt::format("must be a node count from 1 to {}", kMaxNodes));
  }
  int requested_nodes = request.target_nodes;
  if (requested_nodes == 0) {
    if (std::optional<std::string> value = env.Get("NNODES"); value && !value->empty()) {
      const int64_t nodes = ParseIntFrom(*value, "$NNODES");
      if (nodes < 1 || nodes > kMaxNodes) {
        ThrowUserError(SourceLocation{"$NNODES"}, "",
                       fmt::format("must be a node count from 1 to {}", kMaxNodes));
      }
      requested_nodes = static_cast<int>(nodes);
    }
  }

  // 4. The framework's adapter.
  Provenance provenance;
  AdapterContext context{
      .module = module,
      .config = ConfigReader(final_config),
      .architecture = ConfigReader(module.model_file.empty() ? architecture : final_config),
      .provenance = provenance,
      .notes = notes};
  context.gpus_per_node = cluster.gpus_per_node;
  context.requested_nodes = requested_nodes;
  Job job;
  job.name = is_default ? "default example (" + path + ")" : path;
  job.framework = std::string(adapter->Name());
  if (!path.ends_with(".toml")) job.module = module.module_name;
  job.cluster = cluster;
  {
    // As an experiment file that reads back to this job: the module's defaults file and model
    // file named as before, every merged key as an override.
    ConfigNode module_node = ConfigNode::Map();
    module_node.Set("framework", ConfigNode::Scalar(module.framework, {}));
    if (!module.module_config_file.empty()) {
      module_node.Set(
          "config",
          ConfigNode::Scalar(std::filesystem::path(module.module_config_file).filename(), {}));
    }
    if (!module.model_reference.empty()) {
      module_node.Set("model", ConfigNode::Scalar(module.model_reference, {}));
    }
    module_node.Set("overrides", final_config);
    ConfigNode experiment = ConfigNode::Map();
    experiment.SetPath("modules", ConfigNode::Map());
    experiment.Find("modules")->Set(
        module.module_name.empty() ? std::string("pre_trainer") : module.module_name,
        std::move(module_node));
    job.configuration = std::make_shared<const ConfigNode>(std::move(experiment));
  }
  adapter->Build(context, job);
  job.files_read = module.files_read;
  job.warnings.insert(job.warnings.end(), module.warnings.begin(), module.warnings.end());
  job.warnings.insert(job.warnings.end(), hardware_warnings.begin(), hardware_warnings.end());
  WarnAboutMistypedOverrides(module, *adapter, job.warnings);
  notes.insert(notes.end(), request.notes.begin(), request.notes.end());
  const std::vector<std::string> missing = LoraTargetsWithoutModule(job);
  for (const std::string& target : missing) {
    job.warnings.push_back(fmt::format(
        "lora.target_modules: {} names no module of {}: no adapter there", target, job.model.name));
  }
  if (job.training.lora.enabled && missing.size() == job.training.lora.target_modules.size()) {
    job.warnings.push_back("LoRA adapts no module: nothing would train");
  }
  // A rank at or above the layer's width is no longer low-rank: more adapter parameters than
  // the frozen weight they adapt (Hu et al. 2021 use r of 1 to 64 on widths of thousands).
  if (job.training.lora.enabled && job.model.hidden_size > 0 &&
      job.training.lora.rank >= job.model.hidden_size) {
    job.warnings.push_back(fmt::format(
        "LoRA rank {} is not below the hidden size {}: each adapter holds more parameters than "
        "the weight it adapts",
        job.training.lora.rank, job.model.hidden_size));
  }

  // 5. Projection flags, as Primus applies them to the target configuration.
  if (request.micro_batch_size < 0 || request.global_batch_size < 0) {
    ThrowUserError(
        SourceLocation{request.micro_batch_size < 0 ? "--micro-batch-size" : "--global-batch-size"},
        "", "must be positive");
  }
  if (request.micro_batch_size > 0) {
    // A batch the configuration states per device (MaxText's per_device_batch_size x
    // gradient_accumulation_steps) follows the micro-batch: each data-parallel rank keeps its
    // micro-batches per step, each of the new size, at every node count.
    if (context.global_batch_per_device > 0 && context.micro_batches_per_step > 0 &&
        request.global_batch_size <= 0) {
      context.global_batch_per_device = 0;
      context.global_batch_per_data_rank =
          request.micro_batch_size * context.micro_batches_per_step;
    }
    job.training.micro_batch_size = request.micro_batch_size;
    context.micro_batches_per_step = 0;
    provenance.Record("micro_batch_size", "micro_batch_size", SourceLocation{"--micro-batch-size"});
  }
  if (request.global_batch_size > 0) {
    job.training.global_batch_size = request.global_batch_size;
    context.global_batch_per_data_rank = 0;
    context.global_batch_per_device = 0;
    provenance.Record("global_batch_size", "global_batch_size",
                      SourceLocation{"--global-batch-size"});
  }
  if (request.target_ep > 0) {
    job.parallel.ep = request.target_ep;
    provenance.Record("expert_model_parallel_size", "expert_model_parallel_size",
                      SourceLocation{"--target-ep-size"});
  }
  if (request.num_virtual_stages > 0) {
    job.parallel.vpp = request.num_virtual_stages;
    provenance.Record("virtual_pipeline_model_parallel_size",
                      "--num-virtual-stages-per-pipeline-rank", {});
    ParallelPlan& p = job.parallel;
    if (p.embedding_counts_as_layer || p.loss_counts_as_layer) {
      // The embedding / loss slots spread over the new number of virtual stages.
      p.layout = AccountedPipelineLayout(job.model.num_layers, static_cast<int64_t>(p.pp) * p.vpp,
                                         p.embedding_counts_as_layer, p.loss_counts_as_layer);
      if (p.layout.empty()) {
        ThrowUserError(SourceLocation{"--num-virtual-stages-per-pipeline-rank"}, "",
                       AccountedLayoutRefusal(job.model.num_layers, p.pp, p.vpp,
                                              p.embedding_counts_as_layer, p.loss_counts_as_layer));
      }
    }
  }
  // The schedule: the command line over the configuration; "auto" keeps the configured one and
  // "all" (compare every schedule) is the projection's business, not the run's.
  if (!request.pipeline_schedule.empty() && request.pipeline_schedule != "auto" &&
      request.pipeline_schedule != "all") {
    ScheduleKind kind = ScheduleKind::k1F1B;
    if (!LookupScheduleKind(request.pipeline_schedule, &kind)) {
      ThrowUserError(SourceLocation{"--pipeline-schedule-algorithm"}, "",
                     UnknownScheduleMessage(request.pipeline_schedule));
    }
    job.training.pipeline_schedule = kind;
    if (kind == ScheduleKind::kInterleaved1F1B && job.parallel.vpp <= 1 && job.parallel.pp > 1) {
      job.warnings.push_back(
          fmt::format("--pipeline-schedule-algorithm {}: interleaving needs virtual stages "
                      "(--num-virtual-stages-per-pipeline-rank >= 2); projected as 1F1B",
                      request.pipeline_schedule));
    }
  }
  // Without pipeline parallelism Megatron runs the micro-batches one after the other
  // (forward_backward_no_pipelining): no pipeline schedule applies.
  if (job.parallel.pp == 1 && job.training.pipeline_schedule != ScheduleKind::k1F1B) {
    if (!request.pipeline_schedule.empty() && request.pipeline_schedule != "auto" &&
        request.pipeline_schedule != "all") {
      job.warnings.push_back(fmt::format(
          "{} has no effect without pipeline parallelism (PP 1): the micro-batches run one "
          "after the other",
          request.pipeline_schedule_flag.empty()
              ? "--pipeline-schedule-algorithm " + request.pipeline_schedule
              : request.pipeline_schedule_flag));
    }
    job.training.pipeline_schedule = ScheduleKind::k1F1B;
  }
  job.training.pipeline_schedule =
      ForVirtualStages(job.training.pipeline_schedule, job.parallel.vpp);
  if (request.target_nodes > 0 && job.framework != "maxtext")
    context.requested_nodes = request.target_nodes;

  // 6. World size, DP and batch; then every consistency check. Sizes are bounded first, so
  //    that no product formed from them (here or in the projections) can overflow.
  CheckJobSizes(job, provenance);
  // A node count the configuration does not fix (asked for, or the fewest that fit) may not
  // split the configured batch: it is rounded as Primus rounds at a new scale.
  const bool free_scale = context.requested_nodes > 0 || context.fixed_data_parallel <= 0;
  ResolveWorld(context, request, job, provenance, notes);
  CheckJobSizes(job, provenance);  // the global batch may have been derived
  if (free_scale) RoundBatchToScale(job, request, provenance);
  ValidateJob(job, provenance, context.allow_uneven_layers, notes);
  if (job.training.deepep && !job.model.IsMoe()) {
    notes.push_back(
        "DeepEP dispatch/combine (--enable-deepep, --sync-free-stage, use_turbo_deepep) has no "
        "effect: the model has no MoE layers");
  }
  job.parallel.pad_uneven_layers = context.allow_uneven_layers;

  for (const std::string& w : job.warnings) notes.push_back("warning: " + w);
  std::vector<std::string> unique;
  for (std::string& note : notes) {
    if (std::find(unique.begin(), unique.end(), note) == unique.end())
      unique.push_back(std::move(note));
  }
  job.notes = std::move(unique);
  return job;
}

}  // namespace sextant
