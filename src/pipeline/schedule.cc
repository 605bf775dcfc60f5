#include "pipeline/schedule.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

std::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kForward: return "F";
    case OpKind::kBackwardInput: return "B";
    case OpKind::kBackwardWeight: return "W";
    case OpKind::kBackwardCombined: return "BW";
  }
  return "?";
}

int Schedule::StageOf(int rank, int chunk) const {
  const int pp = shape.pipeline_ranks;
  if (placement == StageShape::kVShape) return chunk == 0 ? rank : 2 * pp - 1 - rank;
  return chunk * pp + rank;
}

int Schedule::RankOfStage(int stage) const {
  const int pp = shape.pipeline_ranks;
  if (placement == StageShape::kVShape) return stage < pp ? stage : 2 * pp - 1 - stage;
  return stage % pp;
}

int Schedule::ChunkOfStage(int stage) const {
  const int pp = shape.pipeline_ranks;
  if (placement == StageShape::kVShape) return stage < pp ? 0 : 1;
  return stage / pp;
}

}  // namespace sextant
