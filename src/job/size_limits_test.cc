// Sizes out of range, from every place a user can give one: the experiment YAML, a
// command-line override or flag, a TorchTitan TOML. Each must be one UserError naming the key,
// the value and where it was set, never a signed overflow (SIGFPE, negative memory).
#include "job/size_limits.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "job/config_reader.h"
#include "job/job_builder.h"
#include "job/test_job.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kCheckout =
    std::string(SEXTANT_SOURCE_DIR) + "/tests/data/config/primus_checkout";
constexpr const char* k2To62 = "4611686018427387904";

// A Megatron experiment on the test checkout's tiny_llama model with `overrides` (YAML lines,
// each "key: value") written under modules.pre_trainer.overrides, starting at line 8.
std::string WriteExperiment(const std::string& name, const std::vector<std::string>& overrides) {
  // One folder per test: CTest runs the tests of this file as parallel processes, and a shared
  // "ok.yaml" would be truncated by one test while another reads it.
  const std::string dir = testing::TempDir() + "/sextant_sizes/" +
                          testing::UnitTest::GetInstance()->current_test_info()->name() + "/MI355X";
  std::filesystem::create_directories(dir);
  const std::string path = std::filesystem::path(dir + "/" + name).lexically_normal().string();
  std::ofstream out(path);
  out << "# line 1\n"
         "modules:\n"
         "  pre_trainer:\n"
         "    framework: megatron\n"
         "    config: pre_trainer.yaml\n"
         "    model: tiny_llama.yaml\n"
         "    overrides:\n";
  for (const std::string& line : overrides) out << "      " << line << "\n";
  return path;
}

JobRequest Request(const std::string& path,
                   std::vector<std::pair<std::string, std::string>> overrides = {}) {
  JobRequest request;
  request.config_path = path;
  request.primus_path = kCheckout;
  request.use_environment = false;
  request.overrides = std::move(overrides);
  return request;
}

std::string ErrorOf(const JobRequest& request) {
  try {
    BuildJob(request);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SizeLimits, TheBaseExperimentBuilds) {
  // The hand-written experiment itself is fine: the errors below come from the one bad value.
  EXPECT_NO_THROW(BuildJob(Request(WriteExperiment("ok.yaml", {"seq_length: 4096"}))));
}

TEST(SizeLimits, HugeMicroBatchInYamlFlagOrOverride) {
  // 2^62 sequences: before, MBS x DP overflowed and the run died with SIGFPE.
  const std::string yaml =
      WriteExperiment("mbs.yaml", {std::string("micro_batch_size: ") + k2To62});
  EXPECT_THAT(ErrorOf(Request(yaml)),
              AllOf(HasSubstr("mbs.yaml:8:25: 'micro_batch_size': 4611686018427387904 is out of "
                              "range: must be between 1 and 16777216")));
  JobRequest flag = Request(WriteExperiment("ok.yaml", {}));
  flag.micro_batch_size = int64_t{1} << 62;  // --micro-batch-size
  EXPECT_EQ(ErrorOf(flag),
            "micro_batch_size=4611686018427387904 (--micro-batch-size) is out of range: must be "
            "between 1 and 16777216");
  EXPECT_THAT(ErrorOf(Request(WriteExperiment("ok.yaml", {}), {{"micro_batch_size", k2To62}})),
              HasSubstr("--micro_batch_size: 'micro_batch_size': 4611686018427387904 is out of "
                        "range"));
}

TEST(SizeLimits, HugeSequenceAndHiddenSize) {
  // seq_length 2^62 printed negative activation memory; hidden 2^62 a 1.6e46 % error.
  EXPECT_THAT(ErrorOf(Request(WriteExperiment("seq.yaml", {std::string("seq_length: ") + k2To62}))),
              HasSubstr("seq.yaml:8:19: 'seq_length': 4611686018427387904 is out of range: must "
                        "be between 1 and 16777216"));
  EXPECT_THAT(
      ErrorOf(Request(WriteExperiment("hidden.yaml", {std::string("hidden_size: ") + k2To62}))),
      HasSubstr("hidden.yaml:8:20: 'hidden_size': 4611686018427387904 is out of range: must be "
                "between 1 and 1048576"));
  EXPECT_THAT(ErrorOf(Request(WriteExperiment("ok.yaml", {}), {{"num_layers", "0"}})),
              HasSubstr("'num_layers': 0 is out of range: must be between 1 and 65536"));
}

TEST(SizeLimits, NegativeGlobalBatchIsAnErrorNotUnset) {
  EXPECT_THAT(ErrorOf(Request(WriteExperiment("gbs.yaml", {"global_batch_size: -8"}))),
              HasSubstr("gbs.yaml:8:26: 'global_batch_size': -8 is out of range: must be between "
                        "1 and 4294967296"));
  JobRequest flag = Request(WriteExperiment("ok.yaml", {}));
  flag.global_batch_size = -8;
  EXPECT_EQ(ErrorOf(flag), "--global-batch-size: must be positive");
}

TEST(SizeLimits, ProductsBeyond2To53AreRefused) {
  // Each value is in range, the product is not: 2^32 sequences x 2^24 tokens = 2^56 tokens.
  const std::string tokens =
      WriteExperiment("tokens.yaml", {"global_batch_size: 4294967296", "seq_length: 16777216"});
  EXPECT_THAT(ErrorOf(Request(tokens)),
              HasSubstr("tokens per step = global_batch_size=4294967296 (" + tokens +
                        ":8:26) x seq_length=16777216 (" + tokens + ":9:19) exceeds 2^53"));
  // 2^24 sequences x 2^20 tokens x hidden 1024 x 8 layers = 2^57 activation elements.
  const std::string activations = WriteExperiment(
      "act.yaml",
      {"micro_batch_size: 16777216", "seq_length: 1048576", "global_batch_size: 67108864"});
  EXPECT_THAT(
      ErrorOf(Request(activations)),
      HasSubstr("activation elements = micro_batch_size=16777216 (" + activations +
                ":8:25) x seq_length=1048576 (" + activations + ":9:19) x hidden_size=1024 ("));
}

TEST(SizeLimits, TorchTitanTomlValues) {
  const std::string dir = testing::TempDir() + "/sextant_sizes";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/titan.toml";
  std::ofstream(path) << "[model]\nname = \"llama3\"\nflavor = \"8B\"\n\n"
                         "[training]\nlocal_batch_size = 4611686018427387904\nseq_len = 8192\n";
  JobRequest request;
  request.config_path = path;
  request.use_environment = false;
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("titan.toml:6:20: 'training.local_batch_size': 4611686018427387904 is out "
                        "of range: must be between 1 and 16777216"));
  std::ofstream(path) << "[model]\nname = \"llama3\"\nflavor = \"8B\"\n\n"
                         "[training]\nglobal_batch_size = -8\n";
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("titan.toml:6:21: 'training.global_batch_size': -8 is out of range"));
  std::ofstream(path) << "[model]\nname = \"llama3\"\nflavor = \"8B\"\n\n"
                         "[parallelism]\ndata_parallel_shard_degree = 1048576\n"
                         "data_parallel_replicate_degree = 1048576\n";
  EXPECT_THAT(ErrorOf(request), HasSubstr("is more than 1048576 GPUs"));
}

TEST(SizeLimits, CheckJobSizesOnACodeBuiltJob) {
  Provenance provenance;
  EXPECT_NO_THROW(
      CheckJobSizes(TestJob("llama3.1_405B").SequenceLength(131072).GlobalBatch(16), provenance));
  provenance.Record("seq_length", "seq_len", SourceLocation{"runs.csv", 3});
  EXPECT_EQ(
      [&] {
        try {
          CheckJobSizes(TestJob("llama3.1_8B").SequenceLength(int64_t{1} << 62), provenance);
        } catch (const UserError& e) {
          return std::string(e.what());
        }
        return std::string("(no error)");
      }(),
      "seq_len=4611686018427387904 (seq_len, runs.csv:3) is out of range: must be between 1 and "
      "16777216");
}

}  // namespace
}  // namespace sextant
