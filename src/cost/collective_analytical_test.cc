// Hand-checked values for the analytical NCCL/RCCL presets. Formulas: NCCL's tuning model
// (NVIDIA/nccl src/graph/tuning.cc) -- time = base + hops x hop latency + bytes / algbw,
// ring algbw = busbw x n / steps, tree algbw = busbw / 2, LL128 at 0.92 of the link --
// with the achievable fractions of AnalyticalPreset.
#include "cost/collective_analytical.h"

#include <gtest/gtest.h>

#include "hardware/hardware_library.h"

namespace sextant {
namespace {

constexpr double kGiB = 1 << 30;
constexpr double kMiB = 1 << 20;

AnalyticalCollectiveModel H100Model(int nodes) {
  return AnalyticalCollectiveModel(MakeCluster(*FindGpu("H100"), nodes), AnalyticalPreset::Nccl());
}

AnalyticalCollectiveModel Mi300xModel(int nodes) {
  return AnalyticalCollectiveModel(MakeCluster(*FindGpu("MI300X"), nodes),
                                   AnalyticalPreset::Rccl());
}

TEST(AnalyticalNccl, LargeAllReduceOnOneNodeIsARing) {
  // 8 x H100, 1 GiB. Simple ring: busbw = 450 GB/s x 0.8 = 360 GB/s; bytes 2 x 7/8 x 1 GiB
  // / 360 GB/s = 5219.6 us; latency 8.4 + 14 steps x 3.4 = 56.0 us. Total 5275.6 us.
  // (Tree: 2 x 1 GiB / (0.9 x 360 GB/s) + 2 x 7 x 28 us = 7020 us; LL128: 5710 us.)
  const CollectiveEstimate e = H100Model(1).Estimate(Collective::kAllReduce, 1 << 30, {8, 8});
  const double expected = 56.0e-6 + 2 * 7.0 / 8 * kGiB / 360e9;
  EXPECT_NEAR(e.seconds, expected, expected * 1e-9);
  EXPECT_EQ(e.algorithm, "ring");
  EXPECT_EQ(e.protocol, "Simple");
  EXPECT_NEAR(e.bus_bandwidth, kGiB / expected * 2 * 7 / 8, 1e3);  // just under 360 GB/s
}

TEST(AnalyticalNccl, SmallAllReduceOnOneNodeIsOneShot) {
  // 8 KiB: one write of the buffer to 7 peers = 7 x 8192 B / 360 GB/s = 0.159 us, plus one
  // LL step (base 3.6 + hop 0.47) = 4.229 us. The LL ring would take 3.6 + 14 x 0.47 +
  // 8192 x 14/8 / 90 GB/s = 10.34 us.
  const CollectiveEstimate e = H100Model(1).Estimate(Collective::kAllReduce, 8192, {8, 8});
  const double expected = (3.6 + 0.47) * 1e-6 + 7 * 8192 / 360e9;
  EXPECT_NEAR(e.seconds, expected, 1e-12);
  EXPECT_EQ(e.algorithm, "one-shot");
}

TEST(AnalyticalNccl, MultiNodeRingIsBoundByTheNodesNics) {
  // 16 nodes x 8 H100 = 128 ranks, 1 GiB. Node NICs: 8 x 50 GB/s x 0.9 = 360 GB/s = the
  // NVLink figure, so busbw 360 GB/s. Steps 254 (30 over the network): latency
  // 8.4 + 224 x 3.4 + 30 x 9.6 = 1058.0 us; bytes 1 GiB x 254 / (128 x 360 GB/s) = 5918.8 us.
  const CollectiveEstimate e = H100Model(16).Estimate(Collective::kAllReduce, 1 << 30, {128, 8});
  const double expected = 1058.0e-6 + kGiB * 254 / (128 * 360e9);
  EXPECT_NEAR(e.seconds, expected, expected * 1e-9);
  EXPECT_EQ(e.algorithm, "ring");
}

TEST(AnalyticalNccl, SmallMultiNodeAllReduceIsATree) {
  // 64 KiB over 16 nodes x 8 H100. Tree/LL: latency 4.4 + 2 x (7 x 0.52 + log2(16) x 5.0)
  // = 51.68 us; busbw 360 GB/s x 0.9 / 3.8 (LL), algbw half of it: 2 x 64 KiB / 85.26 GB/s
  // = 1.54 us. The LL ring needs 3.6 + 224 x 0.47 x 1.8 + 30 x 2.7 = 274 us of latency.
  const CollectiveEstimate e = H100Model(16).Estimate(Collective::kAllReduce, 64 << 10, {128, 8});
  const double expected = 51.68e-6 + 2 * 65536.0 * 3.8 / (360e9 * 0.9);
  EXPECT_NEAR(e.seconds, expected, expected * 1e-9);
  EXPECT_EQ(e.algorithm, "tree");
  EXPECT_EQ(e.protocol, "LL");
}

TEST(AnalyticalNccl, AllToAllAcrossTwoNodes) {
  // EP 16 over 2 nodes, 64 MiB sent per rank: 7/16 stays on NVLink (29.36 MB / 360 GB/s =
  // 81.6 us), 8/16 leaves through this GPU's NIC share (360 GB/s / 8 = 45 GB/s: 745.7 us);
  // the two overlap; + base 8.4 + one network hop 9.6 us + 8 remote peers x 0.45 us.
  const CollectiveEstimate e = H100Model(2).Estimate(Collective::kAllToAll, 64 << 20, {16, 8});
  const double expected = (18.0 + 8 * 0.45) * 1e-6 + 0.5 * 64 * kMiB / 45e9;
  EXPECT_NEAR(e.seconds, expected, expected * 1e-9);
  EXPECT_EQ(e.algorithm, "direct");
}

// One message per remote peer: a small all-to-all over 1,024 nodes is not the price of one over
// 16. At 8 bytes the transfer is nothing; the difference is (8184 - 120) peers x 0.45 us plus
// the network hop's growth with the node count.
TEST(AnalyticalNccl, AllToAllLatencyGrowsWithRemotePeers) {
  const double small = H100Model(16).Time(Collective::kAllToAll, 8, {128, 8});
  const double large = H100Model(1024).Time(Collective::kAllToAll, 8, {8192, 8});
  EXPECT_GE(large - small, (8184 - 120) * 0.45e-6);
  EXPECT_LT(large - small, (8184 - 120) * 0.45e-6 + 50e-6);
  // The per-peer cost is the cluster's a2a_peer_lat, which a hardware config may set.
  ClusterSpec slow = MakeCluster(*FindGpu("H100"), 16);
  slow.calibration.a2a_peer_lat_us = 1.45;
  const double slower = AnalyticalCollectiveModel(slow, AnalyticalPreset::Nccl())
                            .Time(Collective::kAllToAll, 8, {128, 8});
  EXPECT_NEAR(slower - small, 120 * 1.0e-6, 1e-12);
}

TEST(AnalyticalNccl, SendRecvIntraAndInterNode) {
  // Intra-node: whole NVLink (450 x 0.8 = 360 GB/s); inter-node: one NIC (50 x 0.9 = 45).
  const AnalyticalCollectiveModel m = H100Model(2);
  EXPECT_NEAR(m.Time(Collective::kSendRecv, 16 << 20, {2, 2}),
              (8.4 + 3.4) * 1e-6 + 16 * kMiB / 360e9, 1e-12);
  EXPECT_NEAR(m.Time(Collective::kSendRecv, 16 << 20, {2, 1}),
              (8.4 + 9.6) * 1e-6 + 16 * kMiB / 45e9, 1e-12);
}

TEST(AnalyticalRccl, MeshGroupUsesOnlyItsOwnLinks) {
  // TP 2 on MI300X: one 64 GB/s xGMI link x 0.7 = 44.8 GB/s. Ring all-reduce of 64 MiB:
  // 2 steps, latency 17 + 2 x 3.6 = 24.2 us, bytes 2 x 1/2 x 64 MiB / 44.8 GB/s = 1498.0 us.
  const AnalyticalCollectiveModel m = Mi300xModel(1);
  EXPECT_DOUBLE_EQ(m.IntraBandwidth(2), 44.8e9);
  EXPECT_NEAR(m.IntraBandwidth(8), 7 * 64e9 * 0.7, 1);  // all 7 links: 313.6 GB/s
  const CollectiveEstimate e = m.Estimate(Collective::kAllReduce, 64 << 20, {2, 2});
  const double expected = 24.2e-6 + 64 * kMiB / 44.8e9;
  EXPECT_NEAR(e.seconds, expected, expected * 1e-9);
}

TEST(AnalyticalRccl, SwitchGroupKeepsFullBandwidth) {
  // On NVSwitch a 2-GPU group still gets the GPU's whole NVLink bandwidth.
  EXPECT_DOUBLE_EQ(H100Model(1).IntraBandwidth(2), 360e9);
}

TEST(Analytical, PodTierAddsLatencyAndCapsBandwidth) {
  ClusterSpec cluster = MakeCluster(*FindGpu("H100"), 64);
  cluster.nodes_per_pod = 32;
  cluster.pod_bandwidth = 25e9;
  cluster.pod_latency = 5e-6;
  const AnalyticalCollectiveModel tiered(cluster, AnalyticalPreset::Nccl());
  // Within a pod: 8 NICs x 50 GB/s x 0.9; across pods: 8 GPUs x 25 GB/s x 0.9.
  EXPECT_DOUBLE_EQ(tiered.NodeNetworkBandwidth(8, 16), 360e9);
  EXPECT_DOUBLE_EQ(tiered.NodeNetworkBandwidth(8, 64), 180e9);
  const double in_pod = tiered.Time(Collective::kAllReduce, 1 << 30, {256, 8});
  const double across = tiered.Time(Collective::kAllReduce, 1 << 30, {512, 8});
  EXPECT_GT(across, in_pod * 1.5);
}

TEST(Analytical, TrivialGroupsCostNothing) {
  const AnalyticalCollectiveModel m = H100Model(1);
  EXPECT_EQ(m.Time(Collective::kAllReduce, 1 << 20, {1, 1}), 0);
  EXPECT_EQ(m.Time(Collective::kAllGather, 0, {8, 8}), 0);
  EXPECT_EQ(m.Time(Collective::kSendRecv, 0, {2, 2}), 0);
}

TEST(Analytical, TimeGrowsWithBytes) {
  const AnalyticalCollectiveModel m = Mi300xModel(4);
  for (Collective op : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                        Collective::kAllToAll, Collective::kSendRecv}) {
    double previous = 0;
    for (int64_t bytes = 1024; bytes <= (int64_t{1} << 30); bytes *= 4) {
      const double t = m.Time(op, bytes, {32, 8});
      EXPECT_GE(t, previous) << CollectiveName(op) << " " << bytes;
      previous = t;
    }
  }
}

}  // namespace
}  // namespace sextant
