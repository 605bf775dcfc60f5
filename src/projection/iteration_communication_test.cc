#include "projection/iteration_communication.h"

#include <gtest/gtest.h>

#include "job/test_job.h"

namespace sextant {
namespace {

DataParallelCost Fsdp2(int pp, int64_t micro_batches, const std::string& framework = "") {
  Job job = TestJob("llama3.1_8B").Cluster("H100", 2).Parallel(1, pp).Dp(16 / pp);
  job.parallel.fsdp2 = true;
  if (!framework.empty()) job.framework = framework;
  const auto comm = MakeCollectiveModel(job.cluster, "auto");
  ModelTimings t;
  t.layers.resize(static_cast<size_t>(job.model.num_layers));
  for (PieceTiming& l : t.layers) {
    l.forward_s = 1e-3;
    l.backward_input_s = 1e-3;
    l.backward_weight_s = 1e-3;
  }
  return DataParallelTime(job, *comm, 0, 0, t, micro_batches);
}

// Plain gradient accumulation under FSDP2 gathers every layer twice and reduce-scatters it
// once per micro-batch: 8 micro-batches cost 8 times one.
TEST(IterationCommunicationTest, Fsdp2WithoutPipeliningCommunicatesEveryMicroBatch) {
  EXPECT_DOUBLE_EQ(Fsdp2(1, 8).total_s, 8 * Fsdp2(1, 1).total_s);
  EXPECT_DOUBLE_EQ(Fsdp2(1, 8).exposed_s, 8 * Fsdp2(1, 1).exposed_s);
}

// PyTorch's pipeline stages keep parameters gathered and gradients unsharded until the last
// micro-batch (torch/distributed/pipelining/stage.py): one gather and one reduce-scatter per
// layer whatever the micro-batch count, over rank 0's 16 of 32 layers.
TEST(IterationCommunicationTest, Fsdp2UnderPipeliningCommunicatesOncePerIteration) {
  EXPECT_DOUBLE_EQ(Fsdp2(2, 8).total_s, Fsdp2(2, 1).total_s);
  EXPECT_DOUBLE_EQ(Fsdp2(2, 8).exposed_s, Fsdp2(2, 1).exposed_s);
  EXPECT_GT(Fsdp2(2, 1).total_s, 0);
  // Once per iteration against three times per micro-batch: far less over 8 micro-batches.
  EXPECT_LT(Fsdp2(2, 8).total_s, Fsdp2(1, 8).total_s / 4);
}

// The same collectives under MaxText are XLA's sharding over the fsdp mesh axis, not
// PyTorch's FSDP2, and the description says which.
TEST(IterationCommunicationTest, MaxTextShardingIsNotCalledFsdp2) {
  EXPECT_EQ(Fsdp2(1, 1).how.rfind("FSDP2:", 0), 0u) << Fsdp2(1, 1).how;
  const std::string maxtext = Fsdp2(1, 1, "maxtext").how;
  EXPECT_EQ(maxtext.find("FSDP2"), std::string::npos) << maxtext;
  EXPECT_NE(maxtext.find("fsdp mesh axis"), std::string::npos) << maxtext;
  EXPECT_DOUBLE_EQ(Fsdp2(1, 1, "maxtext").total_s, Fsdp2(1, 1).total_s);
}

}  // namespace
}  // namespace sextant
