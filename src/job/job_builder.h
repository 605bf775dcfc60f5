// Turns what the user gave (an experiment file, flags, environment) into a validated Job.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "job/job.h"

namespace sextant {

// The most nodes a projection takes (--target-nodes, $NNODES): 8x the largest published
// training clusters (~100k GPUs, ~12.5k nodes of 8), so that every derived count (GPUs, data
// parallelism, global batch growth) stays far inside its integer type.
inline constexpr int kMaxNodes = 100'000;

struct JobRequest {
  std::string config_path;  // --config / --exp; empty = the bundled default example
  std::string primus_path;  // --primus-path or $PRIMUS_PATH; empty = Sextant's model library
  // Unknown "--key value" flags, in order; they override Megatron config keys.
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string hardware_config;    // --hardware-config FILE
  std::string gpu_arch;           // --gpu-arch (or $PRIMUS_GPU_ARCH); empty = from the config
  double gpu_clock_mhz = 0;       // --gpu-clock-mhz (or $PRIMUS_GPU_CLOCK_MHZ)
  int target_nodes = 0;           // --target-nodes / --target-num-nodes; 0 = minimum that fits
  int target_ep = 0;              // --target-ep-size
  int num_virtual_stages = 0;     // --num-virtual-stages-per-pipeline-rank
  int64_t micro_batch_size = 0;   // --micro-batch-size
  int64_t global_batch_size = 0;  // --global-batch-size
  std::string pipeline_schedule;  // --pipeline-schedule-algorithm
  // The flag as the user typed it, when another one set pipeline_schedule (--enable-zero-bubble).
  std::string pipeline_schedule_flag;
  bool use_environment = true;  // read PRIMUS_TP/PP/EP/CP, NNODES, GPUS_PER_NODE, ...
  // The command's own flags ("--target-nodes", ...): an override key close to one of them is
  // a mistyped flag more likely than a configuration key.
  std::vector<std::string> command_flags;
  // Each override key as the user typed its flag ("--micro-batch" for key micro_batch), for
  // errors that name it; a key missing here is named "--" + key.
  std::map<std::string, std::string> override_flags;
  // --export_config: where BuildJobAndExport writes the merged configuration; empty = nowhere.
  std::string export_config;
  // Other files the command reads (calibration, traces, a benchmark artifact): an export
  // never overwrites them, nor the configuration and the files it names.
  std::vector<std::string> other_inputs;
  // Said with the job's assumptions (launcher flags that do not change a projection).
  std::vector<std::string> notes;
};

// Throws UserError naming the file, key and reason for anything inconsistent.
Job BuildJob(const JobRequest& request);

// `job.configuration` as a YAML experiment file with a comment line naming where it came
// from: what --export_config writes. Empty for a job without one.
std::string MergedConfigurationYaml(const Job& job);

// Path of the bundled default example (Llama 3.1 8B, BF16, MI300X, one node).
std::string DefaultExamplePath();

}  // namespace sextant
