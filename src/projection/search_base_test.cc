#include "projection/search_base.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

// The bundled example (Llama 3.1 8B, one MI300X node: global batch 128 = micro-batch 2 x 8
// micro-batches x DP 8). At 16 nodes its own layout has DP 128, and 128 does not split into
// micro-batches of 2 over 128 ranks: a projection of that layout rounds the batch up to 256
// (Primus's rule, job_builder.cc RoundBatchToScale). The search picks its own layout and
// micro-batch size, so its base keeps the configured 128.
TEST(SearchBaseTest, KeepsTheConfiguredGlobalBatchWhenTheConfigsLayoutWouldRoundIt) {
  JobRequest request;
  request.target_nodes = 16;
  const Job projected = BuildJob(request);
  ASSERT_EQ(projected.training.global_batch_size, 256);
  ASSERT_EQ(projected.training.unrounded_global_batch_size, 128);

  const Job base = BuildSearchBase(JobRequest{}, 16);
  EXPECT_EQ(base.training.global_batch_size, 128);
  EXPECT_EQ(base.cluster.num_nodes, 16);
}

TEST(SearchBaseTest, ABatchThatSplitsIsLeftAlone) {
  const Job base = BuildSearchBase(JobRequest{}, 2);
  EXPECT_EQ(base.training.global_batch_size, 128);
  EXPECT_EQ(base.training.unrounded_global_batch_size, 0);
  EXPECT_EQ(base.training.micro_batch_size, 2);
}

}  // namespace
}  // namespace sextant
