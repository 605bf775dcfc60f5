#include "cost/collective_model.h"

#include <gtest/gtest.h>

#include "hardware/hardware_library.h"
#include "util/error.h"

namespace sextant {
namespace {

TEST(BusBandwidth, NcclTestsConvention) {
  // nccl-tests doc/PERFORMANCE.md: 1 GB in 10 ms is algbw 100 GB/s; all-reduce on 8 ranks
  // has busbw = 100 x 2 x 7/8 = 175 GB/s; all-gather 100 x 7/8 = 87.5 GB/s.
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kAllReduce, 1'000'000'000, 8, 0.01), 175e9);
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kAllGather, 1'000'000'000, 8, 0.01), 87.5e9);
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kReduceScatter, 1'000'000'000, 8, 0.01), 87.5e9);
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kAllToAll, 1'000'000'000, 8, 0.01), 87.5e9);
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kSendRecv, 1'000'000'000, 2, 0.01), 100e9);
  EXPECT_EQ(BusBandwidth(Collective::kAllReduce, 1000, 1, 0.01), 0);
  EXPECT_EQ(BusBandwidth(Collective::kAllReduce, 1000, 8, 0), 0);
}

TEST(MakeCollectiveModel, PresetsByNameAndVendor) {
  const ClusterSpec amd = MakeCluster(*FindGpu("MI300X"));
  const ClusterSpec nvidia = MakeCluster(*FindGpu("H100"));
  EXPECT_EQ(MakeCollectiveModel(amd)->Name(), "rccl");
  EXPECT_EQ(MakeCollectiveModel(nvidia)->Name(), "nccl");
  EXPECT_EQ(MakeCollectiveModel(amd, "nccl")->Name(), "nccl");
  EXPECT_EQ(MakeCollectiveModel(amd, "primus")->Name(), "primus");
  EXPECT_EQ(MakeCollectiveModel(amd, "primus-fixed")->Name(), "primus-fixed");
  ClusterSpec chosen = amd;
  chosen.collective_preset = "primus";  // a hardware config may pick the preset
  EXPECT_EQ(MakeCollectiveModel(chosen)->Name(), "primus");
  EXPECT_THROW(MakeCollectiveModel(amd, "mpich"), UserError);
}

TEST(MakeCollectiveModel, PrimusPresetReadsThePlan) {
  // Primus derates mesh bandwidth by the TP size: a 4-GPU all-reduce is slower under TP 4.
  const ClusterSpec amd = MakeCluster(*FindGpu("MI300X"));
  ParallelPlan tp1, tp4;
  tp4.tp = 4;
  const double t1 =
      MakeCollectiveModel(amd, "primus", tp1)->Time(Collective::kAllReduce, 256 << 20, {4, 4});
  const double t4 =
      MakeCollectiveModel(amd, "primus", tp4)->Time(Collective::kAllReduce, 256 << 20, {4, 4});
  EXPECT_GT(t4, t1 * 1.5);
}

ParallelPlan Plan(int tp, int cp, int dp, int pp, int ep = 1, int etp = 1) {
  ParallelPlan p;
  p.tp = tp;
  p.cp = cp;
  p.dp = dp;
  p.pp = pp;
  p.ep = ep;
  p.etp = etp;
  return p;
}

void ExpectGroup(const CommGroup& g, int size, int ranks_per_node) {
  EXPECT_EQ(g.size, size);
  EXPECT_EQ(g.ranks_per_node, ranks_per_node);
}

TEST(GroupFor, MegatronRankOrder) {
  // TP 8 fills a node; DP 4 then strides by 8: one member per node.
  const ParallelPlan a = Plan(8, 1, 4, 1);
  ExpectGroup(GroupFor(ParallelDim::kTP, a, 8), 8, 8);
  ExpectGroup(GroupFor(ParallelDim::kDP, a, 8), 4, 1);
  EXPECT_EQ(GroupFor(ParallelDim::kDP, a, 8).Nodes(), 4);
  // TP 2, CP 2, DP 4: CP stride 2 (both on one node), DP stride 4 (two per node).
  const ParallelPlan b = Plan(2, 2, 4, 1);
  ExpectGroup(GroupFor(ParallelDim::kCP, b, 8), 2, 2);
  ExpectGroup(GroupFor(ParallelDim::kDP, b, 8), 4, 2);
  // PP outermost: stride TP x CP x DP = 16 > 8 GPUs per node.
  ExpectGroup(GroupFor(ParallelDim::kPP, Plan(8, 1, 2, 4), 8), 4, 1);
  // PP 8 with TP 1, DP 1: all stages on one node.
  ExpectGroup(GroupFor(ParallelDim::kPP, Plan(1, 1, 1, 8), 8), 8, 8);
}

TEST(GroupFor, ExpertDimensions) {
  // 16 GPUs, EP 8, ETP 1: the EP group is one node; expert-DP = 16 / 8 = 2, stride 8.
  const ParallelPlan p = Plan(1, 1, 16, 1, 8, 1);
  ExpectGroup(GroupFor(ParallelDim::kEP, p, 8), 8, 8);
  ExpectGroup(GroupFor(ParallelDim::kETP, p, 8), 1, 1);
  ExpectGroup(GroupFor(ParallelDim::kExpertDP, p, 8), 2, 1);
  // ETP 2, EP 8 on 8-GPU nodes: EP ranks sit 2 apart, 4 per node, 2 nodes.
  const ParallelPlan q = Plan(2, 1, 8, 1, 8, 2);
  ExpectGroup(GroupFor(ParallelDim::kEP, q, 8), 8, 4);
  EXPECT_EQ(GroupFor(ParallelDim::kEP, q, 8).Nodes(), 2);
}

TEST(CollectiveName, Names) {
  EXPECT_EQ(CollectiveName(Collective::kAllToAll), "all-to-all");
  EXPECT_EQ(CollectiveName(Collective::kSendRecv), "send/recv");
}

}  // namespace
}  // namespace sextant
