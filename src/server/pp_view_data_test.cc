#include "server/pp_view_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/pp_dump_reader.h"
#include "pipeline/schedule_generators.h"
#include "server/pp_view_page.h"
#include "server/web_assets.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::HasSubstr;

const nlohmann::json& Iteration(const nlohmann::json& run, const std::string& key) {
  for (const auto& it : run["iterations"]) {
    if (it["key"] == key) return it;
  }
  ADD_FAILURE() << "no iteration " << key;
  static const nlohmann::json none;
  return none;
}

// Megatron's interleaved order (megatron/core/pipeline_parallel/schedules.py,
// get_model_chunk_id / get_microbatch_id_in_model_chunk), worked by hand for PP 4, VPP 2, 8
// micro-batches: forwards 0-3 are micro-batches 0-3 of chunk 0, forwards 4-7 the same
// micro-batches of chunk 1, forward 8 micro-batch 4 of chunk 0; backwards visit chunk 1 first.
TEST(PpViewDataTest, InfersMegatronInterleavedLabels) {
  int mb = -1, chunk = -1;
  ASSERT_TRUE(InferMegatronLabel(4, 2, 8, 3, false, &mb, &chunk));
  EXPECT_EQ(mb, 3);
  EXPECT_EQ(chunk, 0);
  ASSERT_TRUE(InferMegatronLabel(4, 2, 8, 5, false, &mb, &chunk));
  EXPECT_EQ(mb, 1);
  EXPECT_EQ(chunk, 1);
  ASSERT_TRUE(InferMegatronLabel(4, 2, 8, 8, false, &mb, &chunk));
  EXPECT_EQ(mb, 4);
  EXPECT_EQ(chunk, 0);
  ASSERT_TRUE(InferMegatronLabel(4, 2, 8, 0, true, &mb, &chunk));
  EXPECT_EQ(mb, 0);
  EXPECT_EQ(chunk, 1);
  ASSERT_TRUE(InferMegatronLabel(4, 2, 8, 15, true, &mb, &chunk));
  EXPECT_EQ(mb, 7);
  EXPECT_EQ(chunk, 0);
  // 1F1B: the k-th op is micro-batch k.
  ASSERT_TRUE(InferMegatronLabel(8, 1, 16, 11, true, &mb, &chunk));
  EXPECT_EQ(mb, 11);
  EXPECT_EQ(chunk, 0);
  // Megatron needs whole groups of PP micro-batches to interleave; no guess otherwise.
  EXPECT_FALSE(InferMegatronLabel(4, 2, 6, 0, false, &mb, &chunk));
  EXPECT_FALSE(InferMegatronLabel(8, 1, 16, 16, false, &mb, &chunk));
}

// Two ranks, 1F1B, two micro-batches, F = 1 ms and B = 2 ms everywhere, with rank 0's last
// backward waiting 1 ms longer than it had to. By hand: the ideal 1F1B step is
// (m + p - 1)(F + B) = 3 x 3 = 9 ms (Narayanan et al. 2021); the measured one is 10 ms.
PrimusDump HandWrittenDump() {
  PrimusDump dump;
  dump.config = ParsePrimusDumpConfig(R"({"pp_size": 2, "vp_size": 1, "num_mbs": 2})", "c.json");
  dump.ranks.push_back(ParsePrimusDumpRank(
      R"({"1": {"total": 10, "memory": 2.0, "fwd_start": [0, 1], "fwd_end": [1, 2],
                "bwd_start": [4, 8], "bwd_end": [6, 10]}})",
      "pp_rank_0.json", 0));
  dump.ranks.push_back(ParsePrimusDumpRank(
      R"({"1": {"total": 7, "memory": 1.0, "fwd_start": [1, 4], "fwd_end": [2, 5],
                "bwd_start": [2, 5], "bwd_end": [4, 7]}})",
      "pp_rank_1.json", 1));
  return dump;
}

TEST(PpViewDataTest, MeasuredDumpWithItsIdealReplay) {
  PpViewData view("t");
  view.AddMeasured(HandWrittenDump(), "hand", "dir", {});
  const nlohmann::json j = view.ToJson();
  ASSERT_EQ(j["runs"].size(), 2u);
  const nlohmann::json& measured = j["runs"][0];
  EXPECT_EQ(measured["source"], "measured");
  EXPECT_TRUE(measured["labels_inferred"]);
  const nlohmann::json& it = Iteration(measured, "1");
  EXPECT_DOUBLE_EQ(it["iteration_time_ms"].get<double>(), 10.0);
  // Rank 0: busy 1 + 1 + 2 + 2 = 6 of 10 -> bubble 0.4; rank 1 the same busy time.
  EXPECT_DOUBLE_EQ(it["ranks"][0]["bubble_ratio"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(it["ranks"][0]["busy_ms"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(it["stage_imbalance"].get<double>(), 1.0);
  // Rank 0 holds both micro-batches between F1 (ends at 2) and B0 (ends at 6).
  EXPECT_EQ(it["ranks"][0]["peak_inflight_micro_batches"], 2);
  EXPECT_EQ(it["ranks"][1]["peak_inflight_micro_batches"], 1);
  ASSERT_EQ(it["ranks"][0]["blocks"].size(), 4u);
  EXPECT_EQ(it["ranks"][0]["blocks"][2]["op"], "B");
  EXPECT_EQ(it["ranks"][0]["blocks"][2]["mb"], 0);

  const nlohmann::json& ideal = j["runs"][1];
  EXPECT_EQ(ideal["source"], "ideal");
  EXPECT_EQ(ideal["ideal_of"], measured["id"]);
  EXPECT_NEAR(Iteration(ideal, "1")["iteration_time_ms"].get<double>(), 9.0, 1e-9);
  ASSERT_EQ(j["comparisons"].size(), 1u);
  EXPECT_NEAR(j["comparisons"][0]["ranks"][0]["total_diff_pct"].get<double>(), -10.0, 1e-9);
  EXPECT_EQ(j["initial"][0]["iteration"], "1");
}

// Ids come from the file: absurd ones leave the block unlabelled and the replay out, never a
// simulation sized by them.
TEST(PpViewDataTest, AbsurdMicroBatchIdsAreNotTrusted) {
  PrimusDump dump;
  dump.config = ParsePrimusDumpConfig(R"({"pp_size": 1, "vpp_size": 1, "micro_batches": 1})", "c");
  dump.ranks.push_back(ParsePrimusDumpRank(
      R"({"0": {"total": 3, "memory": 0, "fwd_start": [0], "fwd_end": [1],
                "fwd_minibatch": [4000000000000], "fwd_chunk": [0],
                "bwd_start": [1], "bwd_end": [3], "bwd_minibatch": [2000000], "bwd_chunk": [0]}})",
      "pp_rank_0.json", 0));
  dump.config.generator.clear();  // treat it as measured, so a replay is attempted
  PpViewData view("t");
  view.AddMeasured(dump, "absurd", "dir", {});
  const nlohmann::json j = view.ToJson();
  ASSERT_EQ(j["runs"].size(), 1u);  // no ideal run
  EXPECT_EQ(j["runs"][0]["iterations"][0]["ranks"][0]["blocks"][0]["mb"], -1);
  EXPECT_THAT(j["notes"].dump(), HasSubstr("no ideal replay"));
}

// config.json's num_mbs disagreeing with the forwards each rank recorded is named, not left to
// surface as a replay that fails for no stated reason; 0 micro-batches is refused.
TEST(PpViewDataTest, AMicroBatchCountTheRanksDoNotRecordIsNamed) {
  PrimusDump dump = HandWrittenDump();
  dump.config.num_mbs = 12;
  dump.config.generator.clear();
  PpViewData view("t");
  view.AddMeasured(dump, "mismatch", "dir", {});
  EXPECT_THAT(view.ToJson()["notes"].dump(),
              HasSubstr("config.json says num_mbs 12 (x VPP 1 = 12 forwards per rank), but rank "
                        "0 recorded 2 in iteration 1"));
  PpViewData agrees("t");
  agrees.AddMeasured(HandWrittenDump(), "agrees", "dir", {});
  EXPECT_THAT(agrees.ToJson()["notes"].dump(), ::testing::Not(HasSubstr("config.json says")));
  EXPECT_THROW(ParsePrimusDumpConfig(R"({"pp_size": 2, "num_mbs": 0})", "c.json"), UserError);
}

// A simulation is compared with a measured run only when it is the same pipeline; otherwise
// the view says why not instead of printing a meaningless percentage.
TEST(PpViewDataTest, ComparesOnlyTheSamePipeline) {
  const PipelineCosts costs = UniformCosts(2, 1e-3, 2e-3, 0);
  PpViewData same("t");
  same.AddMeasured(HandWrittenDump(), "hand", "dir", {});
  same.AddSimulated(SimulatePipeline(MakeOneFOneBSchedule({2, 1, 2}), costs), "sim", "c.yaml");
  const nlohmann::json a = same.ToJson();
  ASSERT_EQ(a["comparisons"].size(), 2u);  // the ideal replay and the simulation
  // Both 9 ms against the measured 10 ms: (m + p - 1)(F + B) with F = 1, B = 2.
  EXPECT_NEAR(a["comparisons"][1]["ranks"][0]["total_diff_pct"].get<double>(), -10.0, 1e-9);

  PpViewData other("t");
  other.AddMeasured(HandWrittenDump(), "hand", "dir", {});
  other.AddSimulated(SimulatePipeline(MakeOneFOneBSchedule({2, 1, 4}), costs), "sim4", "c.yaml");
  const nlohmann::json b = other.ToJson();
  EXPECT_EQ(b["comparisons"].size(), 1u);  // the ideal replay only
  EXPECT_THAT(
      b["notes"].dump(),
      HasSubstr("no comparison of hand with sim4: not the same pipeline (micro_batches 2 vs 4)"));
}

// The default iteration: the median by time after the first (warm-up), whatever the order.
TEST(PpViewDataTest, TheTypicalIterationIsTheMedianAfterTheFirst) {
  auto stats = [](std::vector<double> times) {
    std::vector<PrimusDumpIterationStats> out;
    for (size_t i = 0; i < times.size(); ++i) {
      PrimusDumpIterationStats s;
      s.key = std::to_string(i + 1);
      s.iteration_time_ms = times[i];
      out.push_back(s);
    }
    return out;
  };
  // Warm-up 7557 ms, then 3200, 3190, 3265 (last and slowest), 3210: median of the four is
  // the lower middle, 3200 (iteration 2).
  EXPECT_EQ(TypicalIterationKey(stats({7557, 3200, 3190, 3265, 3210})), "2");
  EXPECT_EQ(TypicalIterationKey(stats({7557, 3200})), "2");  // two: the faster of both
  EXPECT_EQ(TypicalIterationKey(stats({3000})), "1");
}

TEST(PpViewDataTest, UnknownIterationIsAUserError) {
  PpViewData view("t");
  try {
    view.AddMeasured(HandWrittenDump(), "hand", "dir", {"7"});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dir: no iteration '7' in the dump (it has 1 .. 1)"));
  }
}

// A simulated 1F1B step, PP 4, 8 micro-batches, F = 1 ms, B = 2 ms: the step takes
// (m + p - 1)(F + B) = 11 x 3 = 33 ms and every rank is busy 8 x 3 = 24 ms, so its bubble is
// 9 / 33 (Narayanan et al. 2021).
TEST(PpViewDataTest, SimulatedStepHasTheAnalyticBubble) {
  const PipelineShape shape{4, 1, 8};
  const PipelineCosts costs = UniformCosts(4, 1e-3, 2e-3, 0);
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule(shape), costs);
  PpViewData view("t");
  view.AddSimulated(sim, "sim", "cfg.yaml");
  const nlohmann::json j = view.ToJson();
  const nlohmann::json& it = Iteration(j["runs"][0], "1");
  EXPECT_NEAR(it["iteration_time_ms"].get<double>(), 33.0, 1e-9);
  for (const auto& r : it["ranks"]) {
    EXPECT_NEAR(r["bubble_ratio"].get<double>(), 9.0 / 33.0, 1e-9);
    EXPECT_EQ(r["blocks"].size(), 16u);  // 8 F + 8 BW
  }
  EXPECT_EQ(j["runs"][0]["schedule"], "1f1b");
  EXPECT_TRUE(j["comparisons"].empty());  // nothing measured
}

// The corpus dumps against the numbers Primus's own viewer prints for them
// (research/primus-observability.md section 2.4, the values burned into its example image).
TEST(PpViewDataTest, CorpusDumpsMatchPrimusViewer) {
  if (!CorpusAvailable()) GTEST_SKIP() << "shared corpus not present: " << CorpusDir();
  const std::string base = CorpusPath("pp_dumps/gpu8_layer64_gbs16/");
  struct Expected {
    const char* run;
    double iteration_ms;
    double max_memory_gib;
    std::vector<double> bubble_pct;
    size_t blocks_per_rank;
  };
  const std::vector<Expected> cases = {
      {"pp8", 3237.89, 104.33, {36.41, 37.04, 36.37, 35.61, 35.64, 34.99, 37.40, 30.02}, 32},
      {"pp8_vpp2", 2880.70, 130.60, {26.14, 28.44, 27.82, 30.95, 30.21, 29.39, 30.42, 17.30}, 64}};
  for (const Expected& e : cases) {
    PpViewData view("t");
    view.AddMeasured(ReadPrimusDump(base + e.run), e.run, base + e.run, {"7"});
    const nlohmann::json j = view.ToJson();
    const nlohmann::json& it = Iteration(j["runs"][0], "7");
    EXPECT_NEAR(it["iteration_time_ms"].get<double>(), e.iteration_ms, 0.005) << e.run;
    EXPECT_NEAR(it["max_memory_gib"].get<double>(), e.max_memory_gib, 0.005) << e.run;
    for (size_t r = 0; r < 8; ++r) {
      EXPECT_NEAR(it["ranks"][r]["bubble_ratio"].get<double>() * 100, e.bubble_pct[r], 0.005)
          << e.run << " rank " << r;
      EXPECT_EQ(it["ranks"][r]["blocks"].size(), e.blocks_per_rank);
    }
    // The measured order replays (labels inferred from Megatron's order are consistent), and
    // without waits it is no slower than what was measured.
    ASSERT_EQ(j["runs"].size(), 2u) << j["notes"].dump();
    EXPECT_LT(Iteration(j["runs"][1], "7")["iteration_time_ms"].get<double>(), e.iteration_ms);
  }
}

TEST(PpViewDataTest, PageEmbedsTheFrontEndAndTheData) {
  ASSERT_FALSE(WebAsset("pp_view.js").empty());
  ASSERT_FALSE(WebAsset("pp_view.css").empty());
  PpViewData view("Schedules </script><b>");
  view.AddMeasured(HandWrittenDump(), "hand", "dir", {});
  const std::string page = RenderPpViewPage(view.ToJson());
  EXPECT_THAT(page, HasSubstr("<script type=\"application/json\" id=\"data\">"));
  EXPECT_THAT(page, HasSubstr(std::string(WebAsset("pp_view.js")).substr(0, 200)));
  // The title cannot end the data block early.
  EXPECT_THAT(page, ::testing::Not(HasSubstr("</script><b>")));
  EXPECT_THAT(RenderPpViewText(view.ToJson()), HasSubstr("hand (measured): iteration 1: 10.00 ms"));
}

}  // namespace
}  // namespace sextant
