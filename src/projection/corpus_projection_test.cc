// Runs `projection memory` and `projection performance` on every Primus experiment file of the
// shared corpus that builds a job (src/job/corpus_walk_test.cc checks which ones do and why the
// others are refused): every one must give a memory report with a verdict and a positive
// iteration time, or a one-line UserError — never a crash or an internal error.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "job/job_builder.h"
#include "memory/memory_model.h"
#include "model/parameter_count.h"
#include "projection/performance_model.h"
#include "projection/projection_runner.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;
const std::string kPrimus = CorpusPath("primus");

// The job of one Primus example as `sextant projection` builds it (no environment), or nothing
// when the builder refuses it (unsupported architectures: covered by the job corpus walk).
std::optional<Job> BuildExample(const fs::path& path) {
  JobRequest request;
  request.config_path = path.string();
  request.primus_path = kPrimus;
  request.use_environment = false;
  try {
    return BuildJob(request);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

TEST(CorpusProjection, EveryBuildableExperimentProjects) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  size_t jobs = 0, memory_ok = 0, performance_ok = 0;
  std::vector<std::string> refused;
  for (const char* framework : {"megatron", "torchtitan", "maxtext"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(kPrimus + "/examples/" + framework + "/configs")) {
      if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;
      const std::optional<Job> built = BuildExample(entry.path());
      if (!built) continue;
      const Job& job = *built;
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

// AMD ships and runs these on one node of the GPU they are filed under, so a projection of OOM
// is wrong (dense models up to 13B and MoE models of the 30B class, one-node layouts).
TEST(CorpusProjection, SmallPrimusExamplesFitOneNodeOfTheirGpu) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  // Configs the projection still calls OOM. Each must stay OOM, so that a fix removes its line.
  const std::map<std::string, std::string> known_oom = {};
  int checked = 0;
  for (const char* framework : {"megatron", "torchtitan", "maxtext"}) {
    const fs::path root = kPrimus + "/examples/" + framework + "/configs";
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".yaml" && ext != ".toml")) continue;
      const std::optional<Job> built = BuildExample(entry.path());
      if (!built) continue;
      const Job& job = *built;
      const double params = static_cast<double>(CountParameters(job.model).Total());
      const bool small = job.model.IsMoe() ? params <= 31e9 : params <= 13.5e9;
      if (!small || job.cluster.num_nodes != 1) continue;
      const std::string name =
          std::string(framework) + "/configs/" + fs::relative(entry.path(), root).generic_string();
      const MemoryReport m = RunMemoryProjection(job, ProjectionOptions{});
      ++checked;
      if (known_oom.count(name)) {
        EXPECT_EQ(m.verdict, Verdict::kOom) << name << " now fits; remove its known line";
        continue;
      }
      EXPECT_NE(m.verdict, Verdict::kOom)
          << name << ": " << m.peak_bytes / double(1 << 30) << " GiB of "
          << job.cluster.gpu.hbm_bytes / double(1 << 30);
    }
  }
  EXPECT_GE(checked, 60);
}

// AMD's MI355X Mixtral 8x7B MaxText example states its measured peak: "bs11 peaks ~270-274 GB
// / 288 GB HBM" (examples/maxtext/configs/MI355X/mixtral_8x7B-bf16-pretrain.yaml). The
// projection (bf16 AdamW state without a master copy, capacity-slot experts, the named tensors
// of remat_policy "minimal") must land within 20% of it.
TEST(CorpusProjection, MaxTextMixtralPeakMatchesAmdsMeasurement) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::optional<Job> job =
      BuildExample(kPrimus + "/examples/maxtext/configs/MI355X/mixtral_8x7B-bf16-pretrain.yaml");
  ASSERT_TRUE(job.has_value());
  const MemoryReport m = RunMemoryProjection(*job, ProjectionOptions{});
  const double measured = 272e9;
  EXPECT_NEAR(m.peak_bytes / measured, 1.0, 0.20) << m.peak_bytes / 1e9 << " GB";
}

}  // namespace
}  // namespace sextant
