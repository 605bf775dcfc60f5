#include "pipeline/pipeline_simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <string>

#include "util/error.h"

namespace sextant {
namespace {

constexpr double kNotDone = -1.0;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

TimelineEventKind EventKindOf(OpKind kind) {
  switch (kind) {
    case OpKind::kForward: return TimelineEventKind::kForward;
    case OpKind::kBackwardInput: return TimelineEventKind::kBackwardInput;
    case OpKind::kBackwardWeight: return TimelineEventKind::kBackwardWeight;
    case OpKind::kBackwardCombined: return TimelineEventKind::kBackwardCombined;
  }
  return TimelineEventKind::kForward;
}

void CheckCosts(const Schedule& schedule, const PipelineCosts& costs) {
  const int stages = schedule.NumStages();
  if (static_cast<int>(costs.stages.size()) != stages) {
    ThrowUserError(
        fmt::format("pipeline costs: {} stage costs given, the schedule has {} "
                    "virtual stages (PP {} x VPP {})",
                    costs.stages.size(), stages, schedule.shape.pipeline_ranks,
                    schedule.shape.chunks_per_rank));
  }
  const size_t p2p = costs.p2p_s.size();
  if (p2p > 1 && p2p != static_cast<size_t>(stages - 1)) {
    ThrowUserError(
        fmt::format("pipeline costs: {} P2P times given; expected 0, 1 or one per "
                    "stage boundary ({})",
                    p2p, stages - 1));
  }
  auto check = [](double value, int stage, const char* what) {
    if (!std::isfinite(value) || value < 0) {
      ThrowUserError(
          fmt::format("pipeline costs: stage {} {} is {}; times must be finite and "
                      "non-negative",
                      stage, what, value));
    }
  };
  for (int s = 0; s < stages; ++s) {
    const StageCost& c = costs.stages[static_cast<size_t>(s)];
    check(c.forward_s, s, "forward time");
    check(c.backward_input_s, s, "input-gradient time");
    check(c.backward_weight_s, s, "weight-gradient time");
    check(c.CombinedBackward(), s, "combined backward time");
    check(c.recompute_s, s, "recompute time");
    if (c.activation_bytes < 0) {
      ThrowUserError(fmt::format("pipeline costs: stage {} activation bytes are negative", s));
    }
  }
  for (size_t b = 0; b < p2p; ++b) check(costs.p2p_s[b], static_cast<int>(b), "P2P time");
}

// Each (kind, micro-batch, stage) must appear exactly once, and every stage must get a forward
// and a complete backward (BW, or both B and W) for every micro-batch.
void CheckOpLists(const Schedule& schedule) {
  const int pp = schedule.shape.pipeline_ranks;
  const int vpp = schedule.shape.chunks_per_rank;
  const int mbs = schedule.shape.micro_batches;
  if (pp < 1 || vpp < 1 || mbs < 1) {
    ThrowUserError(fmt::format("pipeline shape PP {} VPP {} micro-batches {}: all must be >= 1", pp,
                               vpp, mbs));
  }
  if (static_cast<int>(schedule.ops_per_rank.size()) != pp) {
    ThrowUserError(
        fmt::format("schedule has {} rank op lists for PP {}", schedule.ops_per_rank.size(), pp));
  }
  const size_t cells = static_cast<size_t>(pp) * vpp * mbs;
  std::vector<uint8_t> seen(cells * 4, 0);
  for (int r = 0; r < pp; ++r) {
    for (const PipelineOp& op : schedule.ops_per_rank[static_cast<size_t>(r)]) {
      if (op.chunk < 0 || op.chunk >= vpp || op.micro_batch < 0 || op.micro_batch >= mbs) {
        ThrowUserError(
            fmt::format("schedule rank {}: {} of micro-batch {} chunk {} is out of "
                        "range (VPP {}, {} micro-batches)",
                        r, OpKindName(op.kind), op.micro_batch, op.chunk, vpp, mbs));
      }
      const size_t cell =
          (static_cast<size_t>(schedule.StageOf(r, op.chunk)) * mbs + op.micro_batch) * 4 +
          static_cast<size_t>(op.kind);
      if (seen[cell]++) {
        ThrowUserError(
            fmt::format("schedule rank {}: {} of micro-batch {} chunk {} appears "
                        "twice",
                        r, OpKindName(op.kind), op.micro_batch, op.chunk));
      }
    }
  }
  for (size_t cell = 0; cell < cells; ++cell) {
    const uint8_t* k = &seen[cell * 4];
    const bool combined = k[static_cast<int>(OpKind::kBackwardCombined)];
    const bool split =
        k[static_cast<int>(OpKind::kBackwardInput)] && k[static_cast<int>(OpKind::kBackwardWeight)];
    const bool any_split =
        k[static_cast<int>(OpKind::kBackwardInput)] || k[static_cast<int>(OpKind::kBackwardWeight)];
    if (!k[static_cast<int>(OpKind::kForward)] || combined == split || (combined && any_split)) {
      const int stage = static_cast<int>(cell / static_cast<size_t>(mbs));
      ThrowUserError(
          fmt::format("schedule is incomplete: micro-batch {} of stage {} (rank {} "
                      "chunk {}) needs one F and either BW or both B and W",
                      static_cast<int>(cell % static_cast<size_t>(mbs)), stage,
                      schedule.RankOfStage(stage), schedule.ChunkOfStage(stage)));
    }
  }
}

class Simulator {
 public:
  Simulator(const Schedule& schedule, const PipelineCosts& costs, SimulationDetail detail)
      : schedule_(schedule),
        costs_(costs),
        record_(detail == SimulationDetail::kTimeline),
        pp_(schedule.shape.pipeline_ranks),
        stages_(schedule.NumStages()),
        mbs_(schedule.shape.micro_batches),
        forward_end_(static_cast<size_t>(stages_) * mbs_, kNotDone),
        backward_end_(static_cast<size_t>(stages_) * mbs_, kNotDone),
        next_op_(static_cast<size_t>(pp_), 0),
        clock_(static_cast<size_t>(pp_), 0.0),
        waiting_for_(static_cast<size_t>(pp_), 0),
        live_bytes_(static_cast<size_t>(pp_), 0),
        live_chunks_(static_cast<size_t>(pp_), 0),
        live_mbs_(static_cast<size_t>(pp_), 0),
        chunks_alive_per_mb_(static_cast<size_t>(pp_) * mbs_, 0),
        receives_(static_cast<size_t>(pp_) * 2),
        last_end_(static_cast<size_t>(pp_), 0.0) {}

  PipelineSimulation Run() {
    PipelineSimulation out;
    out.kind = schedule_.kind;
    out.shape = schedule_.shape;
    out.ranks.resize(static_cast<size_t>(pp_));
    for (int r = 0; r < pp_; ++r) {
      out.ranks[static_cast<size_t>(r)].rank = r;
      if (!record_) continue;
      const size_t ops = schedule_.ops_per_rank[static_cast<size_t>(r)].size();
      out.ranks[static_cast<size_t>(r)].timeline.reserve(ops * 2);
      receives_[static_cast<size_t>(r) * 2].reserve(ops);
      receives_[static_cast<size_t>(r) * 2 + 1].reserve(ops);
    }
    result_ = &out;
    std::deque<int> runnable;
    for (int r = 0; r < pp_; ++r) runnable.push_back(r);
    while (!runnable.empty()) {
      const int rank = runnable.front();
      runnable.pop_front();
      Advance(rank, runnable);
    }
    ReportDeadlockIfAny();
    Summarise(out);
    return out;
  }

 private:
  size_t Cell(int stage, int mb) const { return static_cast<size_t>(stage) * mbs_ + mb; }

  // Runs ops on `rank` until it finishes or needs a result that is not there yet.
  void Advance(int rank, std::deque<int>& runnable) {
    const auto& ops = schedule_.ops_per_rank[static_cast<size_t>(rank)];
    size_t& next = next_op_[static_cast<size_t>(rank)];
    double& clock = clock_[static_cast<size_t>(rank)];
    RankSimulation& out = result_->ranks[static_cast<size_t>(rank)];
    waiting_for_[static_cast<size_t>(rank)] = 0;
    while (next < ops.size()) {
      const PipelineOp& op = ops[next];
      const int stage = schedule_.StageOf(rank, op.chunk);
      const StageCost& cost = costs_.stages[static_cast<size_t>(stage)];
      double ready = 0;
      if (!InputReady(rank, op, stage, &ready)) return;
      const double start = std::max(clock, ready);
      double duration = 0;
      switch (op.kind) {
        case OpKind::kForward: duration = cost.forward_s; break;
        case OpKind::kBackwardInput: duration = cost.recompute_s + cost.backward_input_s; break;
        case OpKind::kBackwardWeight: duration = cost.backward_weight_s; break;
        case OpKind::kBackwardCombined:
          duration = cost.recompute_s + cost.CombinedBackward();
          break;
      }
      const double end = start + duration;
      Record(rank, out.timeline,
             {EventKindOf(op.kind), op.micro_batch, op.chunk, stage, -1, true, start, end});
      out.busy_s += duration;
      clock = end;
      ++next;
      TrackMemory(rank, op, cost.activation_bytes, out);
      if (op.kind == OpKind::kForward) {
        forward_end_[Cell(stage, op.micro_batch)] = end;
        if (stage + 1 < stages_) Send(rank, stage, stage + 1, op, end, true, runnable);
      } else if (op.kind == OpKind::kBackwardInput || op.kind == OpKind::kBackwardCombined) {
        backward_end_[Cell(stage, op.micro_batch)] = end;
        if (stage > 0) Send(rank, stage, stage - 1, op, end, false, runnable);
      }
    }
  }

  // Whether `op`'s input exists; if so sets *ready to when it arrived. A dependency on an op
  // of the same rank that has not run means the order is wrong: it can never run later.
  bool InputReady(int rank, const PipelineOp& op, int stage, double* ready) {
    const size_t cell = Cell(stage, op.micro_batch);
    auto arrival_from = [&](const std::vector<double>& ends, int from_stage, int boundary) {
      const double done = ends[Cell(from_stage, op.micro_batch)];
      if (done == kNotDone) return kNotDone;
      if (schedule_.RankOfStage(from_stage) == rank) return done;
      return done + costs_.P2PSeconds(boundary);
    };
    auto require_local = [&](double done, const char* needed) {
      if (done != kNotDone) return;
      ThrowUserError(
          fmt::format("schedule order error on rank {}: {} of micro-batch {} chunk {} "
                      "comes before its {}",
                      rank, OpKindName(op.kind), op.micro_batch, op.chunk, needed));
    };
    switch (op.kind) {
      case OpKind::kForward:
        if (stage == 0) return true;
        *ready = arrival_from(forward_end_, stage - 1, stage - 1);
        break;
      case OpKind::kBackwardInput:
      case OpKind::kBackwardCombined:
        require_local(forward_end_[cell], "forward");
        if (stage == stages_ - 1) {
          *ready = forward_end_[cell];
          return true;
        }
        *ready = arrival_from(backward_end_, stage + 1, stage);
        break;
      case OpKind::kBackwardWeight:
        require_local(backward_end_[cell], "input-gradient backward");
        *ready = backward_end_[cell];
        return true;
    }
    if (*ready != kNotDone) return true;
    // Blocked: remember which result resumes this rank (forward results and backward results
    // are told apart by the sign of the key).
    const int from_stage = op.kind == OpKind::kForward ? stage - 1 : stage + 1;
    const long key = static_cast<long>(Cell(from_stage, op.micro_batch)) + 1;
    waiting_for_[static_cast<size_t>(rank)] = op.kind == OpKind::kForward ? key : -key;
    return false;
  }

  void Send(int rank, int from_stage, int to_stage, const PipelineOp& op, double end,
            bool activation, std::deque<int>& runnable) {
    const int to_rank = schedule_.RankOfStage(to_stage);
    if (to_rank == rank) return;
    const int boundary = std::min(from_stage, to_stage);
    const double transfer = costs_.P2PSeconds(boundary);
    RankSimulation& sender = result_->ranks[static_cast<size_t>(rank)];
    Record(rank, sender.timeline,
           {TimelineEventKind::kSend, op.micro_batch, op.chunk, from_stage, to_rank, activation,
            end, end + transfer});
    // Receives from one sender arrive in that sender's time order; a rank has at most two
    // senders (its neighbours), so two lists per rank stay sorted and merge in linear time.
    const int slot = rank == (to_rank + pp_ - 1) % pp_ ? 0 : 1;
    Record(to_rank, receives_[static_cast<size_t>(to_rank) * 2 + slot],
           {TimelineEventKind::kRecv, op.micro_batch, schedule_.ChunkOfStage(to_stage), to_stage,
            rank, activation, end, end + transfer});
    if (!costs_.p2p_overlaps_compute) clock_[static_cast<size_t>(rank)] = end + transfer;
    const long key = static_cast<long>(Cell(from_stage, op.micro_batch)) + 1;
    if (waiting_for_[static_cast<size_t>(to_rank)] == (activation ? key : -key)) {
      waiting_for_[static_cast<size_t>(to_rank)] = 0;
      runnable.push_back(to_rank);
    }
  }

  // Keeps the event when timelines are recorded; the rank's last end time either way.
  void Record(int rank, std::vector<TimelineEvent>& events, const TimelineEvent& e) {
    double& last = last_end_[static_cast<size_t>(rank)];
    last = std::max(last, e.end_s);
    if (record_) events.push_back(e);
  }

  void TrackMemory(int rank, const PipelineOp& op, int64_t bytes, RankSimulation& out) {
    const size_t r = static_cast<size_t>(rank);
    int& alive_for_mb = chunks_alive_per_mb_[r * mbs_ + op.micro_batch];
    if (op.kind == OpKind::kForward) {
      live_bytes_[r] += bytes;
      ++live_chunks_[r];
      if (alive_for_mb++ == 0) ++live_mbs_[r];
      out.peak_activation_bytes = std::max(out.peak_activation_bytes, live_bytes_[r]);
      out.peak_inflight_chunks = std::max(out.peak_inflight_chunks, live_chunks_[r]);
      out.peak_inflight_micro_batches = std::max(out.peak_inflight_micro_batches, live_mbs_[r]);
    } else if (op.kind == OpKind::kBackwardWeight || op.kind == OpKind::kBackwardCombined) {
      live_bytes_[r] -= bytes;
      --live_chunks_[r];
      if (--alive_for_mb == 0) --live_mbs_[r];
    }
  }

  void ReportDeadlockIfAny() const {
    std::string stuck;
    for (int r = 0; r < pp_; ++r) {
      const auto& ops = schedule_.ops_per_rank[static_cast<size_t>(r)];
      const size_t next = next_op_[static_cast<size_t>(r)];
      if (next >= ops.size()) continue;
      const PipelineOp& op = ops[next];
      const int stage = schedule_.StageOf(r, op.chunk);
      const bool forward = op.kind == OpKind::kForward;
      const int from = forward ? stage - 1 : stage + 1;
      stuck += fmt::format(
          "{}rank {} at op {} ({} micro-batch {} chunk {}) waits for {} of "
          "micro-batch {} from rank {}",
          stuck.empty() ? "" : "; ", r, next, OpKindName(op.kind), op.micro_batch, op.chunk,
          forward ? "F" : "B", op.micro_batch, schedule_.RankOfStage(from));
    }
    if (!stuck.empty()) ThrowUserError("pipeline schedule deadlocks: " + stuck);
  }

  void Summarise(PipelineSimulation& out) {
    for (int r = 0; r < pp_; ++r) {
      RankSimulation& rank = out.ranks[static_cast<size_t>(r)];
      rank.end_s = clock_[static_cast<size_t>(r)];
      // Compute and sends are already in start order; merge in the two receive lists.
      const auto& from_prev = receives_[static_cast<size_t>(r) * 2];
      const auto& from_next = receives_[static_cast<size_t>(r) * 2 + 1];
      if (!from_prev.empty() || !from_next.empty()) {
        std::vector<TimelineEvent> merged;
        merged.reserve(rank.timeline.size() + from_prev.size() + from_next.size());
        size_t i = 0, j = 0, k = 0;
        const auto& own = rank.timeline;
        while (i < own.size() || j < from_prev.size() || k < from_next.size()) {
          const double a = i < own.size() ? own[i].start_s : kInfinity;
          const double b = j < from_prev.size() ? from_prev[j].start_s : kInfinity;
          const double c = k < from_next.size() ? from_next[k].start_s : kInfinity;
          // On equal starts a receive goes first: it delivers the input of the op beside it.
          if (j < from_prev.size() && b <= c && b <= a) {
            merged.push_back(from_prev[j++]);
          } else if (k < from_next.size() && c <= a) {
            merged.push_back(from_next[k++]);
          } else {
            merged.push_back(own[i++]);
          }
        }
        rank.timeline = std::move(merged);
      }
      rank.end_s = std::max(rank.end_s, last_end_[static_cast<size_t>(r)]);
      out.step_time_s = std::max(out.step_time_s, rank.end_s);
    }
    for (RankSimulation& rank : out.ranks) {
      rank.bubble_s = std::max(0.0, out.step_time_s - rank.busy_s);
      rank.bubble_ratio = out.step_time_s > 0 ? rank.bubble_s / out.step_time_s : 0;
      out.max_bubble_ratio = std::max(out.max_bubble_ratio, rank.bubble_ratio);
      out.max_peak_activation_bytes =
          std::max(out.max_peak_activation_bytes, rank.peak_activation_bytes);
    }
  }

  const Schedule& schedule_;
  const PipelineCosts& costs_;
  const bool record_;
  const int pp_;
  const int stages_;
  const int mbs_;
  std::vector<double> forward_end_;   // [stage][mb]
  std::vector<double> backward_end_;  // [stage][mb], B or BW
  std::vector<size_t> next_op_;
  std::vector<double> clock_;
  std::vector<long> waiting_for_;  // 0 none; +key forward result; -key backward result
  std::vector<int64_t> live_bytes_;
  std::vector<int> live_chunks_;
  std::vector<int> live_mbs_;
  std::vector<int> chunks_alive_per_mb_;              // [rank][mb]
  std::vector<std::vector<TimelineEvent>> receives_;  // [rank][from previous | from next]
  std::vector<double> last_end_;  // per rank: the latest end of its events (sends, receives)
  PipelineSimulation* result_ = nullptr;
};

}  // namespace

PipelineSimulation SimulatePipeline(const Schedule& schedule, const PipelineCosts& costs,
                                    SimulationDetail detail) {
  CheckOpLists(schedule);
  CheckCosts(schedule, costs);
  return Simulator(schedule, costs, detail).Run();
}

double AnalyticBubbleFraction(ScheduleKind kind, const PipelineShape& shape) {
  const double pp = shape.pipeline_ranks;
  const double m = shape.micro_batches;
  switch (kind) {
    case ScheduleKind::kGPipe:
    case ScheduleKind::k1F1B: return (pp - 1) / m;
    case ScheduleKind::kInterleaved1F1B: return (pp - 1) / (shape.chunks_per_rank * m);
    default: return -1;
  }
}

}  // namespace sextant
