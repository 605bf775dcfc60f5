// Communication analysis. Per rank: every NCCL/RCCL kernel as a collective instance with its
// type, process group, message size, duration, algorithm bandwidth and bus bandwidth.
// Across ranks: instances matched by (process group, sequence number) when PyTorch recorded
// one, else by their order within (process group, collective type), and each split into
// synchronisation wait (skew) and transfer time.
//
// Bandwidths follow nccl-tests' definitions (NVIDIA/nccl-tests doc/PERFORMANCE.md):
//   algbw = message bytes / time; busbw = algbw × factor with factor 2(n−1)/n for
//   all-reduce, (n−1)/n for all-gather, reduce-scatter and all-to-all, 1 otherwise.
// Message bytes as TraceLens computes them (NcclAnalyser): elements × dtype size, using the
// output size for all-gather and the input size otherwise.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/event_store.h"
#include "trace/perf_sheets.h"

namespace sextant {

struct CollectiveInstance {
  int64_t rank = -1;
  std::string type;           // allreduce, allgather, reduce_scatter, all_to_all, broadcast, ...
  std::string process_group;  // "" when not recorded
  int64_t seq = -1;           // PyTorch's per-group sequence number, -1 if absent
  int64_t bytes = -1;         // message size, -1 if unknown
  int64_t group_size = -1;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  std::string kernel;
  // As PyTorch recorded them on the kernel ("_allgather_base", "BFloat16"); "" / -1 if absent.
  std::string name;
  std::string dtype;
  int64_t in_nelems = -1;
};

// "allreduce", "_allgather_base", "ncclKernel_AllReduce_RING_LL_Sum_float(...)" -> a type.
std::string NormalizeCollectiveType(std::string_view text);
double BusBandwidthFactor(const std::string& type, int64_t ranks);
// Size of one element of a collective's dtype ("Float", "BFloat16", ...); 0 if unknown.
int CollectiveDtypeBytes(std::string_view dtype);

// Over the activities of the profiled window (SelectTimelineEvents): a collective still
// running from before it has no launch in the trace and, on ranks that queued more of them,
// would shift the order by which instances are matched across ranks.
std::vector<CollectiveInstance> ExtractCollectives(const TraceData& trace, int64_t rank);
// The same over given indices into trace.gpu (a selection already made).
std::vector<CollectiveInstance> ExtractCollectives(const TraceData& trace, int64_t rank,
                                                   const std::vector<uint32_t>& window);
// Total duration of every collective kernel in the trace, in or before the profiled window.
int64_t CollectiveKernelNs(const TraceData& trace);

struct CollectiveSummary {
  std::string type;
  std::string process_group;
  int64_t bytes = -1;
  int64_t group_size = -1;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double algbw_gbps = 0;  // from the mean duration; 0 when the size is unknown
  double busbw_gbps = 0;
};
// Grouped by (type, process group, size), largest total time first.
std::vector<CollectiveSummary> SummarizeCollectives(
    const std::vector<CollectiveInstance>& instances);

// One rank's collective kernels grouped the way TraceLens's coll_analysis groups them
// (NcclAnalyser.build_df_summary_long): by process group name and ranks, collective name,
// group size, dtype, element counts, split sizes and stream, from the metadata PyTorch records
// on the kernel itself. A kernel missing any of those (but the group name) is left out, as
// pandas' groupby drops rows with an empty key; a missing group name reads "Unknown_Group".
struct CollectiveCallGroup {
  std::string process_group, pg_ranks, name, dtype, in_split, out_split;
  int64_t group_size = 0, in_nelems = 0, out_nelems = 0, stream = 0;
  double in_mib = 0, out_mib = 0;  // NaN when the dtype's size is unknown
  CallStats dur_us;                // each kernel's duration
};
// Largest total duration first.
std::vector<CollectiveCallGroup> GroupCollectiveCalls(const TraceData& trace);

struct CrossRankCollective {
  std::string key;  // "pg 0 seq 12" or "allreduce #3"
  std::string type;
  std::string process_group;
  int64_t ranks = 0;  // ranks in which the instance was found
  int64_t bytes = -1;
  int64_t earliest_start_ns = 0;
  int64_t skew_ns = 0;      // latest start − earliest start: how long the first rank waited
  int64_t transfer_ns = 0;  // shortest duration over ranks (the last arrival waits least)
  double mean_wait_ns = 0;  // mean over ranks of (duration − transfer)
  int64_t max_wait_ns = 0;
  int64_t straggler_rank = -1;  // the rank that started last
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  // The first rank's metadata: the collective's recorded name (else its type), dtype and
  // input elements, as TraceLens groups instances.
  std::string name;
  std::string dtype;
  int64_t in_nelems = -1;
  int64_t group_size = -1;
  int64_t end_skew_ns = 0;  // latest end − earliest end: how long the first to finish waited
  // How long before the last rank started the first rank had already finished (0 when none
  // did). A collective that every rank must enter cannot end before all have: a positive
  // value on such a collective means the ranks' clocks disagree.
  int64_t ended_before_last_start_ns = 0;
  int64_t earliest_rank = -1;  // the rank that started first (the highest of a tie)
  // Per rank: latest start − its start, what TraceLens calls the rank's wait time.
  std::vector<std::pair<int64_t, int64_t>> start_waits;
};
// Input: one instance list per rank (ExtractCollectives). Instances seen in fewer than two
// ranks are left out. Ordered by earliest start.
std::vector<CrossRankCollective> MatchCollectivesAcrossRanks(
    const std::vector<std::vector<CollectiveInstance>>& per_rank);

// The collectives every rank of a group must enter before any can leave (all-reduce,
// reduce-scatter, all-gather, all-to-all), which is what makes their start skew a wait:
// TraceLens's "implicit sync" class (NcclAnalyser.implicit_sync_cat).
bool IsImplicitSyncCollective(const std::string& type);

// Matched implicit-sync instances grouped by recorded name, dtype and input elements, as
// TraceLens's nccl_summary_implicit_sync (NcclAnalyser.build_df_summary_nccl_implicit_sync_cat):
// per instance the latency is the shortest duration over ranks (the transfer once the last
// rank arrived), the start skew latest − earliest start, the end skew latest − earliest end;
// bandwidths as in CrossRankCollective. Largest total latency first.
struct CollectiveSyncSummary {
  std::string name, dtype, process_group;
  int64_t in_nelems = -1;
  int64_t group_size = -1;
  int64_t bytes = -1;
  CallStats latency_us, start_skew_us, end_skew_us;
  CallStats algbw_gbps, busbw_gbps;  // n = 0 when the message size is unknown
};
std::vector<CollectiveSyncSummary> SummarizeImplicitSyncCollectives(
    const std::vector<CrossRankCollective>& matched);

// Per rank over the matched implicit-sync instances, as TraceLens's straggler_summary
// (NcclAnalyser.build_df_straggler_summary): the wait before the last rank arrived, how often
// the rank arrived last (the straggler) and first, and its collective kernel time (given per
// rank). The rank that waits least is the one the others wait for: least total wait first.
struct RankStraggling {
  int64_t rank = -1;
  double total_wait_us = 0;
  double mean_wait_us = 0;
  int64_t times_last = 0;
  int64_t times_first = 0;
  int64_t collectives = 0;  // implicit-sync instances matched over all ranks
  double collective_us = 0;
};
std::vector<RankStraggling> SummarizeStragglers(const std::vector<CrossRankCollective>& matched,
                                                const std::map<int64_t, double>& collective_us);

}  // namespace sextant
