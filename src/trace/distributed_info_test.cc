#include "trace/distributed_info.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "util/corpus_path.h"

namespace sextant {
namespace {

TEST(DistributedInfoTest, ReadsTheRankBeforeTheEvents) {
  const auto info = FindDistributedInfo(
      R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8,
          "pg_config": [{"ranks": [0, 1], "pg_desc": "a \"}\" in a string"}]},
          "traceEvents": [{"ph": "X"}]})");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->world_size, 8);
  EXPECT_EQ(FindDistributedInfo(R"({"distributedInfo": {"rank": 1}})")->world_size, -1);
  // After the events (not where Kineto writes it), without a rank, or cut off: unknown.
  EXPECT_FALSE(FindDistributedInfo(R"({"traceEvents": [], "distributedInfo": {"rank": 1}})"));
  EXPECT_FALSE(FindDistributedInfo(R"({"distributedInfo": {"backend": "nccl"}})"));
  EXPECT_FALSE(FindDistributedInfo(R"({"distributedInfo": {"rank": "0"}})"));
  EXPECT_FALSE(FindDistributedInfo(R"({"distributedInfo": {"rank": 1, "pg_config": [)"));
  EXPECT_FALSE(FindDistributedInfo(R"({"distributedInfo": 5})"));
  EXPECT_FALSE(FindDistributedInfo(""));
}

// The ranks of one run: distinct ranks of one world size, each recorded. Profiles that record
// none (one worker profiled five times) or one rank twice are not.
TEST(DistributedInfoTest, TellsTheRanksOfOneRun) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "sextant_distributed_info";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& info) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << "{" << info << "\"traceEvents\": []}";
    return path;
  };
  const std::string r0 = write("r0.json", R"("distributedInfo": {"rank": 0, "world_size": 2}, )");
  const std::string r1 = write("r1.json", R"("distributedInfo": {"rank": 1, "world_size": 2}, )");
  const std::string r1_of_4 =
      write("r1_4.json", R"("distributedInfo": {"rank": 1, "world_size": 4}, )");
  const std::string again =
      write("again.json", R"("distributedInfo": {"rank": 0, "world_size": 2}, )");
  const std::string none = write("none.json", "");
  EXPECT_EQ(PeekDistributedInfo(r1)->rank, 1);
  EXPECT_FALSE(PeekDistributedInfo(none));
  EXPECT_FALSE(PeekDistributedInfo((dir / "missing.json").string()));
  EXPECT_TRUE(AreRanksOfOneRun({r0, r1}));
  EXPECT_FALSE(AreRanksOfOneRun({r0}));
  EXPECT_FALSE(AreRanksOfOneRun({r0, again}));
  EXPECT_FALSE(AreRanksOfOneRun({r0, r1_of_4}));
  EXPECT_FALSE(AreRanksOfOneRun({r0, r1, none}));
  std::filesystem::remove_all(dir);
  if (!CorpusAvailable()) GTEST_SKIP() << "shared corpus not present: " << CorpusDir();
  const std::string megatron = CorpusDir() + "/traces/llm_training/megatron-tp2-v100/";
  EXPECT_TRUE(
      AreRanksOfOneRun({megatron + "rank0.pt.trace.json", megatron + "rank1.pt.trace.json"}));
  // Gzip, decoded as far as the rank.
  const std::string sampled = CorpusDir() + "/traces/HolisticTraceAnalysis/trace_filter/";
  EXPECT_EQ(PeekDistributedInfo(sampled + "sampled_rank-1.json.gz")->world_size, 128);
}

}  // namespace
}  // namespace sextant
