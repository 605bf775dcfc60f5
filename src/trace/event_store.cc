#include "trace/event_store.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstring>
#include <iterator>
#include <numeric>
#include <vector>

namespace sextant {

StringPool::StringPool() : slots_(1024) { views_.emplace_back(); }

namespace {

std::string_view Lookup(const TraceData& t, const std::map<int64_t, uint32_t>& names,
                        uint32_t thread) {
  if (thread >= t.threads.size()) return {};
  auto it = names.find(t.threads[thread].pid);
  return it == names.end() ? std::string_view() : t.Name(it->second);
}

}  // namespace

std::string_view TraceData::ThreadName(uint32_t thread) const {
  if (thread >= threads.size()) return {};
  auto it = thread_names.find({threads[thread].pid, threads[thread].tid});
  return it == thread_names.end() ? std::string_view() : Name(it->second);
}

std::string_view TraceData::ProcessName(uint32_t thread) const {
  return Lookup(*this, process_names, thread);
}

std::string_view TraceData::ProcessLabel(uint32_t thread) const {
  return Lookup(*this, process_labels, thread);
}

namespace {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe
  return v;
}

inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint64_t Mix(uint64_t h, uint64_t word) {
  h = (h ^ word) * 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 31);
}

// A short multiply-xorshift hash, reading 8 bytes at a time and never past the end: trace
// strings are names and shapes of a few dozen bytes, where std::hash's Murmur costs more
// than the lookup. Past 8 bytes the words go to two chains of multiplies in turn, which run
// side by side: a chain's steps wait on each other. Not for untrusted keys in a security
// sense; collisions only cost probes.
uint64_t HashText(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size();
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
  if (n > 8) {
    uint64_t g = 0xC2B2AE3D27D4EB4FULL;
    size_t i = 0;
    for (; i + 16 < n; i += 16) {
      h = Mix(h, Load64(p + i));
      g = Mix(g, Load64(p + i + 8));
    }
    // The final two words may overlap each other and the ones before.
    h = Mix(h, Load64(n > 16 ? p + n - 16 : p));
    g = Mix(g, Load64(p + n - 8));
    h ^= g * 0x94d049bb133111ebULL;
  } else if (n == 8) {
    h = Mix(h, Load64(p));
  } else if (n >= 4) {
    h = Mix(h, (Load32(p) << 32) | Load32(p + n - 4));
  } else if (n > 0) {
    const auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<uint8_t>(p[i])); };
    h = Mix(h, (byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1));
  }
  // splitmix64's finalizer: the slot index takes the low bits, the tag the high ones.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

// Whether the `n` bytes at `a` and `b` are equal, compared as words in line: nearly every
// lookup of a pool ends on a match of a few dozen bytes, where a call to memcmp costs more
// than the compare.
inline bool TextsEqual(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (Load64(a + i) != Load64(b + i)) return false;
    }
    return Load64(a + n - 8) == Load64(b + n - 8);
  }
  if (n >= 4) return Load32(a) == Load32(b) && Load32(a + n - 4) == Load32(b + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

void StringPool::Grow() {
  std::vector<Slot> bigger(slots_.size() * 2);
  const size_t mask = bigger.size() - 1;
  for (const Slot& slot : slots_) {
    if (slot.id == 0) continue;
    size_t i = HashText(views_[slot.id]) & mask;
    while (bigger[i].id != 0) i = (i + 1) & mask;
    bigger[i] = slot;
  }
  slots_.swap(bigger);
}

uint32_t StringPool::Intern(std::string_view text) {
  if (text.empty()) return 0;
  const uint64_t hash = HashText(text);
  const auto tag = static_cast<uint32_t>(hash >> 32);
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  for (; slots_[i].id != 0; i = (i + 1) & mask) {
    if (slots_[i].tag != tag) continue;
    const std::string_view known = views_[slots_[i].id];
    if (known.size() == text.size() && TextsEqual(known.data(), text.data(), text.size()))
      return slots_[i].id;
  }
  // Strings live in large blocks so that views never move and allocation stays cheap.
  if (block_used_ + text.size() > block_size_) {
    block_size_ = std::max<size_t>(text.size(), 1 << 20);
    blocks_.push_back(std::unique_ptr<char[]>(new char[block_size_]));
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, text.data(), text.size());
  block_used_ += text.size();
  auto id = static_cast<uint32_t>(views_.size());
  views_.emplace_back(dst, text.size());
  slots_[i] = Slot{tag, id};
  if (2 * views_.size() > slots_.size()) Grow();
  return id;
}

namespace {

uint64_t HashArgs(const CpuArgs& a) {
  uint64_t h = Mix(0x9E3779B97F4A7C15ULL, (uint64_t{a.input_dims} << 32) | a.input_types);
  h = Mix(h, (uint64_t{a.input_strides} << 32) | a.concrete_inputs);
  h = Mix(h, a.launched_kernel);
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

CpuArgsPool::CpuArgsPool() : records_(1), slots_(256, 0) {}

void CpuArgsPool::Grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  const size_t mask = bigger.size() - 1;
  for (uint32_t id : slots_) {
    if (id == 0) continue;
    size_t i = HashArgs(records_[id]) & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = id;
  }
  slots_.swap(bigger);
}

uint32_t CpuArgsPool::Intern(const CpuArgs& args) {
  if (args == CpuArgs{}) return 0;
  const size_t mask = slots_.size() - 1;
  size_t i = HashArgs(args) & mask;
  for (; slots_[i] != 0; i = (i + 1) & mask) {
    if (records_[slots_[i]] == args) return slots_[i];
  }
  const auto id = static_cast<uint32_t>(records_.size());
  records_.push_back(args);
  slots_[i] = id;
  if (2 * records_.size() > slots_.size()) Grow();
  return id;
}

namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

// Merges the sorted runs [a, mid) and [mid, end) into `out`, stably (of two equal elements,
// the first run's first). Only where the runs overlap are elements compared one by one: the
// first run's elements up to the second's first and the second's from the first's last are
// found by binary search and moved as they are. Runs written at different times (a trace's
// steps, one after another) mostly do not overlap at all.
template <typename T, typename Less>
void MergeRuns(T* a, T* mid, T* end, T* out, Less less) {
  if (a == mid || mid == end) {
    std::move(a, end, out);
    return;
  }
  T* a_cut = std::upper_bound(a, mid, *mid, less);          // a's first element after b's first
  T* b_cut = std::lower_bound(mid, end, *(mid - 1), less);  // b's first not before a's last
  out = std::move(a, a_cut, out);
  // std::merge takes the first range's element of two equal ones: stable.
  out = std::merge(std::make_move_iterator(a_cut), std::make_move_iterator(mid),
                   std::make_move_iterator(mid), std::make_move_iterator(b_cut), out, less);
  std::move(b_cut, end, out);
}

// Stable sort of `n` elements at `data` that exploits runs already in order: the runs are
// merged pairwise, back and forth between `data` and `scratch` (n elements, overwritten).
// A profiler writes a thread's events almost in time order (5 runs in the 99k CPU events of
// the owlv2 trace), so this takes log2(runs) passes where a general sort takes log2(n).
// `bounds` are where the runs start, 0 first, then n: the positions i where
// less(data[i], data[i - 1]).
template <typename T, typename Less>
void NaturalMergeSort(T* data, T* scratch, size_t n, Less less, std::vector<size_t> bounds) {
  T* from = data;
  T* to = scratch;
  while (bounds.size() > 2) {
    std::vector<size_t> merged = {0};
    for (size_t k = 0; k + 1 < bounds.size(); k += 2) {
      const size_t lo = bounds[k], mid = bounds[k + 1];
      const size_t hi = k + 2 < bounds.size() ? bounds[k + 2] : mid;
      MergeRuns(from + lo, from + mid, from + hi, to + lo, less);
      merged.push_back(hi);
    }
    bounds.swap(merged);
    std::swap(from, to);
  }
  if (from != data) std::move(from, from + n, data);
}

// Moves element order[k] of `items` to position k for every k, in place, by following the
// permutation's cycles: one temporary instead of a second copy of every element. `order` is
// left as the identity.
template <typename T>
void ApplyPermutation(std::vector<T>& items, std::vector<uint32_t>& order) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (order[i] == i) continue;
    T first = std::move(items[i]);
    size_t at = i;
    while (true) {
      const size_t from = order[at];
      order[at] = static_cast<uint32_t>(at);
      if (from == i) {
        items[at] = std::move(first);
        break;
      }
      items[at] = std::move(items[from]);
      at = from;
    }
  }
}

// Orders CPU events by (thread, start, longest first), keeping the input order of full ties,
// as one stable sort would. One pass counts each thread's events and notes where they fall
// out of time order, as profilers mostly write them in it; event indices are then bucketed by
// thread (unless the threads' events are contiguous already) and a thread's indices sorted
// only if they were not in order. The events themselves move once, in place (no second vector
// of events to fault in), and not at all when they are already grouped by thread and in
// order.
void SortCpuEvents(std::vector<CpuEvent>& cpu) {
  auto before = [](const CpuEvent& a, const CpuEvent& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    return a.dur_ns > b.dur_ns;
  };
  struct ThreadOrder {
    size_t events = 0;
    const CpuEvent* last = nullptr;
    std::vector<size_t> runs = {0};  // where its runs in order start, as NaturalMergeSort's
    bool in_order() const { return runs.size() == 1; }
  };
  std::vector<ThreadOrder> threads;
  bool grouped = true;  // each thread's events contiguous, threads in increasing order
  for (const CpuEvent& ev : cpu) {
    if (ev.thread >= threads.size()) threads.resize(ev.thread + size_t{1});
    ThreadOrder& t = threads[ev.thread];
    if (t.last) {
      if (before(ev, *t.last)) t.runs.push_back(t.events);
      grouped = grouped && (&ev - 1)->thread == ev.thread;
    } else {
      grouped = grouped && (&ev == cpu.data() || (&ev - 1)->thread < ev.thread);
    }
    t.last = &ev;
    t.events++;
  }
  const bool in_order = std::all_of(threads.begin(), threads.end(),
                                    [](const ThreadOrder& t) { return t.in_order(); });
  if (grouped && in_order) return;
  std::vector<size_t> start(threads.size() + 1, 0);
  for (size_t t = 0; t < threads.size(); ++t) start[t + 1] = start[t] + threads[t].events;
  std::vector<uint32_t> order(cpu.size());
  if (grouped) {
    std::iota(order.begin(), order.end(), 0u);
  } else {
    std::vector<size_t> next(start.begin(), start.end() - 1);
    for (size_t i = 0; i < cpu.size(); ++i) order[next[cpu[i].thread]++] = static_cast<uint32_t>(i);
  }
  auto by_time = [&](uint32_t x, uint32_t y) { return before(cpu[x], cpu[y]); };
  std::vector<uint32_t> scratch;  // the merge buffer, made only if some thread is out of order
  for (size_t t = 0; t < threads.size(); ++t) {
    if (threads[t].in_order()) continue;
    if (scratch.empty()) scratch.resize(cpu.size());
    threads[t].runs.push_back(threads[t].events);
    NaturalMergeSort(order.data() + start[t], scratch.data() + start[t], threads[t].events, by_time,
                     std::move(threads[t].runs));
  }
  ApplyPermutation(cpu, order);
}

// Orders GPU activities by start, keeping the input order of ties, as one stable sort would:
// indices are sorted and the activities moved once, in place, instead of through a buffer as
// large as the activities.
void SortGpuEvents(std::vector<GpuEvent>& gpu) {
  auto by_start = [](const GpuEvent& a, const GpuEvent& b) { return a.ts_ns < b.ts_ns; };
  if (std::is_sorted(gpu.begin(), gpu.end(), by_start)) return;
  std::vector<uint32_t> order(gpu.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&gpu](uint32_t a, uint32_t b) { return gpu[a].ts_ns < gpu[b].ts_ns; });
  ApplyPermutation(gpu, order);
}

// Event index by id (correlation or External id), the first one added winning, with the op
// that the event's GPU activities belong to. Profilers count these ids up from a small
// number, so a table indexed by id usually serves; sparse ids are binary-searched in a sorted
// list instead.
class FirstIndexById {
 public:
  struct Hit {
    int32_t index = -1;  // -1: no event has the id
    int32_t op = -1;
  };
  void Add(int64_t id, int32_t index, int32_t op) { entries_.push_back({id, {index, op}}); }
  void Build() {
    if (entries_.empty()) return;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Entry& e : entries_) {
      lo = std::min(lo, e.id);
      hi = std::max(hi, e.id);
    }
    uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (lo >= 0 && range <= 4 * entries_.size() + 4096) {
      base_ = lo;
      table_.assign(range, Hit{});
      for (const Entry& e : entries_) {
        Hit& slot = table_[static_cast<size_t>(e.id - lo)];
        if (slot.index < 0) slot = e.hit;
      }
      entries_ = {};
      return;
    }
    // By id, then by index: the first event of an id first, as a stable sort by id would
    // leave it, without a stable sort's buffer. Ids mostly come in order: checked first.
    auto before = [](const Entry& a, const Entry& b) {
      return a.id != b.id ? a.id < b.id : a.hit.index < b.hit.index;
    };
    if (!std::is_sorted(entries_.begin(), entries_.end(), before))
      std::sort(entries_.begin(), entries_.end(), before);
  }
  Hit Find(int64_t id) const {
    if (!table_.empty()) {
      if (id < base_ || static_cast<uint64_t>(id - base_) >= table_.size()) return {};
      return table_[static_cast<size_t>(id - base_)];
    }
    auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                               [](const Entry& e, int64_t v) { return e.id < v; });
    return it != entries_.end() && it->id == id ? it->hit : Hit{};
  }

 private:
  struct Entry {
    int64_t id;
    Hit hit;
  };
  std::vector<Entry> entries_;
  std::vector<Hit> table_;
  int64_t base_ = 0;
};

}  // namespace

std::string WarningAboutFile(const std::string& path, const std::string& warning) {
  if (path.empty() || warning.starts_with(path)) return warning;
  return path + ": " + warning;
}

int64_t FirstEventClockNs(const TraceData& trace) {
  if (!trace.clock_comparable) return INT64_MIN;
  int64_t first_ns = INT64_MAX;
  for (const CpuEvent& e : trace.cpu) first_ns = std::min(first_ns, e.ts_ns);
  for (const GpuEvent& e : trace.gpu) first_ns = std::min(first_ns, e.ts_ns);
  return first_ns == INT64_MAX ? INT64_MIN : trace.base_time_ns + first_ns;
}

int32_t EnclosingOp(const TraceData& trace, int32_t idx) {
  int32_t p = trace.cpu[idx].parent;
  while (p >= 0 && trace.cpu[p].kind != CpuKind::kOp) p = trace.cpu[p].parent;
  return p;
}

bool IsGraphLaunchName(std::string_view name) {
  // Kineto records the runtime call by name; some CUDA builds add a "_v10000" version suffix.
  return name.starts_with("cudaGraphLaunch") || name.starts_with("hipGraphLaunch");
}

void BuildLinks(TraceData& trace) {
  auto& cpu = trace.cpu;
  // Per thread by start time; a longer event first so it becomes the parent of an equal-start one.
  SortCpuEvents(cpu);
  // One pass over the sorted events nests them and gathers what the links below need (each
  // pass over a large trace's event store costs a read of all of it): the graph launches,
  // the runtime calls by correlation id with the op around each (EnclosingOp), and the steps.
  NameTest graph_launch(trace, IsGraphLaunchName);
  NameTest is_step(trace, [](std::string_view name) { return name.starts_with(kStepPrefix); });
  FirstIndexById runtime_by_correlation;
  trace.iterations.clear();
  std::vector<int32_t> stack;     // the enclosing events of the next one, outermost first
  std::vector<int32_t> stack_op;  // for each of them, the innermost op at or above it
  uint32_t thread = UINT32_MAX;
  for (size_t i = 0; i < cpu.size(); ++i) {
    CpuEvent& ev = cpu[i];
    if (ev.thread != thread) {
      stack.clear();
      stack_op.clear();
      thread = ev.thread;
    }
    // Drop enclosing candidates that end before this event ends (finished or only partly
    // overlapping: an out-of-spec overlap is not nesting).
    while (!stack.empty() && cpu[stack.back()].end_ns() < ev.end_ns()) {
      stack.pop_back();
      stack_op.pop_back();
    }
    ev.parent = stack.empty() ? -1 : stack.back();
    const int32_t op = stack_op.empty() ? -1 : stack_op.back();  // EnclosingOp(trace, i)
    const auto index = static_cast<int32_t>(i);
    stack.push_back(index);
    stack_op.push_back(ev.kind == CpuKind::kOp ? index : op);
    if (ev.kind == CpuKind::kRuntime) {
      ev.graph_launch = graph_launch(ev.name);
      if (ev.link_id >= 0) runtime_by_correlation.Add(ev.link_id, index, op);  // correlation
    } else if (is_step(ev.name)) {
      std::string_view digits = trace.Name(ev.name).substr(kStepPrefix.size());
      int64_t step = -1;
      std::from_chars(digits.data(), digits.data() + digits.size(), step);
      trace.iterations.push_back({step, ev.ts_ns, ev.dur_ns});
    }
  }
  std::sort(trace.iterations.begin(), trace.iterations.end(),
            [](const Iteration& a, const Iteration& b) { return a.ts_ns < b.ts_ns; });
  runtime_by_correlation.Build();
  SortGpuEvents(trace.gpu);

  // A kernel's op: the innermost op around the runtime call that launched it, else the
  // outermost op with the kernel's External id (built only when some kernel needs it: the
  // first op of each id, parents preceding children, is the outermost op of an External id,
  // whose id the kernels of the ops below it inherit).
  bool by_external_id = false;
  for (GpuEvent& g : trace.gpu) {
    if (g.correlation >= 0) {
      const FirstIndexById::Hit launch = runtime_by_correlation.Find(g.correlation);
      if (launch.index >= 0) {
        g.launcher = launch.index;
        g.op = launch.op;
      }
    }
    by_external_id |= g.op < 0 && g.external_id >= 0;
  }
  if (by_external_id) {
    FirstIndexById op_by_external_id;
    for (size_t i = 0; i < cpu.size(); ++i) {
      const auto index = static_cast<int32_t>(i);
      if (cpu[i].kind == CpuKind::kOp && cpu[i].external_id >= 0)
        op_by_external_id.Add(cpu[i].external_id, index, index);
    }
    op_by_external_id.Build();
    for (GpuEvent& g : trace.gpu) {
      if (g.op >= 0 || g.external_id < 0) continue;
      const int32_t op = op_by_external_id.Find(g.external_id).op;
      if (op >= 0) g.op = op;
    }
  }
  if (!trace.collectives.empty()) {
    for (GpuEvent& g : trace.gpu) {
      if (g.collective >= 0) continue;
      // RCCL kernels carry no metadata of their own: take it from record_param_comms above.
      int32_t i = g.launcher >= 0 ? g.launcher : g.op;
      while (i >= 0 && trace.cpu[i].collective < 0) i = trace.cpu[i].parent;
      if (i >= 0) g.collective = trace.cpu[i].collective;
    }
  }
}

}  // namespace sextant
