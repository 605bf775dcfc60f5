// The measured-layer artifact of --save-benchmark / --load-benchmark: what
// `--profiling-mode trace` measured in profiler traces (per-layer times, or per-step phases),
// kept so that later projections skip re-reading traces that can be gigabytes. Versioned JSON:
//   {"format": "sextant-benchmark", "version": 1,
//    "device_name": "NVIDIA H800", "sources": ["train.json"],
//    "layers": {"moe": true, "layers": 4, "forward_ms": .., "backward_input_ms": ..,
//               "backward_weight_ms": .., "ep_comm_ms": .., "ep_comm_forward_ms": ..,
//               "exposed_ep_comm_ms": .., "overlap_note": "...",
//               "pieces": [{"name": "attn", "forward_ms": .., "backward_input_ms": ..,
//                           "backward_weight_ms": .., "instances": 4,
//                           "communication": false}, ...]}}
// or, for traces without per-layer ranges, "step": {"ranks", "world_size", "iterations",
// "micro_batches", "step_ms", "forward_ms", "backward_ms", "optimizer_ms",
// "communication_ms", "exposed_communication_ms", "other_ms"} (per iteration, mean over ranks).
// Exactly one of "layers" and "step".
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "projection/trace_layer_times.h"
#include "projection/trace_step_phases.h"

namespace sextant {

inline constexpr int kBenchmarkArtifactVersion = 1;

struct BenchmarkArtifact {
  std::string device_name;  // as the traces recorded it: what the job's GPU is checked against
  std::vector<std::string> sources;
  std::shared_ptr<const MeasuredLayerTimes> layers;  // one of the two
  std::shared_ptr<const MeasuredStep> step;
};

std::string BenchmarkArtifactJson(const BenchmarkArtifact& artifact);

// Throws UserError naming `file` and the key for anything that is not an artifact of a version
// this program reads, or holds values no measurement gives (negative or non-finite times,
// counts out of range, totals that are not their pieces' sums, more ranks than GPUs, a layer
// or step that computes nothing). The measurements' `files` become `file`, so that what they are
// checked against later names the artifact.
BenchmarkArtifact ParseBenchmarkArtifact(std::string_view text, const std::string& file);

}  // namespace sextant
