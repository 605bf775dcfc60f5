#include "parallel/schedule_kind.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

TEST(ScheduleKindTest, EveryNameRoundTrips) {
  for (ScheduleKind k : AllScheduleKinds()) {
    EXPECT_EQ(ParseScheduleKind(ScheduleKindName(k)), k) << ScheduleKindName(k);
  }
}

TEST(ScheduleKindTest, PrimusCliNamesAndYamlValuesAreTheSameSchedules) {
  // --pipeline-schedule-algorithm (research/primus-projection.md §3.7).
  EXPECT_EQ(ParseScheduleKind("zerobubble"), ScheduleKind::kZeroBubbleH1);
  EXPECT_EQ(ParseScheduleKind("zerobubble-heuristic"), ScheduleKind::kZeroBubbleHeuristic);
  EXPECT_EQ(ParseScheduleKind("seaailab-ilp"), ScheduleKind::kZeroBubbleHeuristic);
  EXPECT_EQ(ParseScheduleKind("zbv-greedy-half"), ScheduleKind::kZbvGreedyHalf);
  // primus_pipeline.yaml pp_algorithm values.
  EXPECT_EQ(ParseScheduleKind("1f1b"), ScheduleKind::k1F1B);
  EXPECT_EQ(ParseScheduleKind("1f1b-interleaved"), ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(ParseScheduleKind("zero-bubble"), ScheduleKind::kZeroBubbleH1);
  EXPECT_EQ(ParseScheduleKind("zero-bubble-heuristic"), ScheduleKind::kZeroBubbleHeuristic);
  EXPECT_EQ(ParseScheduleKind("zbv-formatted"), ScheduleKind::kZbvFormatted);
  EXPECT_EQ(ParseScheduleKind("v-half"), ScheduleKind::kZbvGreedyHalf);
  EXPECT_EQ(ParseScheduleKind("v-min"), ScheduleKind::kZbvGreedyMin);
}

TEST(ScheduleKindTest, RequestsAndTyposAreNotSchedules) {
  ScheduleKind k;
  EXPECT_FALSE(LookupScheduleKind("auto", &k));
  EXPECT_FALSE(LookupScheduleKind("all", &k));
  try {
    ParseScheduleKind("zero-buble");
    FAIL() << "a typo must be refused";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("did you mean zerobubble, zero-bubble?"), std::string::npos) << message;
  }
}

TEST(ScheduleKindTest, VirtualStagesDecideBetweenPlainAndInterleaved1F1B) {
  EXPECT_EQ(ForVirtualStages(ScheduleKind::k1F1B, 2), ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(ForVirtualStages(ScheduleKind::kInterleaved1F1B, 1), ScheduleKind::k1F1B);
  EXPECT_EQ(ForVirtualStages(ScheduleKind::kZbvFormatted, 1), ScheduleKind::kZbvFormatted);
  EXPECT_EQ(ChunksPerRank(ScheduleKind::kZbvGreedyMin, 1), 2);  // a V always has two chunks
  EXPECT_EQ(ChunksPerRank(ScheduleKind::kInterleaved1F1B, 4), 4);
  EXPECT_EQ(ShapeOf(ScheduleKind::kDualPipeV), StageShape::kVShape);
  EXPECT_TRUE(SplitsBackward(ScheduleKind::kZeroBubbleH2));
  EXPECT_FALSE(SplitsBackward(ScheduleKind::kInterleaved1F1B));
}

}  // namespace
}  // namespace sextant
