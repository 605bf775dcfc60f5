#include "trace/iteration_annotation.h"

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

void ExpectStats(std::string_view text, ChunkStats want) {
  std::optional<ChunkStats> got = ParseChunkStats(text);
  ASSERT_TRUE(got.has_value()) << text;
  EXPECT_EQ(got->c_sq, want.c_sq) << text;
  EXPECT_EQ(got->c_sk, want.c_sk) << text;
  EXPECT_EQ(got->c_sqsq, want.c_sqsq) << text;
  EXPECT_EQ(got->c_sqsk, want.c_sqsk) << text;
  EXPECT_EQ(got->g_sq, want.g_sq) << text;
  EXPECT_EQ(got->g_sk, want.g_sk) << text;
  EXPECT_EQ(got->g_sqsq, want.g_sqsq) << text;
  EXPECT_EQ(got->g_sqsk, want.g_sqsk) << text;
}

// The step annotation of the corpus's vLLM trace (9 prefill chunks and 37 decodes).
TEST(ParseChunkStatsTest, VllmDetailedStep) {
  ExpectStats(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37"
      "sqsk34489)",
      {8155, 8430, 7475785, 7671310, 37, 34489, 37, 34489});
}

// Examples of TraceLens's annotation_utils.py: SGLang's MIXED step and ATOM's detailed steps.
TEST(ParseChunkStatsTest, SglangAndAtomDetailedSteps) {
  ExpectStats(
      "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 "
      "g_sqsk=12]",
      {5, 8, 25, 40, 1, 12, 1, 12});
  ExpectStats("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]",
              {0, 0, 0, 0, 128, 131072, 256, 262144});
  ExpectStats("decode[bs=32 tok=128 d=32 spec=3 sqsq=512 sqsk=262144 sk=65536]",
              {0, 0, 0, 0, 128, 65536, 512, 262144});
  ExpectStats("prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]",
              {14721, 14721, 108745533, 108745533, 0, 0, 0, 0});
}

// Native annotations carry counts but no sq/sk sums; other user annotations carry nothing.
TEST(ParseChunkStatsTest, AnnotationsWithoutSumsGiveNone) {
  for (std::string_view text :
       {"execute_context_2(14721)_generation_0(0)", "step[DECODE bs=32]",
        "step[EXTEND bs=2 toks=14721]", "decode[bs=64 tok=64 d=64]", "ProfilerStep#3",
        "step[DECODER g_sqsq=1]", "step[DECODE g_sqsq=1", "execute_1_context_1(sq1sk1)", ""}) {
    EXPECT_FALSE(ParseChunkStats(text).has_value()) << text;
  }
}

// A sum too large to hold is refused rather than wrapped; a number the statistics do not use
// (a request count, another key, an earlier value of a key) may be any size.
TEST(ParseChunkStatsTest, OnlyTheSumsUsedMustFit) {
  EXPECT_FALSE(ParseChunkStats("execute_1_context_1(sq99999999999999999999sk1sqsq1sqsk1)_"
                               "generation_0(sq0sk0sqsq0sqsk0)")
                   .has_value());
  EXPECT_FALSE(ParseChunkStats("step[DECODE g_sqsq=123456789012345678901234]").has_value());
  EXPECT_FALSE(ParseChunkStats("decode[tok=1 sqsq=1 sqsk=99999999999999999999]").has_value());
  ExpectStats(
      "execute_99999999999999999999_context_1(sq1sk2sqsq1sqsk2)_generation_0(sq0sk0sqsq0sqsk0)",
      {1, 2, 1, 2, 0, 0, 0, 0});
  ExpectStats("step[DECODE ts=99999999999999999999 g_sq=99999999999999999999 g_sq=3 g_sqsq=3]",
              {0, 0, 0, 0, 3, 0, 3, 0});
}

// Python's readings: SGLang's marker may be any "sqsq=<digit>" before the first ']'; ATOM's
// values go through int() (sign, underscores; anything else is 0), a list value may carry a
// "...+N" tail, and only the first line is read.
TEST(ParseChunkStatsTest, EdgesReadAsTraceLensReadsThem) {
  ExpectStats("step[DECODE sqsq= g_sq=1 g_sqsq=5 g_sqsk=7 g_sk=7]", {0, 0, 0, 0, 1, 7, 5, 7});
  ExpectStats("decode[tok=1_000 sk=+64 sqsq=2x sqsk=-3]", {0, 0, 0, 0, 1000, 64, 0, -3});
  ExpectStats("prefill[ctx=[4096, 4096]...+3 tok=9 sqsq=81 sqsk=81 sk=9]",
              {9, 9, 81, 81, 0, 0, 0, 0});
  ExpectStats("decode[tok=2 sqsq=2 sqsk=8 sk=8]\nnext line]", {0, 0, 0, 0, 2, 8, 2, 8});
  EXPECT_FALSE(ParseChunkStats("decode[tok=2\nsqsq=2 sqsk=8 sk=8]").has_value());
}

// Of the annotations around a window, the earliest-starting one that starts at or before it
// and ends strictly after it (TraceLens's apply_annotation).
TEST(AnnotationIndexTest, EarliestEnclosingAnnotation) {
  TraceData trace = KinetoTraceBuilder()
                        .Annotation("outer", 0, 100)
                        .Annotation("inner", 10, 40)
                        .Annotation("late", 60, 10, 2)
                        .CpuOp("aten::mm", 20, 5)
                        .Parse();
  const AnnotationIndex index(trace);
  auto name = [&](double begin_us, double end_us) {
    const uint32_t id =
        index.Enclosing(static_cast<int64_t>(begin_us * 1000), static_cast<int64_t>(end_us * 1000));
    return id == 0 ? std::string("-") : std::string(trace.Name(id));
  };
  EXPECT_EQ(name(20, 30), "outer");  // inner encloses it too but starts later
  EXPECT_EQ(name(65, 68), "outer");  // not "late", which starts after outer
  EXPECT_EQ(name(95, 100), "-");     // ends with outer: not strictly inside
  EXPECT_EQ(name(-5, 1), "-");       // starts before every annotation
}

TEST(AnnotationIndexTest, LaterAnnotationEnclosesWhenEarlierOnesEndTooSoon) {
  TraceData trace = KinetoTraceBuilder()
                        .Annotation("first", 0, 10)
                        .Annotation("second", 5, 50)
                        .CpuOp("aten::mm", 20, 5)
                        .Parse();
  const AnnotationIndex index(trace);
  EXPECT_EQ(trace.Name(index.Enclosing(20000, 25000)), "second");
  EXPECT_EQ(index.Enclosing(2000, 25000), 0u);  // second starts after it
}

}  // namespace
}  // namespace sextant
