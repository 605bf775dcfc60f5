#include "pipeline/pipeline_simulation_json.h"

#include <gtest/gtest.h>

#include "pipeline/schedule_generators.h"

namespace sextant {
namespace {

// 1F1B PP 2, two micro-batches, per-stage costs differ (the last stage carries the output
// layer): stage 0 F=1 BW=2, stage 1 F=2 BW=3, by hand:
//   rank 0: F0 [0,1] F1 [1,2]                 BW0 [6,8]            BW1 [11,13]
//   rank 1:          F0 [1,3] BW0 [3,6] F1 [6,8] BW1 [8,11]
// step 13 s; rank 0 busy 6 (bubble 7), rank 1 busy 10 (bubble 3).
TEST(PipelineSimulationJsonTest, SummaryOfHandWorkedHeterogeneousStages) {
  PipelineCosts costs = UniformCosts(2, 1, 2, 0, 100);
  costs.stages[1].forward_s = 2;
  costs.stages[1].backward_input_s = 3;
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({2, 1, 2}), costs);
  const nlohmann::json j = SimulationToJson(sim, true);
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_DOUBLE_EQ(j["step_time_ms"].get<double>(), 13000.0);
  EXPECT_DOUBLE_EQ(j["ranks"][0]["busy_ms"].get<double>(), 6000.0);
  EXPECT_DOUBLE_EQ(j["ranks"][0]["bubble_ms"].get<double>(), 7000.0);
  EXPECT_DOUBLE_EQ(j["ranks"][1]["bubble_ratio"].get<double>(), 3.0 / 13.0);
  EXPECT_EQ(j["ranks"][0]["peak_activation_bytes"], 200);
  const auto& timeline = j["ranks"][0]["timeline"];
  // rank 0: F0, send, F1, send, recv, BW0, recv, BW1 (zero-time transfers).
  ASSERT_EQ(timeline.size(), 8u);
  EXPECT_EQ(timeline[5]["op"], "BW");
  EXPECT_DOUBLE_EQ(timeline[5]["start_ms"].get<double>(), 6000.0);
  EXPECT_EQ(timeline[7]["op"], "BW");
  EXPECT_DOUBLE_EQ(timeline[7]["start_ms"].get<double>(), 11000.0);
  EXPECT_EQ(timeline[1]["op"], "send");
  EXPECT_EQ(timeline[1]["payload"], "activation");
  EXPECT_EQ(timeline[4]["op"], "recv");
  EXPECT_EQ(timeline[4]["payload"], "gradient");
}

TEST(PipelineSimulationJsonTest, ComparisonListsSkippedSchedules) {
  ComparisonCosts costs;
  costs.vpp1 = UniformCosts(2, 1, 1, 1);
  const nlohmann::json j = ComparisonToJson(CompareSchedules({2, 1, 4}, costs));
  ASSERT_EQ(j["schedules"].size(), AllScheduleKinds().size());
  EXPECT_EQ(j["schedules"][1]["schedule"], "1f1b");
  EXPECT_EQ(j["schedules"][1]["ran"], true);
  EXPECT_DOUBLE_EQ(j["schedules"][1]["step_time_ms"].get<double>(), 15000.0);  // (4+1)*3 s
  EXPECT_EQ(j["schedules"][2]["ran"], false);  // interleaved: no costs for that layout
  EXPECT_TRUE(j["schedules"][2].contains("skipped_because"));
  EXPECT_TRUE(j["fastest"].is_string());
}

}  // namespace
}  // namespace sextant
