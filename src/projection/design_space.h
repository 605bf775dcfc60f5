// The grid `projection search` walks: every way to split one model over N nodes
// (TP, PP, VPP, CP, EP, ETP, DP), micro-batch size, recomputation, distributed optimizer and
// pipeline schedule, with the global batch and sequence length of the job fixed. The grid
// only factorises the world size; which points are valid is decided by the job validator,
// the schedule generators and the memory model, so the search applies the same rules as
// `projection memory|performance`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job/job.h"
#include "pipeline/schedule.h"

namespace sextant {

struct DesignSpace {
  std::vector<int64_t> micro_batch_sizes = {1, 2, 4, 8};
  int max_vpp = 8;  // virtual stages per rank tried: 1 .. max_vpp (PP > 1 only)
  int max_cp = 8;   // context-parallel sizes tried: powers of two up to this
  std::vector<RecomputeGranularity> recompute = {
      RecomputeGranularity::kNone, RecomputeGranularity::kSelective, RecomputeGranularity::kFull};
  std::vector<bool> distributed_optimizer = {false, true};
  bool fsdp2 = true;  // also FSDP2 (use_torch_fsdp2) wherever DP x CP > 1 gives it something
  // Every schedule Sextant simulates: GPipe (1F1B's time with more memory, ranked behind it
  // unless memory is the objective) and the cost-driven greedy ones included.
  std::vector<ScheduleKind> schedules = {
      ScheduleKind::k1F1B,         ScheduleKind::kGPipe,         ScheduleKind::kInterleaved1F1B,
      ScheduleKind::kZeroBubbleH1, ScheduleKind::kZeroBubbleH2,  ScheduleKind::kZeroBubbleHeuristic,
      ScheduleKind::kZbvFormatted, ScheduleKind::kZbvGreedyHalf, ScheduleKind::kZbvGreedyMin,
      ScheduleKind::kDualPipeV};
};

// What the per-layer times depend on; PP, VPP, DP, optimizer sharding and schedule do not
// change them, so the search costs layers once per shape.
struct LayerShape {
  int tp = 1, cp = 1, ep = 1, etp = 1;
  int64_t micro_batch_size = 1;
  RecomputeGranularity recompute = RecomputeGranularity::kNone;
};

struct Candidate {
  int tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  int64_t micro_batch_size = 1;
  RecomputeGranularity recompute = RecomputeGranularity::kNone;
  bool distributed_optimizer = false;
  bool fsdp2 = false;  // parameters, gradients and optimizer state sharded over DP x CP
  ScheduleKind schedule = ScheduleKind::k1F1B;
  // Uneven split (Megatron's decoder_first/last_pipeline_num_layers); -1: layers split evenly.
  int64_t first_stage_layers = -1, last_stage_layers = -1;
  // Uneven split over PP x VPP > PP model chunks: Megatron's pipeline_model_parallel_layout
  // with the embedding and the loss counted as one layer each (BalancedPipelineLayout); empty
  // otherwise. A function of (layers, PP, VPP), so not part of a candidate's identity.
  std::string layout;

  LayerShape Shape() const { return {tp, cp, ep, etp, micro_batch_size, recompute}; }
  ParallelPlan Sizes() const;  // a plan with these sizes and default placement
};

// The grid's rules (everything else is left to the validators):
//   TP: divisors of the GPUs per node (tensor parallelism stays inside a node)
//   CP: powers of two up to max_cp;  PP: divisors of world / (TP x CP);  DP = the rest
//   EP (MoE only): powers of two up to world / PP;  ETP (MoE only): 1 and TP;  dense: EP 1, ETP =
//   TP VPP: 1 .. max_vpp with PP > 1; schedules: PP 1 runs 1F1B only; VPP 1 runs the one-chunk
//   schedules, VPP 2 also the V-shape ones (two chunks per rank), VPP > 1 interleaved 1F1B
//   distributed optimizer on only where it shards something (DP x CP > 1 or expert DP > 1),
//   unless the space offers it alone.
// "fsdp2", "dist-opt" or "off": how optimizer state (and under FSDP2 parameters and gradients)
// is sharded over data parallelism.
const char* ShardingName(const Candidate& c);

std::vector<LayerShape> EnumerateLayerShapes(const Job& base, const DesignSpace& space);
// Where the layers do not split over PP x VPP, a one-chunk schedule gets Megatron's first/last
// stage layer counts (BalancedFirstLastStageLayers); points with neither are pruned before
// they are built (the job validator would refuse them) and counted in `pruned`.
std::vector<Candidate> EnumerateCandidates(const Job& base, const DesignSpace& space,
                                           const LayerShape& shape, int64_t* pruned = nullptr);

// `base` with the candidate's parallel plan, micro-batch size, recomputation (selective:
// Megatron's default core attention; full: uniform, every layer), optimizer sharding and
// schedule. Sequence parallelism is on whenever TP > 1; FSDP2 and explicit layer layouts
// are dropped (the grid places layers evenly).
Job ApplyCandidate(const Job& base, const Candidate& candidate);

const char* RecomputeName(RecomputeGranularity g);  // "none", "selective", "full"

}  // namespace sextant
