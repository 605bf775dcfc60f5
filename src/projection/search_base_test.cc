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

// At 4 nodes with TP 4 from the command line the example's layout has DP 8 and micro-batches of
// 2 split 128; with TP 1 it has DP 32, which 128 splits only into micro-batches of 4 or 1: the
// base keeps 128 with a micro-batch of 1 instead of rounding (the search picks the layout).
// At 3 nodes no layout of Llama 3.1 8B splits 128 over 24 GPUs (a factor 3 needs PP or CP 3,
// which 32 layers and 8192 tokens refuse): the batch is rounded as the builder rounds it, and
// says so.
TEST(SearchBaseTest, KeepsTheConfiguredBatchWhereAnyLayoutSplitsIt) {
  JobRequest request;
  request.overrides = {{"tensor_model_parallel_size", "1"}, {"micro_batch_size", "3"}};
  const Job base = BuildSearchBase(request, 4);
  EXPECT_EQ(base.training.global_batch_size, 128);
  EXPECT_EQ(base.training.unrounded_global_batch_size, 0);
  const Job three = BuildSearchBase(JobRequest{}, 3);
  EXPECT_EQ(three.training.unrounded_global_batch_size, 128);
  EXPECT_NE(three.training.global_batch_size, 128);
}

}  // namespace
}  // namespace sextant
