// Where kCachingAllocatorReserve comes from: the training-step allocator snapshots of the
// corpus (torch.cuda.memory._snapshot() after forward, backward and optimizer steps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "job/test_job.h"
#include "memory/memory_model.h"
#include "snapshot/memory_snapshot.h"
#include "snapshot/snapshot_analysis.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

TEST(AllocatorReserveTest, MedianOfTheCorpusTrainingSnapshots) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  // Forward-only and inference snapshots are left out: they hold several runs' caches.
  const std::vector<std::string> training = {
      "NiuHuangxiaozi-assignment2-systems/forward_and_backward_memory_snapshot_200.pickle",
      "Wedsonlin-assignment2-systems/medium_128_training_memory_snapshot.pickle",
      "Wedsonlin-assignment2-systems/medium_512_training_memory_snapshot.pickle",
      "Wedsonlin-assignment2-systems/medium_1024_training_memory_snapshot.pickle",
      "kkaitlyn111-cs336-a2-systems/memory_ctx128_fullstep.pickle",
      "sidsoc12-spring2024-assignment2-systems/mem_snapshot_ctx128_fp32_train.pickle",
      "silmont2000-assignment2-systems/mem_snapshot.pickle"};
  std::vector<double> ratios;
  for (const std::string& file : training) {
    const SnapshotAnalysis a = AnalyzeSnapshot(LoadMemorySnapshot(CorpusPath("snapshots/" + file)));
    ASSERT_EQ(a.devices.size(), 1u) << file;
    const DeviceAnalysis& d = a.devices[0];
    ASSERT_GT(d.peak_allocated_bytes, 0) << file;
    ratios.push_back(static_cast<double>(d.peak_reserved_bytes) /
                     static_cast<double>(d.peak_allocated_bytes));
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_NEAR(ratios[ratios.size() / 2], kCachingAllocatorReserve, 0.0005);
  EXPECT_GT(ratios.front(), 1.0);  // reserved never below allocated
}

// Every memory report carries the reserve next to the allocated peak, and says so.
TEST(AllocatorReserveTest, TheReportCarriesTheReservedPeak) {
  const MemoryReport r =
      ProjectMemory(TestJob("llama3.1_8B").Cluster("MI300X", 1).SequenceLength(8192));
  ASSERT_GT(r.peak_bytes, 0);
  EXPECT_EQ(r.reserved_peak_bytes, std::llround(r.peak_bytes * 1.115));
  bool said = false;
  for (const std::string& a : r.assumptions) said = said || a.find("caching allocator") != a.npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace sextant
