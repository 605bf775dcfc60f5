#include "trace/capture_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

TEST(CaptureIndexTest, ListsTheFilesOfTheIndexInOrder) {
  EXPECT_EQ(ParseCaptureIndex(R"([{"file": "bs_32_rank0.json.gz", "batch_size": 32,
                                  "mode": "FULL"}, {"file": "bs_8.json"}])",
                              "execution_details.json"),
            (std::vector<std::string>{"bs_32_rank0.json.gz", "bs_8.json"}));
}

TEST(CaptureIndexTest, AnythingButAListOfFilesIsOneErrorNamingTheEntry) {
  auto message = [](std::string_view text) {
    try {
      ParseCaptureIndex(text, "idx.json");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("{"), "idx.json: not JSON (expected a list of capture traces)");
  EXPECT_EQ(message(R"({"file": "a.json"})"),
            "idx.json: expected a JSON list of capture traces ([{\"file\": ...}, ...])");
  EXPECT_EQ(message(R"([{"file": "a.json"}, {"batch_size": 8}])"),
            "idx.json: '[1].file': each entry needs a \"file\" name");
  EXPECT_EQ(message(R"([{"file": ""}])"), "idx.json: '[0].file': must be a non-empty string");
  EXPECT_EQ(message("[]"), "idx.json: lists no capture trace");
  EXPECT_EQ(message(R"(["a.json"])"), "idx.json: '[0]': expected {\"file\": ...}, got string");
  EXPECT_EQ(message(R"([{"file": 32}])"), "idx.json: '[0].file': must be a non-empty string");
  EXPECT_EQ(message(R"([{"file": "../x/a.json"}])"),
            "idx.json: '[0].file': ../x/a.json is not a file name next to the index");
  EXPECT_EQ(message(R"([{"file": "/abs/a.json"}])"),
            "idx.json: '[0].file': /abs/a.json is not a file name next to the index");
  EXPECT_EQ(message(R"([{"file": "a.json"}, {"file": "a.json"}])"),
            "idx.json: '[1].file': a.json is listed twice");
}

class CaptureFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sextant_capture_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(CaptureFolderTest, AFolderWithoutIndexGivesItsTraceFilesInNameOrder) {
  Write("b.json", "{}");
  Write("a.json.gz", "");
  Write("notes.txt", "");
  EXPECT_EQ(CaptureTraceFiles(dir_.string()),
            (std::vector<std::string>{(dir_ / "a.json.gz").string(), (dir_ / "b.json").string()}));
}

TEST_F(CaptureFolderTest, TheIndexDecidesAndMustNameFilesThatExist) {
  Write("bs_8.json", "{}");
  Write("other.json", "{}");
  Write("execution_details.json", R"([{"file": "bs_8.json"}])");
  const std::vector<std::string> want = {(dir_ / "bs_8.json").string()};
  EXPECT_EQ(CaptureTraceFiles(dir_.string()), want);
  EXPECT_EQ(CaptureTraceFiles((dir_ / "execution_details.json").string()), want);
  Write("execution_details.json", R"([{"file": "bs_8.json"}, {"file": "bs_16.json"}])");
  try {
    CaptureTraceFiles(dir_.string());
    FAIL() << "a missing capture trace must be an error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir_ / "execution_details.json").string() +
                  ": '[1].file': bs_16.json is not a file next to the index");
  }
}

TEST_F(CaptureFolderTest, AnEmptyFolderIsAnError) {
  EXPECT_THROW(CaptureTraceFiles(dir_.string()), UserError);
}

TEST(CaptureIndexCorpusTest, TraceLensInferenceCaptureFoldersResolveToTheirTraces) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::string base = CorpusPath("traces/TraceLens/inference/");
  EXPECT_EQ(CaptureTraceFiles(base + "sglang_decode/capture_traces"),
            (std::vector<std::string>{base + "sglang_decode/capture_traces/bs_32_rank0.json.gz"}));
  const auto vllm = CaptureTraceFiles(base + "vllm_prefilldecode_piecewise/capture_traces");
  ASSERT_EQ(vllm.size(), 1u);
  EXPECT_TRUE(vllm[0].ends_with("graph_capture_rank_0.1773709679453551615.pt.trace.json.gz"));
}

}  // namespace
}  // namespace sextant
