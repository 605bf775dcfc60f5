#include "trace/autograd_links.h"

#include <algorithm>
#include <utility>

namespace sextant {

std::vector<int32_t> PairForwardWithBackward(const TraceData& trace) {
  // (sequence number, event) for every op that recorded one, grouped by number.
  std::vector<std::pair<int64_t, uint32_t>> numbered;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.sequence() >= 0) numbered.emplace_back(ev.sequence(), static_cast<uint32_t>(i));
  }
  if (numbered.empty()) return {};
  std::sort(numbered.begin(), numbered.end());
  std::vector<int32_t> backward_of(trace.cpu.size(), -1);
  for (size_t begin = 0; begin < numbered.size();) {
    size_t end = begin;
    while (end < numbered.size() && numbered[end].first == numbered[begin].first) ++end;
    int64_t node = -1;
    for (size_t k = begin; k < end && node < 0; ++k) {
      if (trace.Name(trace.cpu[numbered[k].second].name).starts_with(kBackwardNodePrefix))
        node = numbered[k].second;
    }
    if (node >= 0) {
      const uint32_t autograd_thread = trace.cpu[static_cast<size_t>(node)].thread;
      int64_t forward = -1;
      for (size_t k = begin; k < end; ++k) {
        const CpuEvent& ev = trace.cpu[numbered[k].second];
        if (ev.thread == autograd_thread) continue;  // the backward node and ops under it
        // The latest start is the innermost op that recorded the number. On the same start
        // the first wins: TraceLens keeps the first in the file, where Kineto writes the
        // enclosing op first, and trace.cpu orders equal starts longest first.
        if (forward < 0 || ev.ts_ns > trace.cpu[static_cast<size_t>(forward)].ts_ns)
          forward = numbered[k].second;
      }
      if (forward >= 0) backward_of[static_cast<size_t>(forward)] = static_cast<int32_t>(node);
    }
    begin = end;
  }
  return backward_of;
}

}  // namespace sextant
