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

const std::vector<ScheduleKind>& AllScheduleKinds() {
  static const std::vector<ScheduleKind> kAll = {
      ScheduleKind::kGPipe,        ScheduleKind::k1F1B,          ScheduleKind::kInterleaved1F1B,
      ScheduleKind::kZeroBubbleH1, ScheduleKind::kZeroBubbleH2,  ScheduleKind::kZeroBubbleHeuristic,
      ScheduleKind::kZbvFormatted, ScheduleKind::kZbvGreedyHalf, ScheduleKind::kZbvGreedyMin,
      ScheduleKind::kDualPipeV,
  };
  return kAll;
}

std::string_view ScheduleKindName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe: return "gpipe";
    case ScheduleKind::k1F1B: return "1f1b";
    case ScheduleKind::kInterleaved1F1B: return "interleaved";
    case ScheduleKind::kZeroBubbleH1: return "zb-h1";
    case ScheduleKind::kZeroBubbleH2: return "zb-h2";
    case ScheduleKind::kZeroBubbleHeuristic: return "zerobubble-heuristic";
    case ScheduleKind::kZbvFormatted: return "zbv-formatted";
    case ScheduleKind::kZbvGreedyHalf: return "zbv-greedy-half";
    case ScheduleKind::kZbvGreedyMin: return "zbv-greedy-min";
    case ScheduleKind::kDualPipeV: return "dualpipev";
  }
  return "?";
}

ScheduleKind ParseScheduleKind(std::string_view name) {
  for (ScheduleKind kind : AllScheduleKinds()) {
    if (name == ScheduleKindName(kind)) return kind;
  }
  struct Alias {
    std::string_view name;
    ScheduleKind kind;
  };
  static constexpr Alias kAliases[] = {
      {"basic_1f1b", ScheduleKind::k1F1B},
      {"interleaved_1f1b", ScheduleKind::kInterleaved1F1B},
      {"zerobubble", ScheduleKind::kZeroBubbleH1},
      {"zb-heuristic", ScheduleKind::kZeroBubbleHeuristic},
      {"v-half", ScheduleKind::kZbvGreedyHalf},
      {"v-min", ScheduleKind::kZbvGreedyMin},
  };
  for (const Alias& alias : kAliases) {
    if (name == alias.name) return alias.kind;
  }
  std::string known;
  for (ScheduleKind kind : AllScheduleKinds()) {
    if (!known.empty()) known += ", ";
    known += ScheduleKindName(kind);
  }
  ThrowUserError(fmt::format("unknown pipeline schedule '{}' (known: {}, all)", name, known));
}

StagePlacement PlacementOf(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kZbvFormatted:
    case ScheduleKind::kZbvGreedyHalf:
    case ScheduleKind::kZbvGreedyMin:
    case ScheduleKind::kDualPipeV: return StagePlacement::kVShape;
    default: return StagePlacement::kInterleaved;
  }
}

bool SplitsBackward(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe:
    case ScheduleKind::k1F1B:
    case ScheduleKind::kInterleaved1F1B: return false;
    default: return true;
  }
}

int Schedule::StageOf(int rank, int chunk) const {
  const int pp = shape.pipeline_ranks;
  if (placement == StagePlacement::kVShape) return chunk == 0 ? rank : 2 * pp - 1 - rank;
  return chunk * pp + rank;
}

int Schedule::RankOfStage(int stage) const {
  const int pp = shape.pipeline_ranks;
  if (placement == StagePlacement::kVShape) return stage < pp ? stage : 2 * pp - 1 - stage;
  return stage % pp;
}

int Schedule::ChunkOfStage(int stage) const {
  const int pp = shape.pipeline_ranks;
  if (placement == StagePlacement::kVShape) return stage < pp ? 0 : 1;
  return stage / pp;
}

}  // namespace sextant
