// Primus preset against the reference timings of research/primus-projection.md §3.8, which
// were produced by executing Primus's own collective model (HEAD fd1eeabb): 8 GPUs per node,
// TP = 1, EP = 8, 64 MiB unless stated. Tolerance: 1%.
#include "cost/collective_primus.h"

#include <gtest/gtest.h>

#include "hardware/hardware_library.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

constexpr double kMiB = 1 << 20;
const std::string kCorpus = CorpusPath("primus/examples/hardware_configs/");

CommGroup Group(int size) { return CommGroup{size, std::min(size, 8)}; }

void ExpectWithinOnePercent(double actual, double reference) {
  EXPECT_NEAR(actual, reference, reference * 0.01) << "reference " << reference;
}

// Primus's defaults (no hardware_config): node_bw 1024, pod = whole cluster, switch.
PrimusCollectiveModel DefaultsModel(int nodes, int pp = 1) {
  PrimusCollectiveParams p = PrimusCollectiveParams::Defaults(nodes);
  p.hp = 1;
  p.ep = 8;
  p.pp = pp;
  return PrimusCollectiveModel(p, /*reproduce_known_bugs=*/true);
}

// A Primus hardware_config file applied to a Sextant cluster of `nodes` nodes.
PrimusCollectiveModel FileModel(const std::string& file, int nodes, int tp = 1, int pp = 1) {
  const ClusterSpec cluster =
      LoadHardwareConfig(kCorpus + file, MakeCluster(*FindGpu("MI300X"), nodes));
  ParallelPlan plan;
  plan.tp = tp;
  plan.pp = pp;
  plan.ep = 8;
  return PrimusCollectiveModel(PrimusCollectiveParams::FromCluster(cluster, plan), true);
}

struct Reference {
  const char* file;  // nullptr = Primus defaults
  double ar8, ar16, ar64, a2a8, a2a16, ar_tp8, p2p_1node, p2p_2nodes;
};

const Reference kReferences[] = {
    {nullptr, 377.30, 658.96, 1209.51, 302.96, 1099.71, 290.79, 23.73, 424.23},
    {"mi300x.yaml", 578.95, 967.15, 1706.50, 433.82, 1099.71, 391.62, 330.93, 424.23},
    {"mi355x.yaml", 516.54, 960.24, 1658.14, 398.36, 1099.71, 360.41, 276.32, 424.23},
};

PrimusCollectiveModel ModelFor(const Reference& ref, int nodes, int tp = 1, int pp = 1) {
  if (ref.file == nullptr) {
    PrimusCollectiveParams p = PrimusCollectiveParams::Defaults(nodes);
    p.hp = tp;
    p.ep = 8;
    p.pp = pp;
    return PrimusCollectiveModel(p, true);
  }
  return FileModel(ref.file, nodes, tp, pp);
}

class PrimusReference : public ::testing::TestWithParam<Reference> {
 protected:
  // The Primus defaults need no file; the hardware_config rows read theirs from the corpus.
  void SetUp() override {
    if (GetParam().file != nullptr) SEXTANT_SKIP_WITHOUT_CORPUS();
  }
};

TEST_P(PrimusReference, AllReduce64MiBOneNode) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 1).AllReduceUs(64 * kMiB, Group(8)), GetParam().ar8);
}
TEST_P(PrimusReference, AllReduce64MiBTwoNodes) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 2).AllReduceUs(64 * kMiB, Group(16)),
                         GetParam().ar16);
}
TEST_P(PrimusReference, AllReduce64MiBEightNodes) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 8).AllReduceUs(64 * kMiB, Group(64)),
                         GetParam().ar64);
}
TEST_P(PrimusReference, AllToAll64MiBOneNode) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 1).AllToAllUs(64 * kMiB, Group(8)), GetParam().a2a8);
}
TEST_P(PrimusReference, AllToAll64MiBTwoNodes) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 2).AllToAllUs(64 * kMiB, Group(16)),
                         GetParam().a2a16);
}
TEST_P(PrimusReference, AllReduce32MiBTensorParallel8) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 1, /*tp=*/8).AllReduceUs(32 * kMiB, Group(8)),
                         GetParam().ar_tp8);
}
TEST_P(PrimusReference, SendRecv16MiBOneNode) {
  ExpectWithinOnePercent(ModelFor(GetParam(), 1, 1, /*pp=*/2).SendRecvUs(16 * kMiB, Group(2)),
                         GetParam().p2p_1node);
}
TEST_P(PrimusReference, SendRecv16MiBTwoNodes) {
  ExpectWithinOnePercent(
      ModelFor(GetParam(), 2, 1, /*pp=*/2).SendRecvUs(16 * kMiB, CommGroup{2, 1}),
      GetParam().p2p_2nodes);
}

INSTANTIATE_TEST_SUITE_P(ResearchTable, PrimusReference, ::testing::ValuesIn(kReferences),
                         [](const auto& info) {
                           const char* f = info.param.file;
                           return std::string(f == nullptr ? "defaults"
                                                           : std::string(f).substr(0, 6));
                         });

// Hand-checked single formulas (collective_model.py), in microseconds.
TEST(PrimusFormulas, SendRecvIntraNodeByHand) {
  // Defaults, one node, PP 2: 16 MiB over node_bw 1024 GB/s x p2p_bw_eff 0.8 (switch, so no
  // per-link split) = 20.48 us, + node_lat 0.45 + kernel launch 2.8 = 23.73 us.
  EXPECT_NEAR(DefaultsModel(1, 2).SendRecvUs(16 * kMiB, Group(2)), 20.48 + 0.45 + 2.8, 1e-9);
}

TEST(PrimusFormulas, SendRecvInterNodeByHand) {
  // Two nodes, PP 2: 16 MiB over pod_bw 50 GB/s x 0.8 = 419.43 us, + pod_lat 2 + 2.8.
  EXPECT_NEAR(DefaultsModel(2, 2).SendRecvUs(16 * kMiB, CommGroup{2, 1}),
              16 * kMiB / 40e9 * 1e6 + 2.0 + 2.8, 1e-9);
}

TEST(PrimusFormulas, AllGatherDirectByHand) {
  // 8 GPUs, 8 MiB, defaults: the single-shot ("direct") all-gather with the Simple protocol
  // wins. Each rank sends its 1 MiB share (+ 8-byte header) to 7 peers in one round over
  // node_bw 1024 x bw_eff 0.7 = 716.8 GB/s: 7 x 1048584 B / 716.8 GB/s = 10.2401 us; one
  // Simple latency 2 x 0.28 + 0.09 + 0.09 = 0.74 us; + kernel launch 2.8 us = 13.7801 us.
  const double expected = 7 * 1048584 / 716.8e9 * 1e6 + 0.74 + 2.8;
  std::string algorithm;
  EXPECT_NEAR(DefaultsModel(1).AllGatherUs(8 * kMiB, Group(8), &algorithm), expected, 1e-6);
  EXPECT_EQ(algorithm, "direct/simple");
}

TEST(PrimusFormulas, ZeroAndSingleRank) {
  const PrimusCollectiveModel m = DefaultsModel(1);
  EXPECT_EQ(m.AllReduceUs(64 * kMiB, Group(1)), 0);
  EXPECT_EQ(m.AllReduceUs(0, Group(8)), 0);
  EXPECT_EQ(m.AllGatherUs(64 * kMiB, Group(1)), 0);
  EXPECT_EQ(m.ReduceScatterUs(64 * kMiB, Group(1)), 0);
}

// The three known Primus bugs (research §8.1 #18): kept by "primus", fixed by "primus-fixed".
TEST(PrimusKnownBugs, AllToAllOnOneGpuCostsTheFixedOverhead) {
  PrimusCollectiveParams p = PrimusCollectiveParams::Defaults(1);
  EXPECT_DOUBLE_EQ(PrimusCollectiveModel(p, true).AllToAllUs(64 * kMiB, Group(1)), 150.0);
  EXPECT_EQ(PrimusCollectiveModel(p, false).AllToAllUs(64 * kMiB, Group(1)), 0);
}

TEST(PrimusKnownBugs, MeshDerateUsesTheTensorParallelSize) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  // mi300x.yaml mesh, TP 1, a 4-GPU all-gather: Primus derates by TP (1 -> no derate), the
  // fixed preset by the 4 GPUs actually talking (3 of 7 links): 7/3 as long on bandwidth.
  const ClusterSpec cluster =
      LoadHardwareConfig(kCorpus + "mi300x.yaml", MakeCluster(*FindGpu("MI300X")));
  ParallelPlan plan;
  const PrimusCollectiveParams p = PrimusCollectiveParams::FromCluster(cluster, plan);
  const CommGroup four{4, 4};
  const double buggy = PrimusCollectiveModel(p, true).AllGatherUs(256 * kMiB, four);
  const double fixed = PrimusCollectiveModel(p, false).AllGatherUs(256 * kMiB, four);
  // Bandwidth-dominated: the ratio approaches 7/3.
  EXPECT_NEAR(fixed / buggy, 7.0 / 3.0, 0.02);
}

TEST(PrimusKnownBugs, DirectAllToAllInflatesProtocolOverheadOnce) {
  // Defaults on 2 nodes, EP 16, 1 MiB, LL protocol, with a NIC tier made fast and latency-free
  // so the intra-node share decides. Scaled message s = 15/16 MiB = 983040 B; LL doubles it
  // to 1966080 B. Intra share 7/15: Primus packetises 917504 B again -> 1835008 B; fixed:
  // 458752 B once -> 917504 B. At 716.8 GB/s: 2.560 vs 1.280 us, + LL latency 0.37 us.
  // Network: 8/15 of 1966080 B x 8 GPUs over 8 NICs x 1000 x 0.8 x 0.96 GB/s = 1.365 us.
  // Both add sync 0, 8 remote peers x 0.45 us and the 2.8 us launch.
  PrimusCollectiveParams p = PrimusCollectiveParams::Defaults(2);
  p.ep = 16;
  p.pod_bw = 1000;
  p.pod_lat = 0;
  const int ll = 1;
  const double tail = 8 * 0.45 + 2.8;
  EXPECT_NEAR(PrimusCollectiveModel(p, true).TieredAllToAllUs(kMiB, Group(16), ll),
              1835008 / 716.8e3 + 0.37 + tail, 1e-9);
  EXPECT_NEAR(PrimusCollectiveModel(p, false).TieredAllToAllUs(kMiB, Group(16), ll),
              917504 / 716.8e3 + 0.37 + tail, 1e-9);
}

TEST(PrimusModel, EstimateReportsSecondsAlgorithmAndBusBandwidth) {
  const PrimusCollectiveModel m = DefaultsModel(1);
  const CollectiveEstimate e = m.Estimate(Collective::kAllReduce, 64 << 20, Group(8));
  EXPECT_NEAR(e.seconds, 377.30e-6, 377.30e-6 * 0.01);
  EXPECT_FALSE(e.algorithm.empty());
  EXPECT_FALSE(e.protocol.empty());
  // busbw = bytes / time x 2 (n-1) / n.
  EXPECT_NEAR(e.bus_bandwidth, (64 << 20) / e.seconds * 2 * 7 / 8, 1);
  EXPECT_EQ(m.Name(), "primus");
}

}  // namespace
}  // namespace sextant
