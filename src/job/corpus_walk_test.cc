// Builds a Job for every Primus experiment file in the shared corpus.
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "job/job_builder.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;
const std::string kPrimus = std::string(SEXTANT_CORPUS_DIR) + "/primus";

std::vector<std::string> ExperimentFiles() {
  std::vector<std::string> files;
  for (const char* framework : {"megatron", "torchtitan", "maxtext"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(kPrimus + "/examples/" + framework + "/configs")) {
      if (entry.is_regular_file() && entry.path().extension() == ".yaml")
        files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CorpusWalk, Print) {
  int ok = 0, bad = 0;
  for (const std::string& file : ExperimentFiles()) {
    JobRequest request;
    request.config_path = file;
    request.primus_path = kPrimus;
    request.use_environment = false;
    try {
      Job job = BuildJob(request);
      ++ok;
    } catch (const std::exception& e) {
      ++bad;
      std::printf("FAIL %s\n   %s\n", fs::relative(file, kPrimus).c_str(), e.what());
    }
  }
  std::printf("ok %d bad %d\n", ok, bad);
}

}  // namespace
}  // namespace sextant
