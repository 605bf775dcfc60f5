#include "trace/event_store.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace sextant {
namespace {

int calls = 0;
bool CountingIsNccl(std::string_view name) {
  ++calls;
  return name.starts_with("nccl");
}

// A name is tested once, whatever the number of events carrying it.
TEST(NameTestTest, TestsEachNameOnce) {
  TraceData trace;
  const uint32_t nccl = trace.strings.Intern("ncclKernel_AllReduce");
  const uint32_t gemm = trace.strings.Intern("sm90_gemm");
  NameTest is_nccl(trace, CountingIsNccl);
  calls = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(is_nccl(nccl));
    EXPECT_FALSE(is_nccl(gemm));
  }
  EXPECT_EQ(calls, 2);
}

// Texts of every length up to past two words, differing in one byte anywhere: each is kept
// once, found again from a copy elsewhere in memory, and told apart from the others.
TEST(StringPoolTest, KeepsEachTextOnceWhateverItsLength) {
  StringPool pool;
  std::vector<std::string> texts;
  for (size_t n = 1; n <= 40; ++n) {
    const std::string base(n, 'a');
    texts.push_back(base);
    for (size_t at = 0; at < n; ++at) {
      std::string other = base;
      other[at] = 'b';
      texts.push_back(other);
    }
  }
  std::vector<uint32_t> ids;
  for (const std::string& t : texts) ids.push_back(pool.Intern(t));
  EXPECT_EQ(pool.size(), texts.size() + 1);  // and the empty string
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string copy = texts[i];
    EXPECT_EQ(pool.Intern(copy), ids[i]) << texts[i];
    EXPECT_EQ(pool.Get(ids[i]), texts[i]);
  }
  EXPECT_EQ(pool.Intern(""), 0u);
}

// Argument records are kept once each: the same record gets the same id, one without
// arguments is 0, and ids stay as the pool grows.
TEST(CpuArgsPoolTest, KeepsEachRecordOnce) {
  CpuArgsPool pool;
  EXPECT_EQ(pool.Intern(CpuArgs{}), 0u);
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < 1000; ++i) ids.push_back(pool.Intern({i + 1, i % 7, 0, i % 3, 0}));
  EXPECT_EQ(pool.size(), 1001u);
  for (uint32_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(pool.Intern({i + 1, i % 7, 0, i % 3, 0}), ids[i]);
    EXPECT_EQ(pool.Get(ids[i]).input_dims, i + 1);
    EXPECT_EQ(pool.Get(ids[i]).concrete_inputs, i % 3);
  }
  EXPECT_EQ(pool.Intern({0, 0, 0, 0, 5}), 1001u);  // a runtime call's kernel alone
  EXPECT_EQ(pool.Get(0), CpuArgs{});
}

// An op's launch call sits under an annotation inside the op: the launch's op is the op,
// the annotation is skipped, and an op at the top has none.
TEST(EnclosingOpTest, SkipsRuntimeCallsAndAnnotations) {
  TraceData trace;
  CpuEvent op, annotation, launch;
  op.kind = CpuKind::kOp;
  annotation.kind = CpuKind::kAnnotation;
  annotation.parent = 0;
  launch.kind = CpuKind::kRuntime;
  launch.parent = 1;
  trace.cpu = {op, annotation, launch};
  EXPECT_EQ(EnclosingOp(trace, 2), 0);
  EXPECT_EQ(EnclosingOp(trace, 1), 0);
  EXPECT_EQ(EnclosingOp(trace, 0), -1);
}

// CPU events end up by thread, then start, the longer of two with one start first, and
// full ties in the order read; each event's parent is the innermost one around it.
TEST(BuildLinksTest, OrdersCpuEventsByThreadAndStartAndNestsThem) {
  TraceData trace;
  auto event = [&](uint32_t thread, int64_t ts, int64_t dur, std::string_view name) {
    CpuEvent ev;
    ev.kind = CpuKind::kOp;
    ev.thread = thread;
    ev.ts_ns = ts;
    ev.dur_ns = dur;
    ev.name = trace.strings.Intern(name);
    return ev;
  };
  // Thread 1 in order, thread 0 out of order and interleaved with it; "a" and "b" tie fully.
  trace.cpu = {event(1, 5, 10, "t1 outer"), event(0, 20, 5, "inner"), event(1, 7, 2, "t1 inner"),
               event(0, 10, 30, "outer"),   event(0, 20, 1, "a"),     event(0, 20, 1, "b"),
               event(0, 20, 10, "middle")};
  BuildLinks(trace);
  std::vector<std::string_view> names;
  for (const CpuEvent& ev : trace.cpu) names.push_back(trace.Name(ev.name));
  EXPECT_EQ(names, (std::vector<std::string_view>{"outer", "middle", "inner", "a", "b", "t1 outer",
                                                  "t1 inner"}));
  // "b" nests in "a": of two events with one span, the one read first encloses the other.
  const std::vector<int32_t> parents = {-1, 0, 1, 2, 3, -1, 5};
  for (size_t i = 0; i < parents.size(); ++i) EXPECT_EQ(trace.cpu[i].parent, parents[i]) << i;

  // Already grouped by thread and in order: nothing moves.
  std::vector<CpuEvent> read = trace.cpu;
  for (CpuEvent& ev : trace.cpu) ev.parent = -1;
  BuildLinks(trace);
  for (size_t i = 0; i < parents.size(); ++i) {
    EXPECT_EQ(trace.cpu[i].name, read[i].name) << i;
    EXPECT_EQ(trace.cpu[i].parent, parents[i]) << i;
  }
}

// Many runs in order, some overlapping in time and some wholly after the one before (a long
// profile's steps), with ties inside and across runs, on one thread and on two interleaved:
// the order is the one a stable sort by thread, start and longest first gives.
TEST(BuildLinksTest, OrdersManyRunsAsAStableSortWould) {
  for (const bool two_threads : {false, true}) {
    TraceData trace;
    uint32_t seed = 7;
    auto next = [&seed](uint32_t range) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 16) % range;
    };
    int64_t id = 0;
    for (int step = 0; step < 40; ++step) {
      // Odd steps overlap the step before; even ones start after it.
      const int64_t base = step % 2 == 0 ? step * 1000 : step * 1000 - 1500;
      const int runs = 1 + static_cast<int>(next(4));
      for (int run = 0; run < runs; ++run) {
        int64_t ts = base + static_cast<int64_t>(next(50));
        const int length = static_cast<int>(next(30));
        for (int k = 0; k < length; ++k) {
          CpuEvent ev;
          ev.thread = two_threads && next(5) == 0 ? 1 : 0;
          ev.ts_ns = ts;
          ev.dur_ns = static_cast<int64_t>(next(3));
          ev.external_id = id++;  // which event it is
          trace.cpu.push_back(ev);
          ts += static_cast<int64_t>(next(3));  // repeats a start now and then
        }
      }
    }
    std::vector<CpuEvent> expected = trace.cpu;
    std::stable_sort(expected.begin(), expected.end(), [](const CpuEvent& a, const CpuEvent& b) {
      if (a.thread != b.thread) return a.thread < b.thread;
      if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
      return a.dur_ns > b.dur_ns;
    });
    BuildLinks(trace);
    ASSERT_EQ(trace.cpu.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_EQ(trace.cpu[i].external_id, expected[i].external_id) << two_threads << " " << i;
  }
}

}  // namespace
}  // namespace sextant
