#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <vector>

#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"
#include "util/error.h"

namespace sextant {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

// The ZB paper's greedy (Qi et al. 2024, section 3.1), played out in time so that every
// decision only uses results that exist at that moment: the rank with the earliest clock
// decides next. Priorities when free: B whose gradient has arrived, then F whose input has
// arrived while the in-flight limit allows, then the oldest pending W; otherwise wait.
class GreedyZeroBubble {
 public:
  GreedyZeroBubble(const PipelineShape& shape, const PipelineCosts* costs, int max_inflight)
      : pp_(shape.pipeline_ranks),
        m_(shape.micro_batches),
        max_inflight_(max_inflight),
        costs_(costs),
        forward_end_(static_cast<size_t>(pp_) * m_, kUnknown),
        input_grad_end_(static_cast<size_t>(pp_) * m_, kUnknown),
        ranks_(static_cast<size_t>(pp_)) {}

  void Run(Schedule& schedule) {
    const int total_ops = pp_ * m_ * 3;
    int scheduled = 0;
    while (scheduled < total_ops) {
      const int r = PickRank();
      if (r < 0) ThrowUserError("zero-bubble greedy scheduler made no progress (internal)");
      RankState& rank = ranks_[static_cast<size_t>(r)];
      const double t = rank.clock;
      auto& ops = schedule.ops_per_rank[static_cast<size_t>(r)];
      const double b_arrival =
          rank.inputs < rank.forwards ? InputGradArrival(r, rank.inputs) : kUnknown;
      const double f_arrival = rank.forwards < m_ ? ForwardArrival(r, rank.forwards) : kUnknown;
      const bool memory_allows = max_inflight_ <= 0 || rank.inflight < max_inflight_;
      if (b_arrival <= t) {
        const int mb = rank.inputs++;
        ops.push_back({OpKind::kBackwardInput, mb, 0});
        rank.clock = t + Cost(r, OpKind::kBackwardInput);
        input_grad_end_[Cell(r, mb)] = rank.clock;
        rank.pending_weights.push_back(mb);
      } else if (f_arrival <= t && memory_allows) {
        const int mb = rank.forwards++;
        ops.push_back({OpKind::kForward, mb, 0});
        rank.clock = t + Cost(r, OpKind::kForward);
        forward_end_[Cell(r, mb)] = rank.clock;
        ++rank.inflight;
      } else if (!rank.pending_weights.empty()) {
        ops.push_back({OpKind::kBackwardWeight, rank.pending_weights.front(), 0});
        rank.pending_weights.pop_front();
        rank.clock = t + Cost(r, OpKind::kBackwardWeight);
        --rank.inflight;
      } else {
        // Nothing to do now: wait for the next known arrival, or until another rank has
        // moved past this moment (only then can a new arrival appear).
        double wake = std::min(b_arrival, memory_allows ? f_arrival : kUnknown);
        const double others = EarliestOtherClockAfter(r, t);
        wake = std::min(wake, others);
        if (wake == kUnknown) {
          rank.yielded = true;  // every other rank is at this same moment; let them go first
        } else {
          rank.clock = wake;
        }
        continue;
      }
      ++scheduled;
      rank.finished = Finished(rank);
      for (RankState& other : ranks_) other.yielded = false;
    }
  }

 private:
  struct RankState {
    double clock = 0;
    int forwards = 0;
    int inputs = 0;
    int inflight = 0;
    bool yielded = false;
    bool finished = false;  // Finished(), kept up to date: the picks below scan every rank
    std::deque<int> pending_weights;
  };

  size_t Cell(int rank, int mb) const { return static_cast<size_t>(rank) * m_ + mb; }

  double Cost(int rank, OpKind kind) const {
    if (costs_ == nullptr) return 1.0;
    const StageCost& c = costs_->stages[static_cast<size_t>(rank)];
    switch (kind) {
      case OpKind::kForward: return c.forward_s;
      case OpKind::kBackwardInput: return c.recompute_s + c.backward_input_s;
      case OpKind::kBackwardWeight: return c.backward_weight_s;
      case OpKind::kBackwardCombined: return c.recompute_s + c.CombinedBackward();
    }
    return 0;
  }
  double P2P(int boundary) const { return costs_ == nullptr ? 0 : costs_->P2PSeconds(boundary); }

  double ForwardArrival(int rank, int mb) const {
    if (rank == 0) return 0;
    const double done = forward_end_[Cell(rank - 1, mb)];
    return done == kUnknown ? kUnknown : done + P2P(rank - 1);
  }
  double InputGradArrival(int rank, int mb) const {
    if (rank == pp_ - 1) return forward_end_[Cell(rank, mb)];
    const double done = input_grad_end_[Cell(rank + 1, mb)];
    return done == kUnknown ? kUnknown : done + P2P(rank);
  }

  bool Finished(const RankState& rank) const {
    return rank.forwards == m_ && rank.inputs == m_ && rank.pending_weights.empty();
  }

  int PickRank() const {
    int best = -1;
    for (int r = 0; r < pp_; ++r) {
      const RankState& rank = ranks_[static_cast<size_t>(r)];
      if (rank.finished || rank.yielded) continue;
      if (best < 0 || rank.clock < ranks_[static_cast<size_t>(best)].clock) best = r;
    }
    return best;
  }

  double EarliestOtherClockAfter(int self, double t) const {
    double earliest = kUnknown;
    for (int r = 0; r < pp_; ++r) {
      const RankState& rank = ranks_[static_cast<size_t>(r)];
      if (r == self || rank.finished || rank.clock <= t) continue;
      earliest = std::min(earliest, rank.clock);
    }
    return earliest;
  }

  const int pp_;
  const int m_;
  const int max_inflight_;
  const PipelineCosts* costs_;
  std::vector<double> forward_end_;     // [rank][mb]
  std::vector<double> input_grad_end_;  // [rank][mb]
  std::vector<RankState> ranks_;
};

void CheckGreedyCosts(ScheduleKind kind, const PipelineShape& shape, const PipelineCosts* costs) {
  if (costs == nullptr) return;
  if (static_cast<int>(costs->stages.size()) != shape.pipeline_ranks) {
    ThrowUserError(fmt::format("{} schedule: {} stage costs given for PP {}",
                               ScheduleKindName(kind), costs->stages.size(), shape.pipeline_ranks));
  }
  if (costs->p2p_s.size() > 1 &&
      costs->p2p_s.size() != static_cast<size_t>(shape.pipeline_ranks - 1)) {
    ThrowUserError(fmt::format("{} schedule: {} P2P times given for {} stage boundaries",
                               ScheduleKindName(kind), costs->p2p_s.size(),
                               shape.pipeline_ranks - 1));
  }
}

Schedule MakeGreedy(ScheduleKind kind, const PipelineShape& shape, const PipelineCosts* costs,
                    int max_inflight) {
  RequireChunksPerRank(kind, shape, 1);
  CheckGreedyCosts(kind, shape, costs);
  Schedule schedule = EmptySchedule(kind, shape, StageShape::kInterleaved);
  for (auto& ops : schedule.ops_per_rank) ops.reserve(static_cast<size_t>(shape.micro_batches) * 3);
  GreedyZeroBubble(shape, costs, max_inflight).Run(schedule);
  return schedule;
}

}  // namespace

Schedule MakeZeroBubbleH2Schedule(const PipelineShape& shape, const PipelineCosts* costs) {
  // ZB-H2 trades memory for time: up to 2*PP-1 micro-batches in flight (Qi et al. 2024).
  return MakeGreedy(ScheduleKind::kZeroBubbleH2, shape, costs, 2 * shape.pipeline_ranks - 1);
}

Schedule MakeZeroBubbleHeuristicSchedule(const PipelineShape& shape, const PipelineCosts* costs,
                                         int max_inflight) {
  if (max_inflight < 0) {
    ThrowUserError(fmt::format("zerobubble-heuristic: in-flight limit {} must be >= 0 (0: none)",
                               max_inflight));
  }
  return MakeGreedy(ScheduleKind::kZeroBubbleHeuristic, shape, costs, max_inflight);
}

}  // namespace sextant
