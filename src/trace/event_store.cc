#include "trace/event_store.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <numeric>

namespace sextant {

StringPool::StringPool() {
  views_.emplace_back();
  ids_.emplace(std::string_view(), 0);
}

uint32_t StringPool::Intern(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  // Strings live in large blocks so that views never move and allocation stays cheap.
  if (block_used_ + text.size() > block_size_) {
    block_size_ = std::max<size_t>(text.size(), 1 << 20);
    blocks_.push_back(std::unique_ptr<char[]>(new char[block_size_]));
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  if (!text.empty()) std::memcpy(dst, text.data(), text.size());
  block_used_ += text.size();
  std::string_view stored(dst, text.size());
  auto id = static_cast<uint32_t>(views_.size());
  views_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

// Orders CPU events by (thread, start, longest first), keeping the input order of full ties,
// as one stable sort would. Events are bucketed by thread in one pass, and a thread's events,
// which profilers mostly write in time order already, are sorted only if they are not.
void SortCpuEvents(std::vector<CpuEvent>& cpu) {
  size_t threads = 0;
  for (const CpuEvent& ev : cpu) threads = std::max<size_t>(threads, ev.thread + size_t{1});
  std::vector<size_t> start(threads + 1, 0);
  for (const CpuEvent& ev : cpu) start[ev.thread + 1]++;
  for (size_t t = 0; t < threads; ++t) start[t + 1] += start[t];
  std::vector<CpuEvent> sorted(cpu.size());
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (const CpuEvent& ev : cpu) sorted[next[ev.thread]++] = ev;
  auto by_time = [](const CpuEvent& a, const CpuEvent& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    return a.dur_ns > b.dur_ns;
  };
  for (size_t t = 0; t < threads; ++t) {
    auto first = sorted.begin() + static_cast<ptrdiff_t>(start[t]);
    auto last = sorted.begin() + static_cast<ptrdiff_t>(start[t + 1]);
    if (!std::is_sorted(first, last, by_time)) std::stable_sort(first, last, by_time);
  }
  cpu.swap(sorted);
}

void NestCpuEvents(TraceData& trace) {
  auto& cpu = trace.cpu;
  // Per thread by start time; a longer event first so it becomes the parent of an equal-start one.
  SortCpuEvents(cpu);
  std::vector<int32_t> stack;
  uint32_t thread = UINT32_MAX;
  for (size_t i = 0; i < cpu.size(); ++i) {
    CpuEvent& ev = cpu[i];
    if (ev.thread != thread) {
      stack.clear();
      thread = ev.thread;
    }
    // Drop enclosing candidates that end before this event ends (finished or only partly
    // overlapping: an out-of-spec overlap is not nesting).
    while (!stack.empty() && cpu[stack.back()].end_ns() < ev.end_ns()) stack.pop_back();
    ev.parent = stack.empty() ? -1 : stack.back();
    stack.push_back(static_cast<int32_t>(i));
  }
}

}  // namespace

void BuildLinks(TraceData& trace) {
  NestCpuEvents(trace);
  std::stable_sort(trace.gpu.begin(), trace.gpu.end(),
                   [](const GpuEvent& a, const GpuEvent& b) { return a.ts_ns < b.ts_ns; });

  std::unordered_map<int64_t, int32_t> runtime_by_correlation;
  std::unordered_map<int64_t, int32_t> op_by_external_id;
  runtime_by_correlation.reserve(trace.cpu.size() / 2);
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (ev.kind == CpuKind::kRuntime && ev.correlation >= 0) {
      runtime_by_correlation.emplace(ev.correlation, static_cast<int32_t>(i));
    } else if (ev.kind == CpuKind::kOp && ev.external_id >= 0) {
      // Keep the outermost op of an External id: kernels inherit the id of the op that ran them.
      op_by_external_id.emplace(ev.external_id, static_cast<int32_t>(i));
    }
  }
  auto innermost_op = [&](int32_t idx) {
    while (idx >= 0 && trace.cpu[idx].kind != CpuKind::kOp) idx = trace.cpu[idx].parent;
    return idx;
  };
  for (GpuEvent& g : trace.gpu) {
    if (g.correlation >= 0) {
      auto it = runtime_by_correlation.find(g.correlation);
      if (it != runtime_by_correlation.end()) {
        g.launcher = it->second;
        g.op = innermost_op(trace.cpu[g.launcher].parent);
      }
    }
    if (g.op < 0 && g.external_id >= 0) {
      auto it = op_by_external_id.find(g.external_id);
      if (it != op_by_external_id.end()) g.op = it->second;
    }
    if (g.collective < 0) {
      // RCCL kernels carry no metadata of their own: take it from record_param_comms above.
      int32_t idx = g.launcher >= 0 ? g.launcher : g.op;
      while (idx >= 0 && trace.cpu[idx].collective < 0) idx = trace.cpu[idx].parent;
      if (idx >= 0) g.collective = trace.cpu[idx].collective;
    }
  }

  trace.iterations.clear();
  for (const CpuEvent& ev : trace.cpu) {
    if (ev.kind == CpuKind::kRuntime) continue;
    std::string_view name = trace.Name(ev.name);
    if (name.substr(0, kStepPrefix.size()) != kStepPrefix) continue;
    std::string_view digits = name.substr(kStepPrefix.size());
    int64_t step = -1;
    std::from_chars(digits.data(), digits.data() + digits.size(), step);
    trace.iterations.push_back({step, ev.ts_ns, ev.dur_ns});
  }
  std::sort(trace.iterations.begin(), trace.iterations.end(),
            [](const Iteration& a, const Iteration& b) { return a.ts_ns < b.ts_ns; });
}

}  // namespace sextant
