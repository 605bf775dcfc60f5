// The shape of one LoRA adapter (job.h LoraSpec) as Megatron-Bridge's ParallelLinearAdapter
// builds it beside a tensor-parallel linear layer (ported to Primus as
// primus/backends/megatron/peft/utils.py):
//   - beside a column-parallel layer (linear_qkv, linear_fc1, the MLA up-projections, the LM
//     head): A is a ColumnParallelLinear in -> r that gathers its r outputs, B a
//     ColumnParallelLinear r -> out split like the layer's output;
//   - beside a row-parallel layer (linear_proj, linear_fc2): A is a RowParallelLinear on the
//     layer's input shard, B a ColumnParallelLinear r -> out that gathers the full output;
//   - beside a replicated layer (MLA down-projections, the router): both column-parallel, the
//     output gathered.
// Each of A and B is split over the layer's tensor-parallel group (expert TP for expert
// layers), so one GPU holds r·(in + out)/TP of the adapter's r·(in + out) parameters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "job/job.h"

namespace sextant {

enum class TpSplit { kColumn, kRow, kReplicated };

// By Megatron module name; kReplicated for names it does not know.
TpSplit LoraTpSplit(std::string_view module);

// Parameters one GPU holds of the adapter on a layer whose per-GPU widths are `in` -> `out`
// (column-parallel: `out` is the GPU's share; row-parallel: `in` is), split over `shards`
// ranks (TP, or expert TP), rank `r`: r·in/shards + r·out (column), r·in + r·out/shards (row),
// r·(in + out)/shards (replicated).
int64_t LoraAdapterParamsOf(int64_t r, int64_t in, int64_t out, TpSplit split, int64_t shards);

// One adapted linear layer of a transformer layer, with the per-GPU widths the layer has.
struct LoraAdaptedLinear {
  std::string_view module;  // Megatron's name: "linear_qkv", "linear_fc1", ...
  int64_t tokens = 0;       // rows it sees per micro-batch on this GPU
  int64_t in = 0;
  int64_t out = 0;
  TpSplit split = TpSplit::kReplicated;
  int64_t shards = 1;   // TP, or expert TP for the routed experts
  bool expert = false;  // the routed experts' grouped layer (one adapter for all of them)
};

// The targeted linear layers of transformer layer `layer` (none without LoRA).
std::vector<LoraAdaptedLinear> LoraAdaptedLinears(const Job& job, int64_t layer);

// Targets that match no module of the job's model (an MLA model has no linear_qkv, a dense
// one no router), in the order written.
std::vector<std::string> LoraTargetsWithoutModule(const Job& job);

}  // namespace sextant
