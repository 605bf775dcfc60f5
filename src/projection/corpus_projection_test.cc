// Runs `projection memory` and `projection performance` on every Primus experiment file of the
// shared corpus that builds a job (src/job/corpus_walk_test.cc checks which ones do and why the
// others are refused): every one must give a memory report with a verdict and a positive
// iteration time, or a one-line UserError — never a crash or an internal error.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "job/job_builder.h"
#include "projection/performance_model.h"
#include "projection/projection_runner.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;
const std::string kPrimus = CorpusPath("primus");

TEST(CorpusProjection, EveryBuildableExperimentProjects) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  size_t jobs = 0, memory_ok = 0, performance_ok = 0;
  std::vector<std::string> refused;
  for (const char* framework : {"megatron", "torchtitan", "maxtext"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(kPrimus + "/examples/" + framework + "/configs")) {
      if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;
      JobRequest request;
      request.config_path = entry.path().string();
      request.primus_path = kPrimus;
      request.use_environment = false;
      Job job;
      try {
        job = BuildJob(request);
      } catch (const UserError&) {
        continue;  // refused at build time: covered by the job corpus walk
      }
      ++jobs;
      ProjectionOptions options;
      try {
        const MemoryReport m = RunMemoryProjection(job, options);
        ASSERT_EQ(m.stages.size(), static_cast<size_t>(job.parallel.pp)) << entry.path();
        EXPECT_GT(m.peak_bytes, 0) << entry.path();
        ++memory_ok;
        PerformanceOptions p;
        p.scaling_nodes = {job.cluster.num_nodes};
        const PerformanceReport r = ProjectPerformance(job, p);
        EXPECT_GT(r.iteration_time_ms, 0) << entry.path();
        EXPECT_GT(r.mfu, 0) << entry.path();
        EXPECT_LT(r.mfu, 1) << entry.path();
        ++performance_ok;
      } catch (const UserError& e) {
        refused.push_back(entry.path().filename().string() + ": " + e.what());
      }
    }
  }
  EXPECT_GE(jobs, 330u);
  for (const auto& r : refused) ADD_FAILURE() << r;
  EXPECT_EQ(memory_ok, jobs);
  EXPECT_EQ(performance_ok, jobs);
}

}  // namespace
}  // namespace sextant
