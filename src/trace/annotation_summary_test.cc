#include "trace/annotation_summary.h"

#include <gtest/gtest.h>

#include "trace/gpu_timeline.h"
#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// ProfilerStep#3 [0, 100) > "1F1B" [1, 90) > "attn(F)" [2, 20) launches k1 (10 us at 30) and
// k2 (5 us at 50); "mlp(F)" [30, 60) launches k3 (20 us at 60). A second "attn(F)" [70, 80)
// launches k4 (4 us at 90). An empty annotation "log" [95, 96) launches nothing.
TraceData Ranges() {
  return KinetoTraceBuilder()
      .Annotation("ProfilerStep#3", 0, 100)
      .Annotation("1F1B", 1, 89)
      .Annotation("attn(F)", 2, 18)
      .Launch(3, 1, 1)
      .Launch(5, 1, 2)
      .Annotation("mlp(F)", 30, 30)
      .Launch(31, 1, 3)
      .Annotation("attn(F)", 70, 10)
      .Launch(71, 1, 4)
      .Annotation("log", 95, 1)
      .Kernel("k1", 30, 10, 1)
      .Kernel("k2", 50, 5, 2)
      .Kernel("k3", 60, 20, 3)
      .Kernel("k4", 90, 4, 4)
      .Parse();
}

const AnnotationStats* Find(const std::vector<AnnotationStats>& v, std::string_view name) {
  for (const auto& a : v) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

TEST(AnnotationSummaryTest, EachRangeHoldsTheGpuWorkLaunchedInsideIt) {
  TraceData t = Ranges();
  std::vector<AnnotationStats> s = SummarizeAnnotations(t, TimelineEvents(t));
  EXPECT_EQ(Find(s, "ProfilerStep#3"), nullptr);  // iterations have their own tables
  const AnnotationStats* attn = Find(s, "attn(F)");
  ASSERT_NE(attn, nullptr);
  EXPECT_EQ(attn->count, 2);
  EXPECT_EQ(attn->cpu_ns, 28'000);  // 18 + 10
  EXPECT_EQ(attn->kernels, 3);
  EXPECT_EQ(attn->kernel_ns, 19'000);    // 10 + 5 + 4
  EXPECT_EQ(attn->gpu_span_ns, 29'000);  // [30, 55) + [90, 94)
  const AnnotationStats* mlp = Find(s, "mlp(F)");
  ASSERT_NE(mlp, nullptr);
  EXPECT_EQ(mlp->kernel_ns, 20'000);
  // The enclosing range holds all four kernels: GPU time 39 us over the span [30, 94).
  const AnnotationStats* outer = Find(s, "1F1B");
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->kernels, 4);
  EXPECT_EQ(outer->kernel_ns, 39'000);
  EXPECT_EQ(outer->gpu_span_ns, 64'000);
  // Largest GPU time first; a range without GPU work is listed with zeros, last.
  EXPECT_EQ(s.front().name, "1F1B");
  ASSERT_NE(Find(s, "log"), nullptr);
  EXPECT_EQ(Find(s, "log")->kernels, 0);
  EXPECT_EQ(s.back().name, "log");
}

// A range opened inside one of its own name (a recursive record_function, as HTA's
// critical-path trace nests "forward" twice) is one call: "forward" [0, 50) > "block" [1, 40) >
// "forward" [2, 30) launches k1 (10 us at 20). Counted once, k1 once, span 10 us, not 20.
TEST(AnnotationSummaryTest, ARangeInsideOneOfItsOwnNameIsOneCall) {
  TraceData t = KinetoTraceBuilder()
                    .Annotation("forward", 0, 50)
                    .Annotation("block", 1, 39)
                    .Annotation("forward", 2, 28)
                    .Launch(3, 1, 1)
                    .Kernel("k1", 20, 10, 1)
                    .Parse();
  std::vector<AnnotationStats> s = SummarizeAnnotations(t, TimelineEvents(t));
  const AnnotationStats* forward = Find(s, "forward");
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->count, 1);
  EXPECT_EQ(forward->cpu_ns, 50'000);
  EXPECT_EQ(forward->kernels, 1);
  EXPECT_EQ(forward->kernel_ns, 10'000);
  EXPECT_EQ(forward->gpu_span_ns, 10'000);
  ASSERT_NE(Find(s, "block"), nullptr);
  EXPECT_EQ(Find(s, "block")->count, 1);
}

// The training loop (thread 1) opens "attn(B)" [10, 40) and calls backward; autograd's engine
// (thread 2) launches k1 at 12 and k2 at 45 with no range of its own. k1 belongs to attn(B)
// (and to the enclosing "1F1B" [0, 50)); k2, launched after attn(B) closed, only to 1F1B. A
// launch from thread 2 inside its own range "hook" [20, 30) keeps that range alone.
TEST(AnnotationSummaryTest, BackwardThreadLaunchesBelongToTheLoopsOpenRange) {
  TraceData t = KinetoTraceBuilder()
                    .Annotation("1F1B", 0, 50)
                    .Annotation("attn(B)", 10, 30)
                    .Launch(12, 1, 1, /*tid=*/2)
                    .Annotation("hook", 20, 10, /*tid=*/2)
                    .Launch(21, 1, 3, /*tid=*/2)
                    .Launch(45, 1, 2, /*tid=*/2)
                    .Kernel("k1", 13, 10, 1)
                    .Kernel("k2", 46, 2, 2)
                    .Kernel("k3", 24, 3, 3)
                    .Parse();
  std::vector<AnnotationStats> s = SummarizeAnnotations(t, TimelineEvents(t));
  ASSERT_NE(Find(s, "attn(B)"), nullptr);
  EXPECT_EQ(Find(s, "attn(B)")->kernels, 1);
  EXPECT_EQ(Find(s, "attn(B)")->kernel_ns, 10'000);
  EXPECT_EQ(Find(s, "1F1B")->kernels, 2);  // k1 and k2; k3 has a range of its own thread
  EXPECT_EQ(Find(s, "1F1B")->kernel_ns, 12'000);
  EXPECT_EQ(Find(s, "hook")->kernels, 1);
}

}  // namespace
}  // namespace sextant
