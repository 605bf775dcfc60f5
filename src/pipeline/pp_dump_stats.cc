#include "pipeline/pp_dump_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "util/error.h"

namespace sextant {
namespace {

double SumIntervals(const std::vector<double>& start, const std::vector<double>& end) {
  double sum = 0;
  const size_t n = std::min(start.size(), end.size());
  for (size_t i = 0; i < n; ++i) sum += end[i] - start[i];
  return sum;
}

}  // namespace

std::vector<PrimusDumpIterationStats> AnalysePrimusDump(const PrimusDump& dump) {
  std::vector<PrimusDumpIterationStats> out;
  if (dump.ranks.empty()) return out;
  // Index every rank's iterations by key once: O(ranks x iterations).
  std::vector<std::unordered_map<std::string, const PrimusDumpIteration*>> by_key(
      dump.ranks.size());
  for (size_t r = 0; r < dump.ranks.size(); ++r) {
    for (const PrimusDumpIteration& it : dump.ranks[r].iterations) by_key[r][it.key] = &it;
  }
  for (const PrimusDumpIteration& first : dump.ranks[0].iterations) {
    PrimusDumpIterationStats stats;
    stats.key = first.key;
    std::vector<const PrimusDumpIteration*> records;
    for (size_t r = 0; r < dump.ranks.size(); ++r) {
      auto found = by_key[r].find(first.key);
      if (found == by_key[r].end()) {
        ThrowUserError(
            fmt::format("pipeline dump: pp_rank_{}.json has no iteration '{}' "
                        "(present in pp_rank_0.json)",
                        dump.ranks[r].pp_rank, first.key));
      }
      records.push_back(found->second);
      stats.iteration_time_ms = std::max(stats.iteration_time_ms, found->second->total_ms);
      stats.max_memory_gib = std::max(stats.max_memory_gib, found->second->memory_gib);
    }
    for (size_t r = 0; r < records.size(); ++r) {
      const PrimusDumpIteration& it = *records[r];
      PrimusDumpRankStats rank;
      rank.pp_rank = dump.ranks[r].pp_rank;
      rank.forward_ms = SumIntervals(it.fwd_start, it.fwd_end);
      rank.backward_ms = SumIntervals(it.bwd_start, it.bwd_end);
      rank.wgrad_ms = SumIntervals(it.wgrad_start, it.wgrad_end);
      rank.total_ms = it.total_ms;
      rank.memory_gib = it.memory_gib;
      const double busy = rank.forward_ms + rank.backward_ms + rank.wgrad_ms;
      rank.bubble_ratio = stats.iteration_time_ms > 0
                              ? (stats.iteration_time_ms - busy) / stats.iteration_time_ms
                              : 0;
      stats.ranks.push_back(rank);
    }
    out.push_back(std::move(stats));
  }
  return out;
}

}  // namespace sextant
