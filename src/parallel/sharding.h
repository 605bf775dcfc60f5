// The sharding engine: which layers live on which pipeline stage, and how many parameters
// each GPU holds under TP / ETP / EP / PP / VPP. Memory, communication volumes and FLOPs all
// take their parameter counts from here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/model_spec.h"
#include "parallel/parallel_plan.h"
#include "parallel/schedule_kind.h"

namespace sextant {

// One model chunk: the layers one pipeline rank runs for one virtual stage.
struct VirtualStage {
  int pp_rank = 0;
  int chunk = 0;            // 0 .. vpp-1 on that rank
  int virtual_index = 0;    // position in the model order, 0 .. pp*vpp-1
  int64_t first_layer = 0;  // global index of the first transformer layer
  int64_t num_layers = 0;
  bool has_embedding = false;  // holds the input embedding
  bool has_output = false;     // holds final norm, LM head and loss
  int64_t mtp_layers = 0;      // multi-token-prediction modules placed here
};

// Layer placement in model order; throws UserError when the layout does not add up.
std::vector<VirtualStage> PlaceLayers(const ModelSpec& model, const ParallelPlan& plan,
                                      StageShape shape = StageShape::kInterleaved);

// Megatron's decoder_first_pipeline_num_layers / decoder_last_pipeline_num_layers for a layer
// count that does not divide over `pp` pipeline ranks (one chunk each): the middle ranks take
// ceil(layers / pp) each, the first and last share the rest, the last the smaller half (it
// also runs the LM head and loss, the first only the embedding); with two ranks, the first
// takes the odd layer. nullopt when no such split exists (first or last would be empty or
// larger than a middle rank).
struct FirstLastStageLayers {
  int64_t first = 0, last = 0;
};
std::optional<FirstLastStageLayers> BalancedFirstLastStageLayers(int64_t layers, int pp);

// Parameters held by one GPU of a pipeline rank, split by how they are replicated.
struct RankParams {
  int64_t dense = 0;      // replicated over DP (sharded over TP/CP groups as Megatron does)
  int64_t expert = 0;     // routed-expert params, replicated over the expert-DP group
  int64_t embedding = 0;  // the part of `dense` that is embedding / LM head
  int64_t Total() const { return dense + expert; }
};

RankParams ParamsOnRank(const ModelSpec& model, const ParallelPlan& plan, int pp_rank,
                        StageShape shape = StageShape::kInterleaved);
// Every pipeline rank's at once (the model is counted and placed once).
std::vector<RankParams> ParamsPerRank(const ModelSpec& model, const ParallelPlan& plan,
                                      StageShape shape = StageShape::kInterleaved);

}  // namespace sextant
