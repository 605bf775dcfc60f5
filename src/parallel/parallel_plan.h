// How a job is split over GPUs, in Megatron's terms:
//   world = TP x CP x PP x DP   (dense part)      world = ETP x EP x PP x EDP   (experts)
// plus how transformer layers are placed on pipeline stages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sextant {

struct ParallelPlan {
  int tp = 1;   // tensor_model_parallel_size
  int pp = 1;   // pipeline_model_parallel_size
  int vpp = 1;  // virtual stages (model chunks) per pipeline rank
  int cp = 1;   // context_parallel_size
  int ep = 1;   // expert_model_parallel_size
  int etp = 1;  // expert_tensor_parallel_size
  int dp = 1;   // data parallel size of the dense part
  bool sequence_parallel = false;
  bool distributed_optimizer = false;  // ZeRO-1 style sharding of optimizer state over DP
  bool fsdp2 = false;                  // ZeRO-3: params, grads and optimizer state over DP
  // HSDP (torchtitan data_parallel_replicate_degree): FSDP shards over DP x CP / fsdp_replicas
  // GPUs and the shard groups replicate, all-reducing their gradient shards. 1 = plain FSDP.
  int fsdp_replicas = 1;

  // Layer placement; at most one of these is set. Empty = balanced.
  std::string layout;               // pipeline_model_parallel_layout, e.g. "Et*3|(tt|)*29,m|L"
  int64_t first_stage_layers = -1;  // decoder_first_pipeline_num_layers
  int64_t last_stage_layers = -1;   // decoder_last_pipeline_num_layers
  // Megatron-Core's account_for_embedding/loss_in_pipeline_split: `layout` was made from them
  // (AccountedPipelineLayout) and is made again when the virtual stages change.
  bool embedding_counts_as_layer = false;
  bool loss_counts_as_layer = false;
  // Primus allow_padding_num_layers: a layer count that does not divide over PP x VPP is
  // padded up to the next multiple; the padding (identity) layers sit at the end.
  bool pad_uneven_layers = false;

  int WorldSize() const { return tp * cp * pp * dp; }
  int ExpertDataParallel() const;  // world / (etp * ep * pp); at least 1
  // GPUs one FSDP shard group spans: DP x CP, over the HSDP replicas.
  int FsdpShardGroup() const;
};

// The sizes in one line, as every report heads its output: "TP 2 PP 4 VPP 1 CP 1 EP 1 ETP 2 DP 8".
std::string DescribeParallelSizes(const ParallelPlan& plan);
// The pipeline schedule as a header names it: "schedule 1f1b", or "no pipeline" with one
// stage (every schedule then runs the micro-batches one after the other).
std::string DescribeSchedule(const std::string& schedule, int pp);
// {"tp", "pp", "vpp", "cp", "ep", "etp", "dp"}: the "parallel" object of every JSON result
// (SPEC §1.3), and back (the other fields keep their defaults).
nlohmann::json ParallelSizesJson(const ParallelPlan& plan);
ParallelPlan ParallelSizesFromJson(const nlohmann::json& j);

}  // namespace sextant
