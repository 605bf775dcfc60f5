#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pipeline/chrome_trace_export.h"
#include "pipeline/pp_dump_reader.h"
#include "pipeline/pp_dump_stats.h"
#include "pipeline/pp_dump_writer.h"
#include "pipeline/schedule_generators.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::HasSubstr;

const std::string kDumpDir = CorpusPath("pp_dumps/gpu8_layer64_gbs16");

std::string ErrorOf(std::string_view text) {
  try {
    ParsePrimusDumpRank(text, "pp_rank_0.json", 0);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

const PrimusDumpIterationStats& Iteration(const std::vector<PrimusDumpIterationStats>& all,
                                          const std::string& key) {
  for (const auto& it : all) {
    if (it.key == key) return it;
  }
  throw std::runtime_error("no iteration " + key);
}

// Expected values below are pp_vis's definitions applied to the corpus files independently of
// this code (they are also the numbers burned into Primus's assets/image_2.png, see
// research/primus-observability.md section 2.4).
TEST(PrimusDumpTest, ReadsCorpusDumpWithoutVirtualStages) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const PrimusDump dump = ReadPrimusDump(kDumpDir + "/pp8");
  EXPECT_EQ(dump.config.world_size, 8);
  EXPECT_EQ(dump.config.pp_size, 8);
  EXPECT_EQ(dump.config.vp_size, 1);
  EXPECT_EQ(dump.config.num_mbs, 16);
  EXPECT_EQ(dump.config.train_iters, 20);
  ASSERT_EQ(dump.ranks.size(), 8u);
  ASSERT_EQ(dump.ranks[0].iterations.size(), 20u);
  EXPECT_EQ(dump.ranks[0].iterations[0].key, "1");
  EXPECT_EQ(dump.ranks[0].iterations[9].key, "10");  // numeric, not lexicographic, order
  EXPECT_EQ(dump.ranks[0].iterations[0].fwd_start.size(), 16u);
  EXPECT_DOUBLE_EQ(dump.ranks[0].iterations[0].total_ms, 7556.98974609375);
  EXPECT_DOUBLE_EQ(dump.ranks[0].iterations[0].memory_gib, 84.345703125);

  const auto stats = AnalysePrimusDump(dump);
  ASSERT_EQ(stats.size(), 20u);
  const auto& it7 = Iteration(stats, "7");
  EXPECT_NEAR(it7.iteration_time_ms, 3237.89, 0.005);
  EXPECT_NEAR(it7.max_memory_gib, 104.33, 0.005);
  const double bubble_pct[] = {36.41, 37.04, 36.37, 35.61, 35.64, 34.99, 37.40, 30.02};
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(it7.ranks[static_cast<size_t>(r)].bubble_ratio * 100, bubble_pct[r], 0.005)
        << "rank " << r;
  }
  EXPECT_NEAR(it7.ranks[0].forward_ms, 925.38, 0.005);
  EXPECT_NEAR(it7.ranks[0].backward_ms, 1133.71, 0.005);
  EXPECT_NEAR(it7.ranks[7].total_ms, 2732.79, 0.005);
  EXPECT_NEAR(Iteration(stats, "1").iteration_time_ms, 7556.99, 0.005);
  EXPECT_NEAR(Iteration(stats, "20").iteration_time_ms, 3265.44, 0.005);
}

TEST(PrimusDumpTest, ReadsCorpusDumpWithVirtualStages) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const PrimusDump dump = ReadPrimusDump(kDumpDir + "/pp8_vpp2");
  EXPECT_EQ(dump.config.vp_size, 2);
  EXPECT_EQ(dump.ranks[3].iterations[0].bwd_end.size(), 32u);
  const auto stats = AnalysePrimusDump(dump);
  const auto& it7 = Iteration(stats, "7");
  EXPECT_NEAR(it7.iteration_time_ms, 2880.70, 0.005);
  EXPECT_NEAR(it7.max_memory_gib, 130.60, 0.005);
  const double bubble_pct[] = {26.14, 28.44, 27.82, 30.95, 30.21, 29.39, 30.42, 17.30};
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(it7.ranks[static_cast<size_t>(r)].bubble_ratio * 100, bubble_pct[r], 0.005);
  }
  EXPECT_NEAR(Iteration(stats, "1").iteration_time_ms, 11711.81, 0.005);
  EXPECT_NEAR(Iteration(stats, "20").iteration_time_ms, 3212.82, 0.005);
}

// A two-rank dump in the simulator's spelling, worked by hand: iteration time = max(9, 10)
// = 10; rank 0 busy (2-0) + (9-6) = 5 -> bubble 0.5; rank 1 busy 2 + 1.5 = 3.5 -> 0.65.
TEST(PrimusDumpTest, StatisticsOfAHandWrittenDump) {
  PrimusDump dump;
  dump.config =
      ParsePrimusDumpConfig(R"({"pp_size": 2, "vpp_size": 1, "micro_batches": 1})", "config.json");
  EXPECT_EQ(dump.config.num_mbs, 1);
  EXPECT_EQ(dump.config.generator, "primus simulator");
  dump.ranks.push_back(ParsePrimusDumpRank(
      R"({"0": {"total": 9.0, "memory": 1.5, "fwd_start": [0.0], "fwd_end": [2.0],
                "bwd_start": [6.0], "bwd_end": [9.0], "wgrad_start": [], "wgrad_end": []}})",
      "pp_rank_0.json", 0));
  dump.ranks.push_back(ParsePrimusDumpRank(
      R"({"0": {"total": 10, "memory": 0.5, "fwd_start": [2.5], "fwd_end": [4.5],
                "bwd_start": [4.5], "bwd_end": [6.0]}})",
      "pp_rank_1.json", 1));
  const auto stats = AnalysePrimusDump(dump);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_DOUBLE_EQ(stats[0].iteration_time_ms, 10.0);
  EXPECT_DOUBLE_EQ(stats[0].max_memory_gib, 1.5);
  EXPECT_DOUBLE_EQ(stats[0].ranks[0].bubble_ratio, 0.5);
  EXPECT_DOUBLE_EQ(stats[0].ranks[1].bubble_ratio, 0.65);
}

TEST(PrimusDumpTest, MalformedInputGivesLocatedErrors) {
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 1.0, "fwd_start": [0.5, )"),
              HasSubstr("pp_rank_0.json at byte"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 1.0, "fwd_start": [0.5, "x"], "fwd_end": [1, 2]}})"),
              HasSubstr("'1.fwd_start[1]': expected a number, found string"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 1.0, "fwd_start": [0.5], "fwd_end": []}})"),
              HasSubstr("'fwd_start' has 1 entries but 'fwd_end' has 0"));
  EXPECT_THAT(ErrorOf(R"({"1": {"memory": 1.0}})"), HasSubstr("'1.total': missing"));
  EXPECT_THAT(ErrorOf(R"([1, 2])"), HasSubstr("expected an object of iterations"));
  EXPECT_THAT(ErrorOf(R"({"1": 3})"), HasSubstr("expected an iteration record"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 1, "fwd_chunk": [0.5]}})"),
              HasSubstr("'1.fwd_chunk[0]': expected an integer"));
  EXPECT_THAT(ErrorOf(std::string(100000, '[')), HasSubstr("nested deeper"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 2988.2e6875}})"), HasSubstr("number overflow"));
  // Reversed or negative times would make every statistic meaningless (bubble ratios of
  // -2e6 were seen); they are refused with the element that is wrong.
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 5, "fwd_start": [0, 3], "fwd_end": [1, 2]}})"),
              HasSubstr("'1.fwd_end[1]': ends at 2 ms, before its start at 3 ms"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 5, "bwd_start": [-4], "bwd_end": [1]}})"),
              HasSubstr("'1.bwd_start[0]': negative time -4 ms"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": -1}})"), HasSubstr("'1.total': negative time -1 ms"));
  // The iteration's time holds its ops (bubbles of -1959% came from a total of 100 ms around
  // ops ending at 2900 ms), and is an iteration's, not 1e308 ms.
  EXPECT_THAT(ErrorOf(R"({"7": {"total": 100, "fwd_start": [0], "fwd_end": [2900]}})"),
              HasSubstr("'7.total': 100 ms ends before the iteration's last op (2900 ms)"));
  EXPECT_THAT(ErrorOf(R"({"1": {"total": 1e308, "fwd_start": [0], "fwd_end": [2900]}})"),
              HasSubstr("is not an iteration time"));
  EXPECT_NO_THROW(ParsePrimusDumpRank(
      R"({"1": {"total": 2899.99, "fwd_start": [0], "fwd_end": [2900]}})", "pp_rank_0.json", 0));
  EXPECT_THROW(ParsePrimusDumpConfig(R"({"vp_size": 2})", "config.json"), UserError);
  EXPECT_THROW(ParsePrimusDumpConfig(R"({"pp_size": 100000000})", "config.json"), UserError);
  EXPECT_THROW(ParsePrimusDumpConfig(R"({"pp_size": 2, "vp_size": 0})", "config.json"), UserError);
  EXPECT_THROW(ReadPrimusDump(kDumpDir + "/no-such-run"), UserError);
}

TEST(PrimusDumpTest, IterationMissingOnOneRankIsAnError) {
  PrimusDump dump;
  dump.config.pp_size = 2;
  dump.ranks.push_back(ParsePrimusDumpRank(R"({"1": {"total": 1}, "2": {"total": 1}})", "a", 0));
  dump.ranks.push_back(ParsePrimusDumpRank(R"({"1": {"total": 1}})", "b", 1));
  EXPECT_THROW(AnalysePrimusDump(dump), UserError);
}

class TempDir {
 public:
  TempDir() {
    path_ =
        std::filesystem::temp_directory_path() /
        ("sextant_pp_dump_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// 1F1B PP 4, 8 micro-batches, F = 1 s, BW = 2 s (exact in binary, so the text is exact):
// step 33 s, every rank busy 24 s; 1 GiB per micro-batch, rank 0 holds 4.
TEST(PrimusDumpWriterTest, SimulatedStepRoundTripsThroughTheDumpFormat) {
  const PipelineCosts costs = UniformCosts(4, 1, 2, 0, int64_t{1} << 30);
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({4, 1, 8}), costs);
  TempDir dir;
  WritePrimusDump(SimulationToPrimusDump(sim), dir.str());

  EXPECT_EQ(Slurp(dir.str() + "/config.json"),
            R"({"world_size": 4, "dp_size": 1, "tp_size": 1, "ep_size": 1, "pp_size": 4, )"
            R"("vp_size": 1, "num_mbs": 8, "train_iters": 1, "generator": "sextant"})");
  const std::string rank0 = Slurp(dir.str() + "/pp_rank_0.json");
  EXPECT_THAT(rank0, ::testing::StartsWith(R"({"1": {"total": 33000.0, "memory": 4.0, )"
                                           R"("fwd_start": [0.0, 1000.0, 2000.0, 3000.0, )"));
  EXPECT_EQ(rank0.find('\n'), std::string::npos);
  EXPECT_EQ(rank0.back(), '}');

  const PrimusDump back = ReadPrimusDump(dir.str());
  const auto stats = AnalysePrimusDump(back);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_NEAR(stats[0].iteration_time_ms, 33000.0, 1e-9);
  for (const auto& rank : stats[0].ranks) {
    EXPECT_NEAR(rank.bubble_ratio, 9.0 / 33.0, 1e-9);
    EXPECT_NEAR(rank.forward_ms, 8000.0, 1e-9);
    EXPECT_NEAR(rank.backward_ms, 16000.0, 1e-9);
  }
  EXPECT_EQ(back.ranks[3].iterations[0].bwd_minibatch.size(), 8u);
  EXPECT_DOUBLE_EQ(back.ranks[3].iterations[0].memory_gib, 1.0);
}

TEST(PrimusDumpWriterTest, SplitBackwardGoesToWgradLists) {
  const PipelineCosts costs = UniformCosts(8, 0.5e-3, 0.5e-3, 0.5e-3);
  const PipelineSimulation sim = SimulatePipeline(MakeZbvFormattedSchedule({4, 2, 8}), costs);
  const PrimusDump dump = SimulationToPrimusDump(sim);
  const auto& it = dump.ranks[0].iterations[0];
  EXPECT_EQ(it.fwd_start.size(), 16u);
  EXPECT_EQ(it.wgrad_start.size(), 16u);
  EXPECT_EQ(it.fwd_chunk[0], 0);
  EXPECT_EQ(it.bwd_chunk[0], 1);  // rank 0 holds the last stage: its first backward is chunk 1
  EXPECT_NEAR(AnalysePrimusDump(dump)[0].iteration_time_ms, 25.5, 1e-9);
}

TEST(ChromeTraceTest, OneProcessPerRankAndEveryEventWithArgs) {
  PipelineCosts costs = UniformCosts(4, 1e-3, 2e-3, 0);
  costs.p2p_s = {1e-4};
  const PipelineSimulation sim = SimulatePipeline(MakeOneFOneBSchedule({4, 1, 8}), costs);
  const auto trace = nlohmann::json::parse(ChromeTraceJson(sim));
  size_t complete = 0;
  std::set<int> pids;
  size_t timeline = 0;
  for (const auto& rank : sim.ranks) timeline += rank.timeline.size();
  for (const auto& e : trace["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_TRUE(e["args"].contains("micro_batch"));
    if (e["cat"] == "forward") {
      EXPECT_EQ(e["cname"], "rail_response");
      EXPECT_EQ(e["tid"], 0);
    }
    if (e["cat"] == "p2p") {
      EXPECT_TRUE(e["args"].contains("peer_rank"));
    }
  }
  EXPECT_EQ(complete, timeline);
  EXPECT_EQ(pids.size(), 4u);
  // The first forward of rank 1 starts after rank 0's F (1 ms) and the transfer (0.1 ms).
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == 1 && e["name"] == "F mb0 c0") {
      EXPECT_NEAR(e["ts"].get<double>(), 1100.0, 1e-6);
      EXPECT_NEAR(e["dur"].get<double>(), 1000.0, 1e-6);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_NEAR(trace["otherData"]["step_time_ms"].get<double>(), sim.step_time_s * 1e3, 1e-9);
}

}  // namespace
}  // namespace sextant
