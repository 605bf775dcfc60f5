// A pipeline schedule: for every pipeline rank, the ordered list of compute operations it runs
// in one training step. Sends and receives are implied by the data flow between virtual stages
// and are added by the simulator, so a generator only decides the order of work on each rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parallel/schedule_kind.h"

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

// The size of the problem a generator is asked to schedule.
struct PipelineShape {
  int pipeline_ranks = 1;   // PP
  int chunks_per_rank = 1;  // VPP (virtual stages per rank)
  int micro_batches = 1;    // m, per step per pipeline
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::k1F1B;
  PipelineShape shape;
  StageShape placement = StageShape::kInterleaved;
  std::vector<std::vector<PipelineOp>> ops_per_rank;  // [rank] -> ops in execution order

  int NumStages() const { return shape.pipeline_ranks * shape.chunks_per_rank; }
  // Virtual stage (0 = first layers) that rank `rank` runs as chunk `chunk`.
  int StageOf(int rank, int chunk) const;
  int RankOfStage(int stage) const;
  int ChunkOfStage(int stage) const;
};

}  // namespace sextant
