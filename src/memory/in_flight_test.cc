#include "memory/in_flight.h"

#include <numeric>

#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(InFlightTest, OneFOneBHoldsPpMinusRank) {
  // Narayanan et al. 2021 §2.2: stage r of p keeps p - r micro-batches in flight.
  EXPECT_EQ(AnalyticInFlight(ScheduleKind::k1F1B, 8, 1, 64, 0)[0], 8);
  EXPECT_EQ(AnalyticInFlight(ScheduleKind::k1F1B, 8, 1, 64, 7)[0], 1);
  EXPECT_EQ(AnalyticInFlight(ScheduleKind::k1F1B, 8, 1, 4, 0)[0],
            4);  // fewer micro-batches than stages
}

TEST(InFlightTest, InterleavedRankZeroMatchesMegatronPenalty) {
  // Rank 0 with p=4, v=2: 2*(4-1) + (2-1)*4 + 1 = 11 chunk-micro-batches. Each chunk holds
  // L/(p*v) layers, so the total is 11*L/8 layers = L*(1 + (p-1)/(p*v)) = L*(1 + 3/8).
  auto c = AnalyticInFlight(ScheduleKind::kInterleaved1F1B, 4, 2, 64, 0);
  EXPECT_DOUBLE_EQ(Sum(c), 11.0);
  EXPECT_DOUBLE_EQ(Sum(c) / 8.0, 1.0 + 3.0 / 8.0);
  // Last rank: 0 + 4 + 1 = 5.
  EXPECT_DOUBLE_EQ(Sum(AnalyticInFlight(ScheduleKind::kInterleaved1F1B, 4, 2, 64, 3)), 5.0);
}

TEST(InFlightTest, VShapeNeedsTwoChunks) {
  EXPECT_THROW(AnalyticInFlight(ScheduleKind::kZbvFormatted, 4, 1, 16, 0), UserError);
  // 1F1B at VPP 2 is interleaved: rank 0 of 4 holds 2*(4-1) + 4 + 1 = 11 chunk-micro-batches.
  EXPECT_DOUBLE_EQ(Sum(AnalyticInFlight(ScheduleKind::k1F1B, 4, 2, 64, 0)), 11.0);
  EXPECT_EQ(AnalyticInFlight(ScheduleKind::kGPipe, 4, 1, 16, 2)[0], 16);
}

}  // namespace
}  // namespace sextant
