// `trace diff`: compares two traces op by op and kernel by kernel. Kernels are matched by
// name, ops by name; for each: count and total GPU time in both, the difference, and whether
// it is new, vanished, slower, faster or unchanged (|Δ| ≤ 1% or ≤ 1 µs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/table.h"
#include "trace/collectives.h"
#include "trace/event_store.h"
#include "trace/gpu_timeline.h"

namespace sextant {

struct DiffRow {
  std::string name;
  std::string shape;  // op shape and roofline rows: the op's input dims
  std::string types;  // roofline rows: its input types
  int64_t base_count = 0;
  int64_t new_count = 0;
  int64_t base_ns = 0;  // kernels: total duration; ops: direct kernel time
  int64_t new_ns = 0;
  int64_t base_cpu_ns = 0;  // ops only
  int64_t new_cpu_ns = 0;
  double base_tflops = 0, new_tflops = 0;  // roofline rows: achieved rates (0: absent)
  double base_tbps = 0, new_tbps = 0;
  std::string status;  // new, vanished, slower, faster, unchanged
  int64_t delta_ns() const { return new_ns - base_ns; }
};

struct TraceDiff {
  std::string base_path, new_path;
  GpuTimeline base_timeline, new_timeline;
  std::vector<DiffRow> kernels;  // largest |Δ| first
  // The same activities by kernel category (GEMM, attention, elementwise, communication, ...):
  // what a comparison across GPUs, whose kernels are named differently, can still match.
  std::vector<DiffRow> kernel_categories;
  std::vector<DiffRow> ops;
  std::vector<DiffRow> op_shapes;  // ops by (name, input dims): which shapes changed
  std::vector<DiffRow> roofline;   // modelled ops by signature: achieved rates before/after
  // When the two traces profile different numbers of iterations (ProfilerStep#N), every time
  // (timeline, kernels, ops) is per iteration, so the comparison is of like with like; counts
  // stay totals.
  bool per_iteration = false;
  size_t base_iterations = 0, new_iterations = 0;  // ProfilerStep#N ranges in each trace
  std::vector<std::string> warnings;               // different GPUs, iteration counts, world sizes
};

TraceDiff DiffTraces(const TraceData& base, const TraceData& next);
std::string DiffStatus(int64_t base_count, int64_t new_count, int64_t base_ns, int64_t new_ns);

// Two runs of several ranks, compared rank by rank and summarised as their mean rank: Add()
// each rank's TraceDiff (DiffTraces of its base and new trace), then Mean(). The mean's times
// (timeline, kernels, ops) are the means over the ranks added, its call counts the totals,
// its achieved rates the time-weighted means, and its warnings those of every rank once (a
// warning only some ranks give is prefixed with the rank). Each rank's own timeline stays for
// RankTimelineTable, which shows which rank moved.
class RankDiffAccumulator {
 public:
  void Add(int64_t rank, const TraceDiff& pair);
  TraceDiff Mean() const;
  size_t ranks() const { return timelines_.size(); }
  bool Has(int64_t rank) const;
  // "rank_timeline_diff": per rank, the GPU span and busy time base vs new and the change.
  Table RankTimelineTable() const;
  // Each rank's collective instances in both runs (ExtractCollectives), for the cross-rank
  // comparison below.
  void AddCollectives(std::vector<CollectiveInstance> base, std::vector<CollectiveInstance> next);
  // With two ranks or more: "straggler_diff", per rank the wait for the last arrival at the
  // synchronising collectives and how often it arrived last, base vs new (TraceLens's
  // straggler_summary of each run); "collective_sync_diff", per collective (name, dtype, input
  // elements) the count, mean latency once all ranks arrived, and mean start skew, base vs new
  // (TraceLens's nccl_summary_implicit_sync of each run). Empty without such collectives.
  std::vector<Table> CrossRankTables() const;

 private:
  struct RankTimeline {
    int64_t rank;
    GpuTimeline base, next;
  };
  using Key = std::tuple<std::string, std::string, std::string>;  // name, shape, types
  struct Sum {
    DiffRow row;
    double base_rate_ns = 0, new_rate_ns = 0;  // time behind the rates, for their weights
  };
  std::vector<RankTimeline> timelines_;
  std::vector<std::vector<CollectiveInstance>> base_collectives_, new_collectives_;
  std::map<Key, Sum> tables_[5];  // kernel categories, kernels, ops, op shapes, roofline
  std::vector<std::pair<std::string, std::vector<int64_t>>> warnings_;  // and the ranks
  bool per_iteration_ = false;
  size_t base_iterations_ = 0, new_iterations_ = 0;
  std::string base_path_, new_path_;
};

// Tables "timeline_diff", "kernel_category_diff", "kernel_diff", "op_diff", "op_shape_diff",
// "roofline_diff" (at most
// `top` rows each, 0 = all).
std::vector<Table> DiffTables(const TraceDiff& diff, size_t top);

}  // namespace sextant
