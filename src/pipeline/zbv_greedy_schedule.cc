#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <vector>

#include "pipeline/schedule_generators.h"
#include "pipeline/schedule_shape_check.h"
#include "util/error.h"

namespace sextant {
namespace {

// V-Half / V-Min ("Pipeline Parallelism with Controllable Memory", Qi et al. 2024) built on
// unit time slots, one op per slot:
//   1. every micro-batch repeats a fixed pattern of F0 F1 B1 B0 with period 6 slots, offset
//      per rank so the V-shape data flow lines up;
//   2. W ops fill the free slots, oldest B first;
//   3. a forward pass over the slots pulls each op to the earliest free slot its inputs allow,
//      without raising any rank's activation peak above the pattern's;
//   4. a second pass compacts the cool-down (after the last chunk-1 forward), where memory
//      only falls, and re-places its W ops into the earliest free slots.
// Slots only order the ops; the simulator then times them with the real costs.
enum Phase { kWarmup, kSteady, kCooldown };

struct SlotOp {
  OpKind kind;
  int micro_batch;
  int chunk;
  Phase phase;
};

class ZbvGreedyBuilder {
 public:
  ZbvGreedyBuilder(int pp, int m, bool min_memory)
      : pp_(pp), m_(m), min_memory_(min_memory), slots_(static_cast<size_t>(pp)) {
    for (auto& per_kind : slot_of_) per_kind.assign(static_cast<size_t>(pp) * 2 * m, -1);
  }

  void Build(Schedule& schedule) {
    PlacePattern();
    FillWeightGradients();
    Compact(false);
    Compact(true);
    for (int r = 0; r < pp_; ++r) {
      auto& ops = schedule.ops_per_rank[static_cast<size_t>(r)];
      ops.reserve(slots_[static_cast<size_t>(r)].size());
      for (const auto& [slot, op] : slots_[static_cast<size_t>(r)]) {
        ops.push_back({op.kind, op.micro_batch, op.chunk});
      }
    }
  }

 private:
  static int Delta(OpKind kind) {
    return kind == OpKind::kForward ? 1 : kind == OpKind::kBackwardWeight ? -1 : 0;
  }
  int& SlotOf(int rank, OpKind kind, int chunk, int mb) {
    const int k = kind == OpKind::kForward ? 0 : kind == OpKind::kBackwardInput ? 1 : 2;
    return slot_of_[k][(static_cast<size_t>(rank) * 2 + chunk) * m_ + mb];
  }

  void PlacePattern() {
    for (int r = 0; r < pp_; ++r) {
      struct Start {
        OpKind kind;
        int chunk;
        int slot;
      };
      std::vector<Start> pattern;
      if (min_memory_) {
        // About a third of ZBV's activations: each chunk-0 forward is followed closely by its
        // chunk-1 forward and both backwards (the paper's V-Min building block).
        const int gap = pp_ % 3 == 0 ? 2 : 0;
        pattern = {{OpKind::kForward, 0, r},
                   {OpKind::kForward, 1, 2 * pp_ - r - 1},
                   {OpKind::kBackwardInput, 1, 2 * pp_ + gap + r},
                   {OpKind::kBackwardInput, 0, 4 * pp_ + gap - r - 1}};
      } else {
        // About half of ZBV's activations (the paper's V-Half building block).
        const int gap = pp_ % 2 == 0 ? 3 : 0;
        pattern = {{OpKind::kForward, 0, 2 * r},
                   {OpKind::kForward, 1, 3 * pp_ - r - 2},
                   {OpKind::kBackwardInput, 1, 3 * pp_ + gap + 2 * r - 1},
                   {OpKind::kBackwardInput, 0, 6 * pp_ + gap - r - 2}};
      }
      for (int mb = 0; mb < m_; ++mb) {
        for (const Start& s : pattern) {
          const int slot = s.slot + 6 * mb;
          auto [it, inserted] =
              slots_[static_cast<size_t>(r)].emplace(slot, SlotOp{s.kind, mb, s.chunk, kWarmup});
          if (!inserted) ThrowUserError("zbv-greedy: pattern slots collide (internal)");
          SlotOf(r, s.kind, s.chunk, mb) = slot;
        }
      }
    }
  }

  void FillWeightGradients() {
    footprint_.assign(static_cast<size_t>(pp_), {});
    for (int r = 0; r < pp_; ++r) {
      auto& slots = slots_[static_cast<size_t>(r)];
      auto& memory = footprint_[static_cast<size_t>(r)];
      const int last = slots.rbegin()->first + 2;
      memory.assign(static_cast<size_t>(last) + 1, 0);
      std::deque<SlotOp> waiting;  // input gradients whose weight gradient is not placed yet
      Phase phase = kWarmup;
      int level = 0;
      for (int t = 0; t <= last || !waiting.empty(); ++t) {
        if (static_cast<size_t>(t) >= memory.size()) memory.push_back(level);
        auto it = slots.find(t);
        if (it != slots.end()) {
          SlotOp& op = it->second;
          op.phase = phase;
          if (op.kind == OpKind::kBackwardInput) waiting.push_back(op);
          level += Delta(op.kind);
          // Steady state starts with the first chunk-0 backward; cool-down after the last
          // chunk-1 forward.
          if (op.kind == OpKind::kBackwardInput && op.chunk == 0 && op.micro_batch == 0) {
            phase = kSteady;
          } else if (op.kind == OpKind::kForward && op.chunk == 1 && op.micro_batch == m_ - 1) {
            phase = kCooldown;
          }
        } else if (!waiting.empty()) {
          const SlotOp b = waiting.front();
          waiting.pop_front();
          slots.emplace(t, SlotOp{OpKind::kBackwardWeight, b.micro_batch, b.chunk, phase});
          SlotOf(r, OpKind::kBackwardWeight, b.chunk, b.micro_batch) = t;
          level += Delta(OpKind::kBackwardWeight);
        }
        memory[static_cast<size_t>(t)] = level;
      }
    }
  }

  // The slot before which `op` on `rank` cannot run: its own previous micro-batch, its
  // producer on the neighbouring stage (the V turns on the last rank and ends on rank 0), and
  // for W its own B.
  int EarliestSlot(int rank, const SlotOp& op) {
    int earliest = 0;
    if (op.micro_batch > 0) {
      earliest = SlotOf(rank, op.kind, op.chunk, op.micro_batch - 1);
    }
    if (op.kind == OpKind::kBackwardWeight) {
      return std::max(earliest, SlotOf(rank, OpKind::kBackwardInput, op.chunk, op.micro_batch));
    }
    int from_rank = -1;
    int from_chunk = op.chunk;
    const bool forward = op.kind == OpKind::kForward;
    // Forward flows down chunk 0 (rank r-1 -> r) and back up chunk 1 (rank r+1 -> r);
    // backward the other way.
    const bool from_lower_rank = forward == (op.chunk == 0);
    if (from_lower_rank) {
      // Rank 0 has no producer: chunk 0 is the first stage, chunk 1 the last one.
      if (rank > 0) from_rank = rank - 1;
    } else if (rank == pp_ - 1) {
      from_rank = rank;  // the turn of the V: the other chunk on the same rank
      from_chunk = 1 - op.chunk;
    } else {
      from_rank = rank + 1;
    }
    if (from_rank >= 0) {
      earliest = std::max(earliest, SlotOf(from_rank, op.kind, from_chunk, op.micro_batch));
    } else if (!forward) {
      earliest = std::max(earliest, SlotOf(rank, OpKind::kForward, op.chunk, op.micro_batch));
    }
    return earliest + 1;
  }

  void Compact(bool cooldown_only) {
    int max_level = 0;
    int last_slot = 0;
    for (int r = 0; r < pp_; ++r) {
      for (int level : footprint_[static_cast<size_t>(r)]) max_level = std::max(max_level, level);
      last_slot = std::max(last_slot, slots_[static_cast<size_t>(r)].rbegin()->first);
    }
    std::vector<std::vector<SlotOp>> held_weights(static_cast<size_t>(pp_));
    for (int t = 0; t <= last_slot; ++t) {
      for (int r = 0; r < pp_; ++r) {
        auto& slots = slots_[static_cast<size_t>(r)];
        auto it = slots.find(t);
        if (it == slots.end()) continue;
        const SlotOp op = it->second;
        if (cooldown_only && op.phase != kCooldown) continue;
        if (cooldown_only && op.kind == OpKind::kBackwardWeight) {
          held_weights[static_cast<size_t>(r)].push_back(op);
          slots.erase(it);
          continue;
        }
        const int target =
            EarliestFreeSlot(r, op, EarliestSlot(r, op), t, !cooldown_only, max_level);
        SlotOf(r, op.kind, op.chunk, op.micro_batch) = target;
        if (target != t) {
          slots.erase(it);
          slots.emplace(target, op);
        }
      }
    }
    for (int r = 0; r < pp_; ++r) {
      auto& slots = slots_[static_cast<size_t>(r)];
      for (const SlotOp& op : held_weights[static_cast<size_t>(r)]) {
        int t = EarliestSlot(r, op);
        while (slots.count(t)) ++t;
        slots.emplace(t, op);
        SlotOf(r, op.kind, op.chunk, op.micro_batch) = t;
      }
    }
  }

  // First free slot in [earliest, current) where moving `op` keeps memory within the limit;
  // `current` when there is none.
  int EarliestFreeSlot(int rank, const SlotOp& op, int earliest, int current, bool check_memory,
                       int max_level) {
    auto& slots = slots_[static_cast<size_t>(rank)];
    auto& memory = footprint_[static_cast<size_t>(rank)];
    const int delta = Delta(op.kind);
    for (int i = earliest; i < current; ++i) {
      if (slots.count(i)) continue;
      if (!check_memory) return i;
      bool fits = true;
      for (int j = i; j < current; ++j) {
        if (memory[static_cast<size_t>(j)] + delta > max_level) {
          fits = false;
          break;
        }
      }
      if (!fits) continue;
      for (int j = i; j < current; ++j) memory[static_cast<size_t>(j)] += delta;
      return i;
    }
    return current;
  }

  const int pp_;
  const int m_;
  const bool min_memory_;
  std::vector<std::map<int, SlotOp>> slots_;  // [rank] slot -> op
  std::vector<int> slot_of_[3];               // [F|B|W][rank][chunk][mb] -> slot
  std::vector<std::vector<int>> footprint_;   // [rank][slot] activation units after the slot
};

}  // namespace

Schedule MakeZbvGreedySchedule(const PipelineShape& shape, bool min_memory) {
  const ScheduleKind kind = min_memory ? ScheduleKind::kZbvGreedyMin : ScheduleKind::kZbvGreedyHalf;
  RequireChunksPerRank(kind, shape, 2);
  Schedule schedule = EmptySchedule(kind, shape, StageShape::kVShape);
  ZbvGreedyBuilder(shape.pipeline_ranks, shape.micro_batches, min_memory).Build(schedule);
  return schedule;
}

}  // namespace sextant
