// Rows of a `sextant validate` CSV with hostile sizes: one UserError naming the file, the
// line and the column, never a signed overflow (a micro-batch of 2^62 died with SIGFPE).
#include "projection/published_run.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/csv_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::HasSubstr;

const std::string kHeader =
    "id,model,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,moe_experts,gpu,"
    "gpus_per_node,num_gpus,tp,pp,dp,cp,ep,vpp,micro_batch,global_batch,precision,recompute,"
    "optimizer_sharding,metric_name,metric_value,notes\n";

// One GPT-style row (not in the model library: its dimensions come from the row), written on
// line 2 of runs.csv with `micro`, `global` and `hidden` in their columns.
std::string ErrorOfRow(const std::string& hidden, const std::string& micro,
                       const std::string& global, const std::string& seq = "2048") {
  const std::string row = "megatron-01,GPT-1.7B,24," + hidden + ",,," + ",51200," + seq +
                          ",,A100-80GB,8,32,1,1,32,1,1,," + micro + "," + global +
                          ",fp16,,none,tflops_per_gpu,137,\n";
  const CsvTable table = CsvTable::Parse(kHeader + row, "runs.csv");
  try {
    const PublishedRun run = ReadPublishedRun(table, 0);
    return run.job ? "(no error)" : "(no job: " + run.reason + ")";
  } catch (const UserError& e) {
    return e.what();
  }
}

TEST(PublishedRunSizes, AnOrdinaryRowBuildsAJob) {
  EXPECT_EQ(ErrorOfRow("2304", "1", "512"), "(no error)");
}

TEST(PublishedRunSizes, OutOfRangeCellsNameFileLineAndColumn) {
  EXPECT_EQ(ErrorOfRow("2304", "4611686018427387904", "512"),
            "runs.csv:2: 'micro_batch': 4611686018427387904 is out of range: must be between 1 "
            "and 16777216");
  EXPECT_EQ(ErrorOfRow("4611686018427387904", "1", "512"),
            "runs.csv:2: 'hidden': 4611686018427387904 is out of range: must be between 1 and "
            "1048576");
  EXPECT_THAT(ErrorOfRow("2304", "1", "-8"), HasSubstr("'global_batch': -8 is out of range"));
  EXPECT_THAT(ErrorOfRow("2304", "1", "1e300"),
              HasSubstr("runs.csv:2: 'global_batch': 1e300 is out of range"));
  // In range one by one, too large together: 2^32 sequences x 2^24 tokens = 2^56 tokens.
  EXPECT_THAT(ErrorOfRow("2304", "1", "4294967296", "16777216"),
              HasSubstr("tokens per step = global_batch=4294967296 (global_batch, runs.csv:2) x "
                        "seq_len=16777216 (seq_len, runs.csv:2) exceeds 2^53"));
}

}  // namespace
}  // namespace sextant
