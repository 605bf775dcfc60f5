#include "parallel/schedule_kind.h"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/close_matches.h"
#include "util/error.h"

namespace sextant {
namespace {

struct Alias {
  std::string_view name;
  ScheduleKind kind;
};

// Other spellings of the same schedules. Primus (research/primus-projection.md §3.7 and
// primus/configs/modules/megatron/primus_pipeline.yaml):
//   CLI --pipeline-schedule-algorithm: zerobubble, zerobubble-heuristic, zbv-formatted,
//     zbv-greedy-half, zbv-greedy-min, seaailab-ilp (which runs Megatron's zero-bubble graph
//     heuristic, 8 orderings and no ILP solve: our zerobubble-heuristic);
//   YAML pp_algorithm: 1f1b, 1f1b-interleaved, zero-bubble, zero-bubble-heuristic,
//     zbv-formatted, v-half, v-min; its generator names basic_1f1b, interleaved_1f1b.
// Primus's zerobubble generator is ZB-H1 (warm-up PP-r-1 forwards, W deferred by r).
constexpr Alias kAliases[] = {
    {"basic_1f1b", ScheduleKind::k1F1B},
    {"interleaved_1f1b", ScheduleKind::kInterleaved1F1B},
    {"1f1b-interleaved", ScheduleKind::kInterleaved1F1B},
    {"interleaved-1f1b", ScheduleKind::kInterleaved1F1B},
    {"zerobubble", ScheduleKind::kZeroBubbleH1},
    {"zero-bubble", ScheduleKind::kZeroBubbleH1},
    {"zb-heuristic", ScheduleKind::kZeroBubbleHeuristic},
    {"zero-bubble-heuristic", ScheduleKind::kZeroBubbleHeuristic},
    {"seaailab-ilp", ScheduleKind::kZeroBubbleHeuristic},
    {"v-half", ScheduleKind::kZbvGreedyHalf},
    {"v-min", ScheduleKind::kZbvGreedyMin},
    {"zbv", ScheduleKind::kZbvFormatted},
    {"dualpipe-v", ScheduleKind::kDualPipeV},
};

}  // namespace

const std::vector<ScheduleKind>& AllScheduleKinds() {
  static const std::vector<ScheduleKind> kAll = {
      ScheduleKind::kGPipe,        ScheduleKind::k1F1B,          ScheduleKind::kInterleaved1F1B,
      ScheduleKind::kZeroBubbleH1, ScheduleKind::kZeroBubbleH2,  ScheduleKind::kZeroBubbleHeuristic,
      ScheduleKind::kZbvFormatted, ScheduleKind::kZbvGreedyHalf, ScheduleKind::kZbvGreedyMin,
      ScheduleKind::kDualPipeV,
  };
  return kAll;
}

std::string_view PrimusPipelineAlgorithm(ScheduleKind kind) {
  // The pp_algorithm values of Primus's primus_pipeline.yaml, as the aliases above read them.
  switch (kind) {
    case ScheduleKind::k1F1B: return "1f1b";
    case ScheduleKind::kInterleaved1F1B: return "1f1b-interleaved";
    case ScheduleKind::kZeroBubbleH1: return "zero-bubble";
    case ScheduleKind::kZeroBubbleHeuristic: return "zero-bubble-heuristic";
    case ScheduleKind::kZbvFormatted: return "zbv-formatted";
    case ScheduleKind::kZbvGreedyHalf: return "v-half";
    case ScheduleKind::kZbvGreedyMin: return "v-min";
    default: return "";
  }
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

bool LookupScheduleKind(std::string_view name, ScheduleKind* kind) {
  for (ScheduleKind k : AllScheduleKinds()) {
    if (name == ScheduleKindName(k)) {
      *kind = k;
      return true;
    }
  }
  for (const Alias& alias : kAliases) {
    if (name == alias.name) {
      *kind = alias.kind;
      return true;
    }
  }
  return false;
}

std::string UnknownScheduleMessage(std::string_view name) {
  std::vector<std::string> names;
  for (ScheduleKind k : AllScheduleKinds()) names.emplace_back(ScheduleKindName(k));
  std::string known = fmt::format("{}", fmt::join(names, ", "));
  for (const Alias& alias : kAliases) names.emplace_back(alias.name);
  return fmt::format("unknown pipeline schedule '{}'{} (known: {}, and Primus's names)", name,
                     DidYouMean(ClosestNames(name, names)), known);
}

ScheduleKind ParseScheduleKind(std::string_view name) {
  ScheduleKind kind = ScheduleKind::k1F1B;
  if (!LookupScheduleKind(name, &kind)) ThrowUserError(UnknownScheduleMessage(name));
  return kind;
}

std::string_view VirtualStageMismatch(ScheduleKind kind, int vpp) {
  if (ShapeOf(kind) == StageShape::kVShape) return "";
  if (kind == ScheduleKind::kInterleaved1F1B) return vpp >= 2 ? "" : "needs VPP >= 2";
  return vpp > 1 ? "needs VPP 1" : "";
}

StageShape ShapeOf(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kZbvFormatted:
    case ScheduleKind::kZbvGreedyHalf:
    case ScheduleKind::kZbvGreedyMin:
    case ScheduleKind::kDualPipeV: return StageShape::kVShape;
    default: return StageShape::kInterleaved;
  }
}

int ChunksPerRank(ScheduleKind kind, int vpp) {
  return ShapeOf(kind) == StageShape::kVShape ? 2 : vpp;
}

bool SplitsBackward(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe:
    case ScheduleKind::k1F1B:
    case ScheduleKind::kInterleaved1F1B: return false;
    default: return true;
  }
}

ScheduleKind ForVirtualStages(ScheduleKind kind, int vpp) {
  if (kind == ScheduleKind::k1F1B && vpp > 1) return ScheduleKind::kInterleaved1F1B;
  if (kind == ScheduleKind::kInterleaved1F1B && vpp <= 1) return ScheduleKind::k1F1B;
  return kind;
}

}  // namespace sextant
