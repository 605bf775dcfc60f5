// The data behind the pipeline-schedule viewer (`sextant pp view`, `sextant serve`): measured
// Primus dumps and Sextant's simulated schedules as one JSON document that the front-end
// (server/web/pp_view.js) draws. The document's schema is written once, here:
//   {"title", "generator", "notes": [..],
//    "runs": [{"id", "name", "source": measured|simulated|ideal, "ideal_of"?, "generator"?,
//              "origin",
//              "schedule", "pp", "vpp", "micro_batches", "labels_inferred", "memory_label",
//              "iterations": [{"key", "iteration_time_ms", "max_memory_gib", "stage_imbalance",
//                "ranks": [{"rank", "total_ms", "forward_ms", "backward_ms", "wgrad_ms",
//                  "busy_ms", "idle_ms", "bubble_ratio", "memory_gib",
//                  "peak_inflight_micro_batches",
//                  "blocks": [{"op": F|B|W|BW, "mb", "chunk", "start_ms", "end_ms"}],
//                  "transfers": [{"kind": send|recv, "peer", "mb", "chunk", "payload",
//                                 "start_ms", "end_ms"}]}]}]}],
//    "initial": [{"run", "iteration"}],
//    "projections": [{"run", "memory", "performance", "search"?}]   (simulated configs only),
//    "comparisons": [{"measured", "other", "measured_iteration", "other_iteration",
//                     "ranks": [{"rank", "measured_total_ms", "other_total_ms",
//                                "total_diff_pct", "measured_busy_ms", "other_busy_ms",
//                                "measured_bubble_ratio", "other_bubble_ratio"}]}]}
// Every statistic uses the definitions of Primus's pp_vis viewer (pipeline/pp_dump_stats.h):
// iteration time = slowest rank's time; bubble = (iteration time - F - B - W) / iteration time.
// mb and chunk are 0-based, -1 when unknown.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/pp_dump.h"
#include "pipeline/pp_dump_stats.h"

namespace sextant {

// Which iterations of a measured dump are shown first: the last one (past the warm-up) by
// default, a key ("7"), or every iteration ("all").
struct IterationChoice {
  std::string key;  // "" = the typical one (TypicalIterationKey), "all" = every one
};

// The iteration a dump is shown at unless asked otherwise: the median by iteration time (the
// lower of the two middle ones), leaving out the first (warm-up) when there are more than two.
// A dump's last iteration can be its slowest. `stats` must not be empty.
std::string TypicalIterationKey(const std::vector<PrimusDumpIterationStats>& stats);

class PpViewData {
 public:
  explicit PpViewData(std::string title) : title_(std::move(title)) {}

  // A measured dump. Its own schedule is also replayed by the simulator with each op at its
  // median measured duration and free transfers (an "ideal" run, overlaid and compared), when
  // every op's micro-batch and chunk are known or can be inferred. UserError if `choice`
  // names an iteration the dump does not have.
  void AddMeasured(const PrimusDump& dump, const std::string& name, const std::string& origin,
                   const IterationChoice& choice);
  // A simulated step. `memory_gib` (one per rank, may be empty) replaces the simulator's peak
  // activations with a projected total under `memory_label`.
  void AddSimulated(const PipelineSimulation& simulation, const std::string& name,
                    const std::string& origin, const std::vector<double>& memory_gib = {},
                    const std::string& memory_label = "peak activations");
  // The memory and performance projections behind the last simulated run (their JSON as
  // `projection both --json` prints it), drawn as memory per stage and the scaling table.
  void AddProjection(nlohmann::json memory, nlohmann::json performance);
  // The layouts `projection search` finds for the last simulated config on its own nodes
  // (`projection search --json`), drawn as the Pareto front with the config's own point.
  void AddSearch(nlohmann::json search);
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }

  // Adds, for every measured run, a comparison with each simulated run of the same PP size.
  // Call once, after every run is added.
  nlohmann::json ToJson() const;

  const nlohmann::json& runs() const { return runs_; }
  const nlohmann::json& initial() const { return initial_; }

 private:
  std::string NextId();

  std::string title_;
  std::vector<std::string> notes_;
  nlohmann::json runs_ = nlohmann::json::array();
  nlohmann::json initial_ = nlohmann::json::array();
  nlohmann::json projections_ = nlohmann::json::array();
};

// Micro-batch and chunk of the `index`-th forward (or backward) op on a rank of Megatron's
// schedule, for native dumps that do not record them. 1F1B: op k is micro-batch k. Interleaved
// (megatron/core/pipeline_parallel/schedules.py, get_model_chunk_id and
// get_microbatch_id_in_model_chunk): ops advance in groups of PP micro-batches through the
// chunks, forward in chunk order 0..VPP-1 and backward in reverse. Returns false when the
// order cannot be inferred (micro-batches not a multiple of PP with VPP > 1).
bool InferMegatronLabel(int pp, int vpp, int micro_batches, int index, bool backward, int* mb,
                        int* chunk);

}  // namespace sextant
