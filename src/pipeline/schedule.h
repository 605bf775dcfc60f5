// A pipeline schedule: for every pipeline rank, the ordered list of compute operations it runs
// in one training step. Sends and receives are implied by the data flow between virtual stages
// and are added by the simulator, so a generator only decides the order of work on each rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sextant {

enum class OpKind {
  kForward,           // F: forward of one micro-batch through one model chunk
  kBackwardInput,     // B: input-gradient half of the backward (zero-bubble split)
  kBackwardWeight,    // W: weight-gradient half of the backward
  kBackwardCombined,  // BW: the whole backward when the schedule does not split it
};

// One-letter names as the pipeline literature writes them: "F", "B", "W", "BW".
std::string_view OpKindName(OpKind kind);

struct PipelineOp {
  OpKind kind = OpKind::kForward;
  int micro_batch = 0;  // 0-based
  int chunk = 0;        // model chunk on this rank, 0-based

  bool operator==(const PipelineOp&) const = default;
};

// How model chunks map onto virtual stages (consecutive slices of the layer stack).
enum class StagePlacement {
  // Megatron interleaving: rank r chunk c holds virtual stage c*PP + r.
  kInterleaved,
  // V shape (ZBV, DualPipeV): rank r holds stage r (chunk 0) and stage 2*PP-1-r (chunk 1), so
  // the first and last stage share rank 0 and the turn at rank PP-1 needs no transfer.
  kVShape,
};

enum class ScheduleKind {
  kGPipe,
  k1F1B,
  kInterleaved1F1B,
  kZeroBubbleH1,
  kZeroBubbleH2,
  kZeroBubbleHeuristic,
  kZbvFormatted,
  kZbvGreedyHalf,
  kZbvGreedyMin,
  kDualPipeV,
};

// Every schedule kind, in the order `all` reports them.
const std::vector<ScheduleKind>& AllScheduleKinds();
// The command-line spelling: "gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2",
// "zerobubble-heuristic", "zbv-formatted", "zbv-greedy-half", "zbv-greedy-min", "dualpipev".
std::string_view ScheduleKindName(ScheduleKind kind);
// Accepts the names above plus Primus's spellings ("basic_1f1b", "interleaved_1f1b",
// "zerobubble", "zb-heuristic", "v-half", "v-min"). Unknown names are a UserError.
ScheduleKind ParseScheduleKind(std::string_view name);
// True when the schedule runs separate B and W operations.
bool SplitsBackward(ScheduleKind kind);
// How the schedule places model chunks: V shape for ZBV and DualPipeV, interleaved otherwise.
StagePlacement PlacementOf(ScheduleKind kind);

// The size of the problem a generator is asked to schedule.
struct PipelineShape {
  int pipeline_ranks = 1;   // PP
  int chunks_per_rank = 1;  // VPP (virtual stages per rank)
  int micro_batches = 1;    // m, per step per pipeline
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::k1F1B;
  PipelineShape shape;
  StagePlacement placement = StagePlacement::kInterleaved;
  std::vector<std::vector<PipelineOp>> ops_per_rank;  // [rank] -> ops in execution order

  int NumStages() const { return shape.pipeline_ranks * shape.chunks_per_rank; }
  // Virtual stage (0 = first layers) that rank `rank` runs as chunk `chunk`.
  int StageOf(int rank, int chunk) const;
  int RankOfStage(int stage) const;
  int ChunkOfStage(int stage) const;
};

}  // namespace sextant
