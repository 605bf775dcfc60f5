#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"

namespace sextant {
namespace {

// Appends ops of the two chunks of one V-shape rank while counting them, so each phase reads
// as the sequence the ZB paper draws.
class VRankWriter {
 public:
  explicit VRankWriter(std::vector<PipelineOp>& ops) : ops_(ops) {}
  void F(int chunk) { ops_.push_back({OpKind::kForward, forwards_[chunk]++, chunk}); }
  void B(int chunk) { ops_.push_back({OpKind::kBackwardInput, inputs_[chunk]++, chunk}); }
  void W(int chunk) { ops_.push_back({OpKind::kBackwardWeight, weights_[chunk]++, chunk}); }
  int forwards(int chunk) const { return forwards_[chunk]; }
  int inputs(int chunk) const { return inputs_[chunk]; }
  int weights(int chunk) const { return weights_[chunk]; }

 private:
  std::vector<PipelineOp>& ops_;
  int forwards_[2] = {0, 0};
  int inputs_[2] = {0, 0};
  int weights_[2] = {0, 0};
};

}  // namespace

Schedule MakeZbvFormattedSchedule(const PipelineShape& shape) {
  const ScheduleKind kind = ScheduleKind::kZbvFormatted;
  RequireChunksPerRank(kind, shape, 2);
  const int pp = shape.pipeline_ranks;
  const int m = shape.micro_batches;
  // The formatted warm-up of rank 0 alone runs 2*PP-1 forwards of chunk 0 before any backward.
  RequireMicroBatchesAtLeast(kind, shape, 2 * pp - 1,
                             "2*PP-1, to fill the V-shape warm-up of rank 0");
  Schedule schedule = EmptySchedule(kind, shape, StageShape::kVShape);
  for (int rank = 0; rank < pp; ++rank) {
    auto& ops = schedule.ops_per_rank[static_cast<size_t>(rank)];
    ops.reserve(static_cast<size_t>(m) * 6);
    VRankWriter v(ops);
    // Warm-up: chunk-0 forwards until chunk 1's first input can arrive back at this rank,
    // then forwards of both chunks, then chunk-1 F B W triples.
    for (int i = 0; i < 2 * (pp - rank) - 1; ++i) v.F(0);
    for (int i = 0; i < rank; ++i) {
      v.F(1);
      v.F(0);
    }
    for (int i = 0; i < pp - rank; ++i) {
      v.F(1);
      v.B(1);
      v.W(1);
    }
    // Steady state: F0 B0 W0 F1 B1 W1 until every chunk-1 forward is issued.
    while (v.forwards(1) < v.forwards(0) || v.forwards(0) < m) {
      if (v.forwards(0) < m) v.F(0);
      v.B(0);
      v.W(0);
      v.F(1);
      v.B(1);
      v.W(1);
    }
    // Cool-down: the remaining input gradients first, weight gradients in the gaps and last.
    for (int i = 0; i < rank; ++i) {
      v.B(0);
      v.B(1);
    }
    for (int i = 0; i < pp - rank; ++i) {
      v.B(0);
      v.W(0);
    }
    while (v.weights(1) < v.inputs(1)) v.W(1);
    while (v.weights(0) < v.inputs(0)) v.W(0);
  }
  return schedule;
}

}  // namespace sextant
