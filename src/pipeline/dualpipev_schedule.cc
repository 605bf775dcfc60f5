#include <deque>

#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"

namespace sextant {
namespace {

// One DualPipeV rank: counts per chunk, and the weight gradients deferred by backwards that
// ran with the zero-bubble split (they run later, oldest first).
class DualPipeVRank {
 public:
  explicit DualPipeVRank(std::vector<PipelineOp>& ops) : ops_(ops) {}
  void Forward(int chunk) { ops_.push_back({OpKind::kForward, forwards_[chunk]++, chunk}); }
  void Backward(int chunk, bool split) {
    const int mb = backwards_[chunk]++;
    if (!split) {
      ops_.push_back({OpKind::kBackwardCombined, mb, chunk});
      return;
    }
    ops_.push_back({OpKind::kBackwardInput, mb, chunk});
    deferred_weights_.push_back({OpKind::kBackwardWeight, mb, chunk});
  }
  void Weight() {
    if (deferred_weights_.empty()) return;
    ops_.push_back(deferred_weights_.front());
    deferred_weights_.pop_front();
  }
  bool HasDeferredWeights() const { return !deferred_weights_.empty(); }
  // DualPipe overlaps the forward of one chunk with the backward of the other.
  void ForwardBackward(int forward_chunk, int backward_chunk) {
    Forward(forward_chunk);
    Backward(backward_chunk, false);
  }

 private:
  std::vector<PipelineOp>& ops_;
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<PipelineOp> deferred_weights_;
};

}  // namespace

// Phase structure of deepseek-ai/DualPipe dualpipev.py (eight steps per rank).
Schedule MakeDualPipeVSchedule(const PipelineShape& shape) {
  const ScheduleKind kind = ScheduleKind::kDualPipeV;
  RequireChunksPerRank(kind, shape, 2);
  const int pp = shape.pipeline_ranks;
  const int m = shape.micro_batches;
  RequireMicroBatchesAtLeast(kind, shape, 2 * pp, "2*PP, as DualPipeV requires");
  Schedule schedule = EmptySchedule(kind, shape, StageShape::kVShape);
  for (int rank = 0; rank < pp; ++rank) {
    auto& ops = schedule.ops_per_rank[static_cast<size_t>(rank)];
    ops.reserve(static_cast<size_t>(m) * 6);
    DualPipeVRank v(ops);
    const int later = pp - rank - 1;                   // ranks after this one on the way down
    for (int i = 0; i < 2 * later; ++i) v.Forward(0);  // 1: chunk-0 warm-up
    for (int i = 0; i < rank + 1; ++i) {               // 2: both chunks
      v.Forward(0);
      v.Forward(1);
    }
    for (int i = 0; i < later; ++i) {  // 3: B1 W1 F1 with split backward
      v.Backward(1, true);
      v.Weight();
      v.Forward(1);
    }
    for (int i = 0; i < m - 2 * pp + rank + 1; ++i) {  // 4: main F0&B1, F1&B0 pairs
      if (i == 0 && rank == pp - 1) {
        v.Forward(0);  // the turning rank does not overlap its first pair
        v.Backward(1, false);
      } else {
        v.ForwardBackward(0, 1);
      }
      v.ForwardBackward(1, 0);
    }
    for (int i = 0; i < later; ++i) {  // 5: B1, F1&B0
      v.Backward(1, false);
      v.ForwardBackward(1, 0);
    }
    // 6: B1 B0; the second half switches to split backwards (odd ranks one op earlier).
    bool split = false;
    for (int i = 0; i < rank + 1; ++i) {
      if (i == (rank + 1) / 2 && rank % 2 == 1) split = true;
      v.Backward(1, split);
      if (i == (rank + 1) / 2 && rank % 2 == 0) split = true;
      v.Backward(0, split);
    }
    for (int i = 0; i < later; ++i) {  // 7: W, B0 split
      v.Weight();
      v.Backward(0, true);
    }
    while (v.HasDeferredWeights()) v.Weight();  // 8: remaining weight gradients
  }
  return schedule;
}

}  // namespace sextant
