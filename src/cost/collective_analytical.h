// Sextant's own collective model, built on NCCL's tuning model (NVIDIA/nccl
// src/graph/tuning.cc: time = base latency + per-hop latencies + bytes / algorithm
// bandwidth, three protocols, ring and tree) and extended with the algorithms large
// training jobs actually get: one-shot/direct transfers for small intra-node messages,
// two-level (hierarchical) all-reduce, direct all-to-all, and an xGMI mesh whose per-peer
// links limit a group that uses only some of the node's GPUs.
#pragma once

#include <array>
#include <string>

#include "cost/collective_model.h"

namespace sextant {

enum class Protocol { kLL = 0, kLL128 = 1, kSimple = 2 };
std::string_view ProtocolName(Protocol p);  // "LL", "LL128", "Simple"

// Per-protocol constants, indexed by Protocol; latencies in microseconds.
using ProtocolTable = std::array<double, 3>;

struct AnalyticalPreset {
  std::string name;
  double intra_efficiency = 0.8;  // achievable fraction of the intra-node link peak
  double inter_efficiency = 0.9;  // achievable fraction of the NIC peak
  ProtocolTable base_ring{};      // fixed cost per call, ring algorithms
  ProtocolTable base_tree{};
  ProtocolTable hop_intra_ring{};  // per step over NVLink / xGMI
  ProtocolTable hop_intra_tree{};
  ProtocolTable hop_net_ring{};  // per step over the network
  ProtocolTable hop_net_tree{};
  // Payload fraction of a line: LL carries 4 of 8 bytes and NCCL budgets it at 1/4 of the
  // link for all-reduce or multi-node rings (1/3 otherwise); LL128 carries 120 of 128.
  double ll_fraction_allreduce = 1.0 / 4.0;
  double ll_fraction_other = 1.0 / 3.0;
  double ll128_fraction = 0.92;
  double tree_fraction = 0.9;          // NCCL: tree busBw x 0.9
  int64_t direct_max_bytes = 1 << 20;  // one-shot / direct intra-node algorithms up to this size

  // NCCL over NVLink/NVSwitch + InfiniBand; constants from NCCL's tuning.cc.
  static AnalyticalPreset Nccl();
  // RCCL over xGMI + RoCE; constants from ROCm/rccl's tuning.cc (tuning_model_0).
  static AnalyticalPreset Rccl();
};

class AnalyticalCollectiveModel : public CollectiveModel {
 public:
  AnalyticalCollectiveModel(const ClusterSpec& cluster, AnalyticalPreset preset);
  std::string Name() const override { return preset_.name; }
  CollectiveEstimate Estimate(Collective op, int64_t bytes, const CommGroup& group) const override;

  // Achievable per-GPU bandwidth (bytes/s) toward the other r-1 group members of its node.
  double IntraBandwidth(int ranks_per_node) const;
  // Achievable bandwidth (bytes/s) of the NICs one node gives a group with r members there.
  double NodeNetworkBandwidth(int ranks_per_node, int nodes) const;

 private:
  struct Shape;
  double Ring(Collective op, double bytes, const Shape& s, Protocol p) const;
  double Tree(double bytes, const Shape& s, Protocol p) const;
  double Direct(Collective op, double bytes, const Shape& s) const;
  double Hierarchical(double bytes, const Shape& s, Protocol p) const;
  double AllToAll(double bytes, const Shape& s) const;
  double SendRecv(double bytes, const Shape& s) const;
  double NetHop(const Shape& s, double hop_us) const;

  ClusterSpec cluster_;
  AnalyticalPreset preset_;
};

}  // namespace sextant
