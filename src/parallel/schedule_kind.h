// The pipeline-schedule vocabulary: which schedule a run uses, parsed once from any of the
// spellings users bring (Sextant's, Primus's --pipeline-schedule-algorithm, Primus's YAML
// `pp_algorithm`), and the facts every layer needs about it (does it split the backward, how
// it places model chunks, what VPP 1 or VPP > 1 turns it into). Memory, pipeline, projection
// and the CLI all ask here instead of comparing strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sextant {

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

// How model chunks map onto virtual stages (consecutive slices of the layer stack).
enum class StageShape {
  // Megatron interleaving: rank r chunk c holds virtual stage c*PP + r.
  kInterleaved,
  // V shape (ZBV, DualPipeV): rank r holds stage r (chunk 0) and stage 2*PP-1-r (chunk 1), so
  // the first and last stage share rank 0 and the turn at rank PP-1 needs no transfer.
  kVShape,
};

// Every schedule kind, in the order `all` reports them.
const std::vector<ScheduleKind>& AllScheduleKinds();

// Sextant's spelling: "gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2",
// "zerobubble-heuristic", "zbv-formatted", "zbv-greedy-half", "zbv-greedy-min", "dualpipev".
std::string_view ScheduleKindName(ScheduleKind kind);
// The value of Primus's YAML `pp_algorithm` (with `patch_primus_pipeline: true`) that runs
// `kind`, or "" when Primus's pipeline patch has none (GPipe, ZB-H2, DualPipeV). 1F1B and
// interleaved 1F1B are Megatron's own schedules and need no patch.
std::string_view PrimusPipelineAlgorithm(ScheduleKind kind);

// The names above, Primus's CLI names and its YAML `pp_algorithm` values (see the table in
// schedule_kind.cc). "auto" and "all" are requests, not schedules: false for them as for any
// unknown name.
bool LookupScheduleKind(std::string_view name, ScheduleKind* kind);
// As LookupScheduleKind; an unknown name is a UserError with UnknownScheduleMessage.
ScheduleKind ParseScheduleKind(std::string_view name);
// "unknown pipeline schedule 'x'; did you mean ...? (known: ...)", for callers that add where.
std::string UnknownScheduleMessage(std::string_view name);
// Why a schedule cannot run at `vpp` virtual stages per rank ("" when it can): interleaved
// 1F1B needs VPP >= 2 and the other one-chunk-per-rank schedules VPP 1 (V shapes bring their
// own two chunks).
std::string_view VirtualStageMismatch(ScheduleKind kind, int vpp);

// True when the schedule runs separate B and W operations.
bool SplitsBackward(ScheduleKind kind);
// V shape for ZBV and DualPipeV, interleaved otherwise.
StageShape ShapeOf(ScheduleKind kind);
// Model chunks each pipeline rank runs: two for a V shape whatever VPP says, else VPP.
int ChunksPerRank(ScheduleKind kind, int vpp);
// What a schedule becomes at `vpp` virtual stages per rank: 1F1B with VPP > 1 is Megatron's
// interleaved 1F1B, and interleaved 1F1B with VPP 1 is plain 1F1B. The one place this rule
// lives; every other kind is unchanged.
ScheduleKind ForVirtualStages(ScheduleKind kind, int vpp);

}  // namespace sextant
