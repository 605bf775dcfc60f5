#include "cli/projection_flags.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include <fmt/format.h>

#include "cli/command_hints.h"
#include "cli/option_checks.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant::cli {

void AddProjectionFlags(CLI::App* cmd, ProjectionOptions& o) {
  cmd->add_option("--config,--exp", o.config, "Primus experiment YAML (or TorchTitan TOML)")
      ->check(NonEmptyPath());
  cmd->add_option("--primus-path", o.primus_path,
                  "Primus checkout for module defaults and model files (default $PRIMUS_PATH)");
  cmd->add_option("--target-nodes,--target-num-nodes", o.target_nodes, "nodes of the target run")
      ->check(WholeNumberBetween(1, kMaxNodes));
  cmd->add_option("--target-ep-size", o.target_ep, "expert-parallel size of the target")
      ->check(AtLeast(1));
  cmd->add_option("--benchmark-gpus", o.benchmark_gpus,
                  "GPUs used by --profiling-mode/--memory-mode benchmark")
      ->check(AtLeast(1));
  cmd->add_option("--hardware-config", o.hardware_config,
                  "hardware YAML (Primus hardware_config: keys or Sextant's schema)");
  cmd->add_option("--profiling-mode", o.profiling_mode,
                  "layer times: simulate (cost models), trace (measured in --trace files), both "
                  "(the two side by side), benchmark (timed on a local GPU)")
      ->check(CLI::IsMember({"simulate", "benchmark", "both", "trace"}));
  cmd->add_option("--memory-mode", o.memory_mode, "simulate|benchmark|both")
      ->check(CLI::IsMember({"simulate", "benchmark", "both"}));
  cmd->add_option("--memory-safety-margin", o.memory_safety_margin,
                  "--memory-mode benchmark: upper bound = analytical + residual x (1 + margin)");
  cmd->add_option("--gemm-backend", o.gemm_backend,
                  "GEMM cost model: analytical (efficiency table; also taken for Primus's "
                  "default name origami)")
      ->check(CLI::IsMember({"analytical", "origami"}));
  cmd->add_option("--calibration,--gemm-timings", o.calibration,
                  "the GPU's efficiency table from `sextant calibrate -o GPU.json`, or measured "
                  "kernels to fit it on first: a trace with shapes, TraceLens GEMM.csv / "
                  "SDPA_fwd.csv, or GEMM timings (CSV m,n,k,dtype,time_us[,batch] or JSON)");
  cmd->add_option("--gpu-arch", o.gpu_arch, "GPU (mi300x, mi355x, h100, b200, ...)");
  cmd->add_option("--gpu-clock-mhz", o.gpu_clock_mhz,
                  "clock override for compute peaks (at most the GPU's datasheet maximum)")
      ->check(Positive());
  cmd->add_option("--pipeline-schedule-algorithm", o.schedule,
                  "pipeline schedule: auto (the configured one), all (compare every schedule), "
                  "gpipe, 1f1b, interleaved, zb-h1, zb-h2, zerobubble-heuristic, zbv-formatted, "
                  "zbv-greedy-half, zbv-greedy-min, dualpipev, or a Primus name (zerobubble, "
                  "zero-bubble, seaailab-ilp, v-half, v-min, 1f1b-interleaved, ...)")
      ->check(ScheduleName());
  cmd->add_flag("--enable-zero-bubble", o.enable_zero_bubble, "use the zero-bubble schedule");
  cmd->add_flag("--enable-deepep", o.enable_deepep, "DeepEP dispatch/combine for MoE");
  cmd->add_option("--sync-free-stage", o.sync_free_stage, "Turbo sync-free MoE stage (0-3)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--num-virtual-stages-per-pipeline-rank", o.num_virtual_stages,
                  "virtual pipeline stages per rank")
      ->check(AtLeast(1));
  cmd->add_option("--micro-batch-size", o.micro_batch_size, "micro-batch size")->check(AtLeast(1));
  cmd->add_option("--global-batch-size", o.global_batch_size, "global batch size")
      ->check(AtLeast(1));
  cmd->add_option("--save-benchmark,--save-profiling", o.save_benchmark,
                  "keep the layer times --profiling-mode trace|both measured in --trace files "
                  "in this JSON artifact");
  cmd->add_option("--load-benchmark", o.load_benchmark,
                  "take measured layer times from such an artifact instead of --trace files");
  cmd->add_option("--compare", o.compare,
                  "profiler traces of this very run (one per rank): print the projection next "
                  "to what they measured, per iteration and component");
  cmd->add_option("--trace", o.traces,
                  "profiler trace(s) of a short run for --profiling-mode trace|both: per-layer "
                  "ranges (attn(F), mlp(B), ...) give layer times, else each rank's steps are "
                  "measured by phase (forward, backward, optimizer, communication, idle)");
  cmd->add_option("--scaling-nodes", o.scaling_nodes,
                  "node counts of the scaling table (default 1, 2, 4, ... up to 4x the job's)")
      ->delimiter(',')
      ->check(AtLeast(1));
  cmd->add_option("--chrome-trace", o.chrome_trace, "write the simulated step as a Chrome trace");
  cmd->add_option("--pp-dump", o.pp_dump, "write the simulated step as a Primus pipeline dump");
  cmd->add_flag("--json", o.json, "machine-readable result on stdout");
  cmd->add_option("--export_config,--export-config", o.export_config,
                  "write the merged configuration (module defaults < model file < overrides < "
                  "environment < command line) to this YAML file, as Primus does");
  cmd->add_option("--backend_path,--backend-path", o.backend_path,
                  "Primus's backend import path: accepted, not used by a projection");
  cmd->add_option("--data_path,--data-path", o.data_path,
                  "Primus's data directory: accepted, not used by a projection");
  // Unknown "--key value" pairs override Megatron configuration keys, as in Primus.
  cmd->allow_extras();
  cmd->footer(
      "Any key of the experiment's configuration can be overridden as on Primus's command "
      "line: --KEY VALUE (Megatron: --micro_batch_size 4 --pipeline_model_parallel_size 2; "
      "TorchTitan: --training.local_batch_size 2; MaxText: --per_device_batch_size 4).");
}

std::vector<std::pair<std::string, std::string>> ParseOverrides(
    const std::vector<std::string>& extras, std::map<std::string, std::string>* typed_flags) {
  std::vector<std::pair<std::string, std::string>> out;
  std::unordered_map<std::string, std::string> first_value;
  for (size_t i = 0; i < extras.size(); ++i) {
    const std::string& a = extras[i];
    if (a.rfind("--", 0) != 0 || a.size() < 3) {
      ThrowUserError(fmt::format("unexpected argument '{}' (overrides are --key value)", a));
    }
    std::string key = a.substr(2);
    std::string value;
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < extras.size() && extras[i + 1].rfind("--", 0) != 0) {
      value = extras[++i];
    } else {
      value = "true";  // a bare --flag sets a boolean key
    }
    const std::string typed = "--" + key;
    for (auto& c : key) {
      if (c == '-') c = '_';  // Megatron accepts --tensor-model-parallel-size spellings
    }
    if (typed_flags != nullptr) typed_flags->emplace(key, typed);
    // Which of two values would win is a guess the user should not have to make.
    if (auto [at, added] = first_value.emplace(key, value); !added) {
      ThrowUserError(SourceLocation{"--" + key}, "",
                     fmt::format("given twice ({}, then {}): give it once", at->second, value));
    }
    out.emplace_back(key, value);
  }
  return out;
}

std::string PositionalConfig(const CLI::App* command) {
  const std::vector<std::string> extras = command->remaining();
  if (extras.empty() || extras[0].rfind("--", 0) == 0) return "";
  const std::string& first = extras[0];
  for (const char* ext : {".yaml", ".yml", ".toml"}) {
    const std::string e(ext);
    if (first.size() > e.size() && first.compare(first.size() - e.size(), e.size(), e) == 0) {
      return first;
    }
  }
  return "";
}

JobRequest ToJobRequest(const ProjectionOptions& o, const CLI::App* command) {
  std::vector<std::string> extras = command->remaining();
  JobRequest r;
  r.command_flags = FlagNames(*command);
  r.config_path = o.config;
  // `sextant projection memory EXP.yaml`: the experiment named without --config.
  const std::string positional = PositionalConfig(command);
  if (!positional.empty()) {
    if (!o.config.empty()) {
      ThrowUserError(fmt::format("two experiments: --config {} and {}", o.config, positional));
    }
    r.config_path = positional;
    extras.erase(extras.begin());
  }
  r.primus_path = o.primus_path;
  r.overrides = ParseOverrides(extras, &r.override_flags);
  r.hardware_config = o.hardware_config;
  r.gpu_arch = o.gpu_arch;
  r.gpu_clock_mhz = o.gpu_clock_mhz;
  r.target_nodes = o.target_nodes;
  r.target_ep = o.target_ep;
  r.num_virtual_stages = o.num_virtual_stages;
  r.micro_batch_size = o.micro_batch_size;
  r.global_batch_size = o.global_batch_size;
  // Sextant's flag and the Megatron key for one setting: two values, one of them ignored.
  const std::pair<const char*, bool> kSameSetting[] = {
      {"micro_batch_size", o.micro_batch_size > 0},
      {"global_batch_size", o.global_batch_size > 0},
      {"num_virtual_stages_per_pipeline_rank", o.num_virtual_stages > 0}};
  for (const auto& [key, flag_given] : kSameSetting) {
    if (!flag_given) continue;
    for (const auto& [given, value] : r.overrides) {
      if (given != key) continue;
      std::string flag = std::string("--") + key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      ThrowUserError(SourceLocation{std::string("--") + key}, "",
                     fmt::format("{} and --{} {} set the same thing: give one", flag, key, value));
    }
  }
  r.export_config = o.export_config;
  for (const std::string& input : {o.calibration, o.load_benchmark}) {
    if (!input.empty()) r.other_inputs.push_back(input);
  }
  for (const auto* list : {&o.traces, &o.compare}) {
    r.other_inputs.insert(r.other_inputs.end(), list->begin(), list->end());
  }
  // Checked before the projection runs: an input, a directory or "-" is refused now. Primus
  // creates the file's directory (PrimusParser.export: path.parent.mkdir); that happens when
  // the file is written, so a job that fails leaves no directories behind.
  std::vector<std::string> inputs = r.other_inputs;
  for (const std::string& input : {r.config_path, r.hardware_config}) {
    if (!input.empty()) inputs.push_back(input);
  }
  const std::filesystem::path export_dir = std::filesystem::path(r.export_config).parent_path();
  std::error_code error;
  if (!r.export_config.empty() && r.export_config != "-" && !export_dir.empty() &&
      !std::filesystem::exists(export_dir, error)) {
    CheckOutputDirectory(export_dir.string());
  } else {
    CheckOutputFile(r.export_config, inputs);
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string&>{"--backend_path", o.backend_path},
        {"--data_path", o.data_path}}) {
    if (!value.empty()) {
      r.notes.push_back(
          fmt::format("{} {}: Primus's launcher flag, accepted; a projection reads "
                      "neither code nor data",
                      flag, value));
    }
  }
  r.pipeline_schedule = o.schedule;
  if (o.enable_zero_bubble && (r.pipeline_schedule.empty() || r.pipeline_schedule == "auto")) {
    r.pipeline_schedule = "zerobubble";
    r.pipeline_schedule_flag = "--enable-zero-bubble";
  }
  if (o.enable_deepep || o.sync_free_stage > 0)
    r.overrides.emplace_back("use_turbo_deepep", "true");
  // A stated stage replaces the configuration's, 0 included (sync-free off).
  if (o.sync_free_stage >= 0) {
    r.overrides.emplace_back("turbo_sync_free_moe_stage", std::to_string(o.sync_free_stage));
  }
  return r;
}

void PrintJobWarnings(const Job& job) {
  for (const std::string& w : job.warnings)
    std::fprintf(stderr, "sextant: warning: %s\n", w.c_str());
}

Job BuildJobAndExport(const JobRequest& request) {
  Job job = BuildJob(request);
  if (!request.export_config.empty() && job.configuration != nullptr) {
    // Every file the job was read from, not only the ones named on the command line: the
    // model file an experiment names is as much the user's as the experiment.
    std::vector<std::string> inputs = request.other_inputs;
    inputs.push_back(request.config_path);
    if (!request.hardware_config.empty()) inputs.push_back(request.hardware_config);
    inputs.insert(inputs.end(), job.files_read.begin(), job.files_read.end());
    const std::filesystem::path dir = std::filesystem::path(request.export_config).parent_path();
    std::error_code ignored;
    if (request.export_config != "-" && !dir.empty())
      std::filesystem::create_directories(dir, ignored);
    WriteFileAtomically(request.export_config, MergedConfigurationYaml(job), inputs);
    std::fprintf(stderr, "sextant: merged configuration written to %s\n",
                 request.export_config.c_str());
  }
  return job;
}

void AnnounceDefault(const ProjectionOptions& o, const CLI::App* command) {
  if (o.config.empty() && PositionalConfig(command).empty()) {
    std::fprintf(stderr,
                 "sextant: no --config given: using the bundled default example %s "
                 "(Llama 3.1 8B, BF16, MI300X, 1 node)\n",
                 DefaultExamplePath().c_str());
  }
}

}  // namespace sextant::cli
