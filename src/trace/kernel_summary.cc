#include "trace/kernel_summary.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <unordered_map>

namespace sextant {

double Median(std::vector<int64_t>& values) {
  if (values.empty()) return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = static_cast<double>(values[mid]);
  if (values.size() % 2) return upper;
  double lower = static_cast<double>(*std::max_element(values.begin(), values.begin() + mid));
  return (lower + upper) / 2;
}

std::vector<KernelStats> SummarizeKernels(const TraceData& trace) {
  struct Acc {
    std::vector<int64_t> durations;
    std::array<int64_t, kKernelCategories> category_votes{};
    std::unordered_map<uint32_t, int64_t> parent_votes;
    GpuKind kind;
  };
  std::unordered_map<uint32_t, Acc> by_name;
  GpuEventCategorizer categorize(trace);
  for (const GpuEvent& g : trace.gpu) {
    Acc& acc = by_name[g.name];
    acc.kind = g.kind;
    acc.durations.push_back(g.dur_ns);
    acc.category_votes[static_cast<size_t>(categorize(g))]++;
    if (g.op >= 0) acc.parent_votes[trace.cpu[g.op].name]++;
  }
  std::vector<KernelStats> out;
  out.reserve(by_name.size());
  for (auto& [name, acc] : by_name) {
    KernelStats s;
    s.name = std::string(trace.Name(name));
    s.kind = acc.kind;
    s.count = static_cast<int64_t>(acc.durations.size());
    for (int64_t d : acc.durations) s.total_ns += d;
    s.min_ns = *std::min_element(acc.durations.begin(), acc.durations.end());
    s.max_ns = *std::max_element(acc.durations.begin(), acc.durations.end());
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.median_ns = Median(acc.durations);
    // The most votes; the first category in enum order on a tie.
    s.category = static_cast<KernelCategory>(
        std::max_element(acc.category_votes.begin(), acc.category_votes.end()) -
        acc.category_votes.begin());
    if (!acc.parent_votes.empty()) {
      auto best =
          std::max_element(acc.parent_votes.begin(), acc.parent_votes.end(), [](auto& a, auto& b) {
            return a.second < b.second || (a.second == b.second && a.first > b.first);
          });
      s.parent_op = std::string(trace.Name(best->first));
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelStats& a, const KernelStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

std::vector<KernelLaunchStats> SummarizeKernelsByParent(const TraceData& trace) {
  struct Key {
    uint32_t parent, name;
    int64_t stream;
    bool operator<(const Key& o) const {
      return std::tie(parent, name, stream) < std::tie(o.parent, o.name, o.stream);
    }
  };
  std::map<Key, KernelLaunchStats> groups;
  for (const GpuEvent& g : trace.gpu) {
    if (g.kind != GpuKind::kKernel) continue;
    const uint32_t parent = g.op >= 0 ? trace.cpu[g.op].name : 0;
    KernelLaunchStats& s = groups[{parent, g.name, g.stream}];
    if (s.count == 0) {
      s.parent_op = std::string(trace.Name(parent));
      s.name = std::string(trace.Name(g.name));
      s.stream = g.stream;
      s.min_ns = s.max_ns = g.dur_ns;
    }
    ++s.count;
    s.total_ns += g.dur_ns;
    s.min_ns = std::min(s.min_ns, g.dur_ns);
    s.max_ns = std::max(s.max_ns, g.dur_ns);
  }
  std::vector<KernelLaunchStats> out;
  out.reserve(groups.size());
  for (auto& [key, s] : groups) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelLaunchStats& a, const KernelLaunchStats& b) {
                     return a.total_ns > b.total_ns;
                   });
  return out;
}

std::vector<CategoryStats> SummarizeCategories(const std::vector<KernelStats>& kernels) {
  std::map<KernelCategory, CategoryStats> by;
  for (const auto& k : kernels) {
    CategoryStats& c = by[k.category];
    c.category = k.category;
    c.count += k.count;
    c.total_ns += k.total_ns;
  }
  std::vector<CategoryStats> out;
  for (auto& [cat, stats] : by) out.push_back(stats);
  std::sort(out.begin(), out.end(),
            [](const CategoryStats& a, const CategoryStats& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace sextant
