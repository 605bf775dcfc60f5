#include "trace/collectives.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "trace/gpu_timeline.h"
#include "trace/kernel_name.h"

namespace sextant {

std::string NormalizeCollectiveType(std::string_view text) {
  // MoE expert-parallel exchanges (DeepEP): all-to-all in two halves plus their handshakes.
  if (text.find("::ep::") != std::string_view::npos ||
      text.find("deep_ep::") != std::string_view::npos) {
    if (text.find("notify") != std::string_view::npos) return "ep_notify";
    if (text.find("dispatch") != std::string_view::npos) return "ep_dispatch";
    if (text.find("combine") != std::string_view::npos) return "ep_combine";
  }
  if (text.find("cross_device_reduce") != std::string_view::npos) return "allreduce";
  // A kernel's signature names the collective in its function name, not in its return type,
  // namespaces in parentheses, template arguments or parameters: "void (anonymous
  // namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(...)" is an all-reduce.
  text = KernelFunctionName(text);
  // For kernel names look at the part after "Kernel_" ("ncclDevKernel_AllGather_RING_LL").
  size_t k = text.find("Kernel_");
  if (k != std::string_view::npos) text = text.substr(k + 7);
  std::string letters;
  int depth = 0;
  for (char ch : text) {
    if (ch == '(' || ch == '<') {
      ++depth;
    } else if ((ch == ')' || ch == '>') && depth > 0) {
      --depth;
    } else if (depth == 0 && std::isalpha(static_cast<unsigned char>(ch))) {
      letters += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  auto has = [&](std::string_view s) { return letters.find(s) != std::string::npos; };
  if (has("allreduce")) return "allreduce";
  if (has("reducescatter")) return "reduce_scatter";
  if (has("allgather")) return "allgather";
  if (has("alltoall")) return "all_to_all";
  if (has("broadcast")) return "broadcast";
  if (has("sendrecv")) return "send_recv";
  if (has("send")) return "send";
  if (has("recv")) return "recv";
  if (has("reduce")) return "reduce";
  if (has("barrier")) return "barrier";
  if (has("generic")) return "generic";
  return letters.empty() ? "unknown" : letters.substr(0, 32);
}

double BusBandwidthFactor(const std::string& type, int64_t n) {
  if (n <= 1) return 1.0;
  double ranks = static_cast<double>(n);
  if (type == "allreduce") return 2 * (ranks - 1) / ranks;
  if (type == "allgather" || type == "reduce_scatter" || type == "all_to_all")
    return (ranks - 1) / ranks;
  return 1.0;
}

int CollectiveDtypeBytes(std::string_view t) {
  if (t == "Float" || t == "Int" || t == "float" || t == "int32") return 4;
  if (t == "Long" || t == "Double" || t == "double" || t == "int64") return 8;
  if (t == "BFloat16" || t == "Half" || t == "Short" || t == "bfloat16" || t == "float16") return 2;
  if (t == "Bool" || t == "Byte" || t == "Char" || t.find("Float8") != std::string_view::npos)
    return 1;
  return 0;
}

std::vector<CollectiveInstance> ExtractCollectives(const TraceData& trace, int64_t rank,
                                                   const std::vector<uint32_t>& window) {
  std::vector<CollectiveInstance> out;
  NameTest is_communication(trace, IsCommunicationKernelName);
  for (uint32_t index : window) {
    const GpuEvent& g = trace.gpu[index];
    if (g.kind != GpuKind::kKernel || !is_communication(g.name)) continue;
    std::string_view name = trace.Name(g.name);
    CollectiveInstance c;
    c.rank = rank;
    c.ts_ns = g.ts_ns;
    c.dur_ns = g.dur_ns;
    c.kernel = std::string(name);
    std::string from_kernel = NormalizeCollectiveType(name);
    c.type = from_kernel;
    if (g.collective < 0) {
      // No collective metadata: the c10d range around the launch ("nccl:all_to_all",
      // "nccl:_all_gather_base") names the collective, which the kernel may not (NCCL runs
      // all-to-all as ncclKernel_SendRecv).
      for (int32_t at = g.launcher; at >= 0; at = trace.cpu[static_cast<size_t>(at)].parent) {
        const std::string_view op = trace.Name(trace.cpu[static_cast<size_t>(at)].name);
        if (op.starts_with("nccl:") || op.starts_with("rccl:")) {
          c.type = NormalizeCollectiveType(op.substr(5));
          break;
        }
      }
    }
    if (g.collective >= 0) {
      const CollectiveMeta& m = trace.collectives[g.collective];
      if (m.name) {
        c.name = std::string(trace.Name(m.name));
        c.type = NormalizeCollectiveType(c.name);
      }
      c.dtype = std::string(trace.Name(m.dtype));
      c.in_nelems = m.in_nelems;
      c.process_group = std::string(trace.Name(m.pg_name));
      c.seq = m.seq;
      c.group_size = m.group_size;
      int element = CollectiveDtypeBytes(trace.Name(m.dtype));
      int64_t nelems = c.type == "allgather" ? m.out_nelems : m.in_nelems;
      if (element > 0 && nelems >= 0) c.bytes = nelems * element;
    }
    if (c.group_size < 0 && trace.world_size > 0) c.group_size = trace.world_size;
    out.push_back(std::move(c));
  }
  return out;
}

int64_t CollectiveKernelNs(const TraceData& trace) {
  NameTest is_communication(trace, IsCommunicationKernelName);
  int64_t ns = 0;
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind == GpuKind::kKernel && is_communication(g.name)) ns += g.dur_ns;
  }
  return ns;
}

std::vector<CollectiveInstance> ExtractCollectives(const TraceData& trace, int64_t rank) {
  return ExtractCollectives(trace, rank, SelectTimelineEvents(trace).events);
}

std::vector<CollectiveCallGroup> GroupCollectiveCalls(const TraceData& trace) {
  using Key =
      std::tuple<std::string_view, std::string_view, std::string_view, int64_t, std::string_view,
                 int64_t, int64_t, std::string_view, std::string_view, int64_t>;
  std::map<Key, std::vector<double>> durations;
  NameTest is_communication(trace, IsCommunicationKernelName);
  // The collective kernels TraceLens keeps: linked to their launch (a correlation or
  // External id).
  std::vector<const GpuEvent*> kernels;
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind != GpuKind::kKernel || (g.correlation < 0 && g.external_id < 0)) continue;
    if (is_communication(g.name)) kernels.push_back(&g);
  }
  // With no process group named anywhere and one stream, TraceLens matches collectives by
  // their order on it and names the group "all"; else a missing name is "Unknown_Group".
  bool any_group = false;
  std::set<int64_t> streams;
  for (const GpuEvent* g : kernels) {
    any_group = any_group || (g->own_collective && g->collective >= 0 &&
                              trace.collectives[static_cast<size_t>(g->collective)].pg_name);
    streams.insert(g->stream);
  }
  const std::string_view unnamed = !any_group && streams.size() <= 1 ? "all" : "Unknown_Group";
  for (const GpuEvent* kernel : kernels) {
    const GpuEvent& g = *kernel;
    if (!g.own_collective || g.collective < 0) continue;
    const CollectiveMeta& m = trace.collectives[static_cast<size_t>(g.collective)];
    if (!m.pg_ranks || !m.name || !m.dtype || !m.in_split || !m.out_split || m.group_size < 0 ||
        m.in_nelems < 0 || m.out_nelems < 0) {
      continue;
    }
    const std::string_view group = m.pg_name ? trace.Name(m.pg_name) : unnamed;
    durations[{group, trace.Name(m.pg_ranks), trace.Name(m.name), m.group_size, trace.Name(m.dtype),
               m.in_nelems, m.out_nelems, trace.Name(m.in_split), trace.Name(m.out_split),
               g.stream}]
        .push_back(static_cast<double>(g.dur_ns) / 1e3);
  }
  std::vector<CollectiveCallGroup> out;
  for (auto& [key, us] : durations) {
    CollectiveCallGroup c;
    std::string_view pg, ranks, name, dtype, in_split, out_split;
    std::tie(pg, ranks, name, c.group_size, dtype, c.in_nelems, c.out_nelems, in_split, out_split,
             c.stream) = key;
    c.process_group = pg;
    c.pg_ranks = ranks;
    c.name = name;
    c.dtype = dtype;
    c.in_split = in_split;
    c.out_split = out_split;
    // TraceLens's sizes are MiB of the dtype it knows (NcclAnalyser.dtype2bytes).
    const int element = CollectiveDtypeBytes(dtype);
    const double mib = 1024.0 * 1024.0;
    c.in_mib = element > 0 ? static_cast<double>(c.in_nelems) * element / mib : std::nan("");
    c.out_mib = element > 0 ? static_cast<double>(c.out_nelems) * element / mib : std::nan("");
    c.dur_us = SummarizeCalls(std::move(us));
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveCallGroup& a, const CollectiveCallGroup& b) {
                     return a.dur_us.sum > b.dur_us.sum;
                   });
  return out;
}

std::vector<CollectiveSummary> SummarizeCollectives(
    const std::vector<CollectiveInstance>& instances) {
  std::map<std::tuple<std::string, std::string, int64_t>, CollectiveSummary> groups;
  for (const auto& c : instances) {
    CollectiveSummary& s = groups[{c.type, c.process_group, c.bytes}];
    if (s.count == 0) {
      s.type = c.type;
      s.process_group = c.process_group;
      s.bytes = c.bytes;
      s.min_ns = c.dur_ns;
      s.max_ns = c.dur_ns;
    }
    s.group_size = std::max(s.group_size, c.group_size);
    s.count++;
    s.total_ns += c.dur_ns;
    s.min_ns = std::min(s.min_ns, c.dur_ns);
    s.max_ns = std::max(s.max_ns, c.dur_ns);
  }
  std::vector<CollectiveSummary> out;
  for (auto& [key, s] : groups) {
    double mean_s = s.total_ns * 1e-9 / static_cast<double>(s.count);
    if (s.bytes > 0 && mean_s > 0) {
      s.algbw_gbps = s.bytes / mean_s / 1e9;
      s.busbw_gbps = s.algbw_gbps * BusBandwidthFactor(s.type, s.group_size);
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const CollectiveSummary& a, const CollectiveSummary& b) {
    return a.total_ns > b.total_ns;
  });
  return out;
}

std::vector<CrossRankCollective> MatchCollectivesAcrossRanks(
    const std::vector<std::vector<CollectiveInstance>>& per_rank) {
  // Sequence numbers are usable only if every instance in every rank has one.
  bool all_have_seq = true;
  for (const auto& rank : per_rank) {
    for (const auto& c : rank) all_have_seq = all_have_seq && c.seq >= 0;
  }
  std::map<std::string, std::vector<const CollectiveInstance*>> by_key;
  for (const auto& rank : per_rank) {
    std::map<std::pair<std::string, std::string>, int64_t> ordinal;
    std::vector<const CollectiveInstance*> sorted;
    for (const auto& c : rank) sorted.push_back(&c);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->ts_ns < b->ts_ns; });
    for (const CollectiveInstance* c : sorted) {
      std::string key;
      if (all_have_seq) {
        key = fmt::format("pg {} seq {:08d}", c->process_group, c->seq);
      } else {
        int64_t n = ordinal[{c->process_group, c->type}]++;
        key = c->process_group.empty()
                  ? fmt::format("{} #{:06d}", c->type, n)
                  : fmt::format("pg {} {} #{:06d}", c->process_group, c->type, n);
      }
      by_key[key].push_back(c);
    }
  }
  std::vector<CrossRankCollective> out;
  for (auto& [key, list] : by_key) {
    if (list.size() < 2) continue;
    CrossRankCollective x;
    x.key = key;
    x.type = list[0]->type;
    x.name = list[0]->name.empty() ? list[0]->type : list[0]->name;
    x.dtype = list[0]->dtype;
    x.in_nelems = list[0]->in_nelems;
    x.process_group = list[0]->process_group;
    x.ranks = static_cast<int64_t>(list.size());
    int64_t earliest = INT64_MAX, latest = INT64_MIN, transfer = INT64_MAX, group = -1;
    int64_t earliest_end = INT64_MAX, latest_end = INT64_MIN;
    for (const auto* c : list) {
      // Ties: the lowest rank is the straggler, the highest the first to arrive (TraceLens's
      // idxmin over the ranks' waits and max over (wait, rank)).
      if (c->ts_ns < earliest || (c->ts_ns == earliest && c->rank > x.earliest_rank)) {
        earliest = c->ts_ns;
        x.earliest_rank = c->rank;
      }
      if (c->ts_ns > latest) {
        latest = c->ts_ns;
        x.straggler_rank = c->rank;
      }
      earliest_end = std::min(earliest_end, c->ts_ns + c->dur_ns);
      latest_end = std::max(latest_end, c->ts_ns + c->dur_ns);
      transfer = std::min(transfer, c->dur_ns);
      x.bytes = std::max(x.bytes, c->bytes);
      group = std::max(group, c->group_size);
    }
    double wait_sum = 0;
    for (const auto* c : list) {
      int64_t wait = c->dur_ns - transfer;
      wait_sum += static_cast<double>(wait);
      x.max_wait_ns = std::max(x.max_wait_ns, wait);
      x.start_waits.emplace_back(c->rank, latest - c->ts_ns);
    }
    x.earliest_start_ns = earliest;
    x.skew_ns = latest - earliest;
    x.end_skew_ns = latest_end - earliest_end;
    x.ended_before_last_start_ns = std::max<int64_t>(0, latest - earliest_end);
    x.transfer_ns = transfer;
    x.group_size = group;
    x.mean_wait_ns = wait_sum / static_cast<double>(list.size());
    if (x.bytes > 0 && transfer > 0) {
      x.algbw_gbps = x.bytes / (transfer * 1e-9) / 1e9;
      x.busbw_gbps = x.algbw_gbps * BusBandwidthFactor(x.type, group > 0 ? group : x.ranks);
    }
    out.push_back(std::move(x));
  }
  std::sort(out.begin(), out.end(), [](const CrossRankCollective& a, const CrossRankCollective& b) {
    return a.earliest_start_ns != b.earliest_start_ns ? a.earliest_start_ns < b.earliest_start_ns
                                                      : a.key < b.key;
  });
  return out;
}

bool IsImplicitSyncCollective(const std::string& type) {
  return type == "allreduce" || type == "reduce_scatter" || type == "allgather" ||
         type == "all_to_all";
}

std::vector<CollectiveSyncSummary> SummarizeImplicitSyncCollectives(
    const std::vector<CrossRankCollective>& matched) {
  struct Values {
    const CrossRankCollective* first = nullptr;
    std::vector<double> latency, start_skew, end_skew, algbw, busbw;
  };
  std::map<std::tuple<std::string, std::string, int64_t>, Values> groups;
  std::vector<std::tuple<std::string, std::string, int64_t>> order;
  for (const CrossRankCollective& x : matched) {
    if (!IsImplicitSyncCollective(x.type)) continue;
    auto key = std::make_tuple(x.name, x.dtype, x.in_nelems);
    Values& v = groups[key];
    if (!v.first) {
      v.first = &x;
      order.push_back(key);
    }
    v.latency.push_back(static_cast<double>(x.transfer_ns) / 1e3);
    v.start_skew.push_back(static_cast<double>(x.skew_ns) / 1e3);
    v.end_skew.push_back(static_cast<double>(x.end_skew_ns) / 1e3);
    if (x.algbw_gbps > 0) {
      v.algbw.push_back(x.algbw_gbps);
      v.busbw.push_back(x.busbw_gbps);
    }
  }
  std::vector<CollectiveSyncSummary> out;
  for (const auto& key : order) {
    Values& v = groups[key];
    CollectiveSyncSummary s;
    s.name = v.first->name;
    s.dtype = v.first->dtype;
    s.in_nelems = v.first->in_nelems;
    s.process_group = v.first->process_group;
    s.group_size = v.first->group_size;
    s.bytes = v.first->bytes;
    s.latency_us = SummarizeCalls(std::move(v.latency));
    s.start_skew_us = SummarizeCalls(std::move(v.start_skew));
    s.end_skew_us = SummarizeCalls(std::move(v.end_skew));
    s.algbw_gbps = SummarizeCalls(std::move(v.algbw));
    s.busbw_gbps = SummarizeCalls(std::move(v.busbw));
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveSyncSummary& a, const CollectiveSyncSummary& b) {
                     return a.latency_us.sum > b.latency_us.sum;
                   });
  return out;
}

std::vector<RankStraggling> SummarizeStragglers(const std::vector<CrossRankCollective>& matched,
                                                const std::map<int64_t, double>& collective_us) {
  std::map<int64_t, RankStraggling> ranks;
  std::map<int64_t, int64_t> waits_seen;
  int64_t instances = 0;
  for (const CrossRankCollective& x : matched) {
    if (!IsImplicitSyncCollective(x.type)) continue;
    ++instances;
    for (const auto& [rank, wait_ns] : x.start_waits) {
      RankStraggling& r = ranks[rank];
      r.total_wait_us += static_cast<double>(wait_ns) / 1e3;
      ++waits_seen[rank];
    }
    ++ranks[x.straggler_rank].times_last;
    ++ranks[x.earliest_rank].times_first;
  }
  if (instances == 0) return {};
  for (auto& [rank, r] : ranks) {
    auto it = collective_us.find(rank);
    if (it != collective_us.end()) r.collective_us = it->second;
  }
  std::vector<RankStraggling> out;
  for (auto& [rank, r] : ranks) {
    r.rank = rank;
    r.collectives = instances;
    const int64_t seen = waits_seen[rank];
    r.mean_wait_us = seen > 0 ? r.total_wait_us / static_cast<double>(seen) : 0;
    out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankStraggling& a, const RankStraggling& b) {
    return a.total_wait_us < b.total_wait_us;
  });
  return out;
}

}  // namespace sextant
