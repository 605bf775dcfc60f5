#include "cost/collective_analytical.h"
#include "util/units.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sextant {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::array<Protocol, 3> kAllProtocols = {Protocol::kLL, Protocol::kLL128,
                                                   Protocol::kSimple};

int FloorLog2(int n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

}  // namespace

std::string_view ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "?";
}

AnalyticalPreset AnalyticalPreset::Nccl() {
  AnalyticalPreset p;
  p.name = "nccl";
  // nccl-tests all_reduce on one 8-GPU NVSwitch node reaches ~80% of the NVLink peak
  // (e.g. ~360 of 450 GB/s on H100) and ~90% of an InfiniBand NIC's line rate.
  p.intra_efficiency = 0.80;
  p.inter_efficiency = 0.90;
  // NVIDIA/nccl src/graph/tuning.cc (baseLat, hwLat[NVLINK], hwLat[NET]); {LL, LL128, Simple}.
  p.base_tree = {4.4, 4.4, 0};
  p.base_ring = {3.6, 10.0, 8.4};
  p.hop_intra_tree = {0.52, 1.2, 28};
  p.hop_intra_ring = {0.47, 1.9, 3.4};
  p.hop_net_tree = {5.0, 8.5, 50};
  p.hop_net_ring = {2.7, 4.0, 9.6};
  return p;
}

AnalyticalPreset AnalyticalPreset::Rccl() {
  AnalyticalPreset p;
  p.name = "rccl";
  // Primus calibrated bw_eff = 0.70 against MI325X RCCL measurements (collective_args.py);
  // RoCE NICs are taken at 85% of line rate.
  p.intra_efficiency = 0.70;
  p.inter_efficiency = 0.85;
  // ROCm/rccl src/graph/tuning.cc: baseLat {12, 12, 17} for tree and ring;
  // tuning_model_0 hwLat for xGMI ("NVLINK" row) and NET; {LL, LL128, Simple}.
  p.base_tree = {12.0, 12.0, 17.0};
  p.base_ring = {12.0, 12.0, 17.0};
  p.hop_intra_tree = {0.8, 1.4, 2.5};
  p.hop_intra_ring = {0.8, 2.2, 3.6};
  p.hop_net_tree = {11.8, 18.2, 20.8};
  p.hop_net_ring = {9.5, 19.8, 15.1};
  return p;
}

// Where a group sits: n ranks, r per node, N nodes.
struct AnalyticalCollectiveModel::Shape {
  int n = 1;
  int r = 1;
  int nodes = 1;
  bool crosses_pods = false;
};

AnalyticalCollectiveModel::AnalyticalCollectiveModel(const ClusterSpec& cluster,
                                                     AnalyticalPreset preset)
    : cluster_(cluster), preset_(std::move(preset)) {}

double AnalyticalCollectiveModel::IntraBandwidth(int r) const {
  const GpuSpec& gpu = cluster_.gpu;
  double peak = gpu.intra_node_bandwidth;
  if (gpu.fabric == FabricKind::kMesh) {
    // A mesh has one dedicated link per peer: r-1 peers can use only r-1 links.
    const int links =
        gpu.intra_node_links > 0 ? gpu.intra_node_links : std::max(1, cluster_.gpus_per_node - 1);
    peak = gpu.LinkBandwidth() * std::min(std::max(1, r - 1), links);
  }
  return peak * preset_.intra_efficiency;
}

double AnalyticalCollectiveModel::NodeNetworkBandwidth(int r, int nodes) const {
  // Rail-optimised scale-out: the group's r GPUs of a node drive their share of its NICs.
  const int gpus = std::max(1, cluster_.gpus_per_node);
  const int nics = cluster_.NicsPerNode();
  const int usable = std::max(1, (nics * std::min(r, gpus) + gpus - 1) / gpus);
  double bw = usable * cluster_.gpu.nic_bandwidth;
  if (cluster_.nodes_per_pod > 0 && nodes > cluster_.nodes_per_pod) {
    bw = std::min(bw, std::min(r, gpus) * cluster_.PodBandwidth());
  }
  return bw * preset_.inter_efficiency;
}

double AnalyticalCollectiveModel::NetHop(const Shape& s, double hop_us) const {
  // Beyond a pod the extra switch tier adds its latency to every network step.
  const double extra = s.crosses_pods ? cluster_.PodLatency() / kUs : 0.0;
  return hop_us + extra;
}

// NCCL ring: steps = 2(n-1) for all-reduce, n-1 for all-gather / reduce-scatter, of which
// 2(N-1) / N-1 cross the network; algbw = busbw * n / steps.
double AnalyticalCollectiveModel::Ring(Collective op, double bytes, const Shape& s,
                                       Protocol p) const {
  const bool all_reduce = op == Collective::kAllReduce;
  const int steps = all_reduce ? 2 * (s.n - 1) : s.n - 1;
  const int net_steps = all_reduce ? 2 * (s.nodes - 1) : s.nodes - 1;
  double bus = kInfinity;
  if (s.r > 1) bus = std::min(bus, IntraBandwidth(s.r));
  if (s.nodes > 1) bus = std::min(bus, NodeNetworkBandwidth(s.r, s.nodes));
  const int i = static_cast<int>(p);
  if (p == Protocol::kLL) {
    bus *= (all_reduce || s.nodes > 1) ? preset_.ll_fraction_allreduce : preset_.ll_fraction_other;
  } else if (p == Protocol::kLL128) {
    bus *= preset_.ll128_fraction;
  }
  double intra_hop = preset_.hop_intra_ring[i];
  if (s.nodes > 1 && p == Protocol::kLL)
    intra_hop *= 1.8;  // NCCL: LL intra hops slow down off-node
  const double latency_us = preset_.base_ring[i] + (steps - net_steps) * intra_hop +
                            net_steps * NetHop(s, preset_.hop_net_ring[i]);
  return latency_us * kUs + bytes * steps / (s.n * bus);
}

// NCCL tree all-reduce: chain inside the node, double binary tree across nodes;
// algbw = busbw / 2.
double AnalyticalCollectiveModel::Tree(double bytes, const Shape& s, Protocol p) const {
  double bus = kInfinity;
  if (s.r > 1) bus = std::min(bus, IntraBandwidth(s.r));
  if (s.nodes > 1) bus = std::min(bus, NodeNetworkBandwidth(s.r, s.nodes));
  bus *= preset_.tree_fraction;
  if (p == Protocol::kLL) bus /= 3.8;
  if (p == Protocol::kLL128) bus *= s.nodes == 1 ? 7.0 / 9.0 : 0.915;
  const int i = static_cast<int>(p);
  const double latency_us =
      preset_.base_tree[i] + 2 * ((s.r - 1) * preset_.hop_intra_tree[i] +
                                  FloorLog2(s.nodes) * NetHop(s, preset_.hop_net_tree[i]));
  return latency_us * kUs + 2 * bytes / bus;
}

// One-shot all-reduce (every rank writes its whole buffer to every peer, then reduces
// locally) and direct all-gather / reduce-scatter (each shard written straight to its
// owner): a single synchronisation instead of n-1 ring steps, for small messages on one
// node where every pair of GPUs has a direct path (NVSwitch or a full xGMI mesh).
double AnalyticalCollectiveModel::Direct(Collective op, double bytes, const Shape& s) const {
  if (s.nodes > 1 || bytes > static_cast<double>(preset_.direct_max_bytes)) return kInfinity;
  const int ll = static_cast<int>(Protocol::kLL);
  const double latency_us = preset_.base_ring[ll] + preset_.hop_intra_ring[ll];
  const double volume = op == Collective::kAllReduce ? bytes * (s.n - 1) : bytes * (s.n - 1) / s.n;
  return latency_us * kUs + volume / IntraBandwidth(s.r);
}

// Two-level all-reduce: reduce-scatter inside each node, all-reduce of each GPU's 1/r shard
// across nodes over its own NIC, all-gather inside the node. Fewer latency steps than a
// flat ring (2(r-1) + 2(N-1) instead of 2(n-1)); the two tiers run one after the other.
double AnalyticalCollectiveModel::Hierarchical(double bytes, const Shape& s, Protocol p) const {
  if (s.nodes <= 1 || s.r <= 1) return kInfinity;
  Shape intra{s.r, s.r, 1, false};
  Shape inter{s.nodes, 1, s.nodes, s.crosses_pods};
  const double shard = bytes / s.r;
  // The inter-node ring of one shard runs on this GPU's share of the node's NICs.
  const int i = static_cast<int>(p);
  const double fraction = p == Protocol::kLL      ? preset_.ll_fraction_allreduce
                          : p == Protocol::kLL128 ? preset_.ll128_fraction
                                                  : 1.0;
  const double per_gpu_net = NodeNetworkBandwidth(s.r, s.nodes) / s.r * fraction;
  const double inter_time = (2 * (s.nodes - 1) * NetHop(inter, preset_.hop_net_ring[i])) * kUs +
                            2.0 * (s.nodes - 1) / s.nodes * shard / per_gpu_net;
  return Ring(Collective::kReduceScatter, bytes, intra, p) + inter_time +
         Ring(Collective::kAllGather, bytes, intra, p) - preset_.base_ring[i] * kUs;
}

// All-to-all as NCCL runs it: grouped send/recv to every peer at once. The intra-node share
// and the network share proceed in parallel; each GPU gets 1/r of its node's NICs.
double AnalyticalCollectiveModel::AllToAll(double bytes, const Shape& s) const {
  const int simple = static_cast<int>(Protocol::kSimple);
  const double intra_bytes = bytes * (s.r - 1) / s.n;
  const double inter_bytes = bytes * (s.n - s.r) / s.n;
  double t = 0;
  if (s.r > 1) t = std::max(t, intra_bytes / IntraBandwidth(s.r));
  if (s.nodes > 1) t = std::max(t, inter_bytes / (NodeNetworkBandwidth(s.r, s.nodes) / s.r));
  const double hop =
      s.nodes > 1 ? NetHop(s, preset_.hop_net_ring[simple]) : preset_.hop_intra_ring[simple];
  // One send/receive pair per peer (ncclGroupStart ... ncclGroupEnd): each peer in another
  // node is a network message of its own that the proxy posts and completes. Its cost is the
  // cluster's a2a_peer_lat (Primus's measured 0.45 us per inter-node peer, gpu_spec.h; a
  // hardware config may set it), shared with the Primus-fitted model.
  const double remote_peers = s.n - s.r;
  return (preset_.base_ring[simple] + hop + cluster_.calibration.a2a_peer_lat_us * remote_peers) *
             kUs +
         t;
}

double AnalyticalCollectiveModel::SendRecv(double bytes, const Shape& s) const {
  const int simple = static_cast<int>(Protocol::kSimple);
  double bw;
  double hop;
  if (s.nodes > 1) {
    bw = cluster_.gpu.nic_bandwidth * preset_.inter_efficiency;
    hop = NetHop(s, preset_.hop_net_ring[simple]);
  } else {
    // Switch: the whole NVLink bandwidth reaches any peer; mesh: one xGMI link.
    bw = (cluster_.gpu.fabric == FabricKind::kMesh ? cluster_.gpu.LinkBandwidth()
                                                   : cluster_.gpu.intra_node_bandwidth) *
         preset_.intra_efficiency;
    hop = preset_.hop_intra_ring[simple];
  }
  return (preset_.base_ring[simple] + hop) * kUs + bytes / bw;
}

CollectiveEstimate AnalyticalCollectiveModel::Estimate(Collective op, int64_t bytes,
                                                       const CommGroup& group) const {
  CollectiveEstimate out;
  const double m = static_cast<double>(std::max<int64_t>(0, bytes));
  Shape s;
  s.n = std::max(1, group.size);
  s.r = std::max(1, std::min({group.ranks_per_node, s.n, std::max(1, cluster_.gpus_per_node)}));
  s.nodes = (s.n + s.r - 1) / s.r;
  s.crosses_pods = cluster_.nodes_per_pod > 0 && s.nodes > cluster_.nodes_per_pod;
  if (op == Collective::kSendRecv) {
    // A point-to-point transfer crosses nodes whenever its group spans more than one.
    if (m <= 0) return out;
    out.seconds = SendRecv(m, s);
    out.algorithm = "p2p";
    out.protocol = "Simple";
    out.bus_bandwidth = BusBandwidth(op, bytes, 2, out.seconds);
    return out;
  }
  if (s.n <= 1 || m <= 0) return out;
  double best = kInfinity;
  auto offer = [&](double t, const char* algorithm, std::string_view protocol) {
    if (t < best) {
      best = t;
      out.algorithm = algorithm;
      out.protocol = std::string(protocol);
    }
  };
  if (op == Collective::kAllToAll) {
    offer(AllToAll(m, s), "direct", "Simple");
  } else {
    for (Protocol p : kAllProtocols) {
      offer(Ring(op, m, s, p), "ring", ProtocolName(p));
      if (op == Collective::kAllReduce) {
        offer(Tree(m, s, p), "tree", ProtocolName(p));
        offer(Hierarchical(m, s, p), "hierarchical", ProtocolName(p));
      }
    }
    offer(Direct(op, m, s), op == Collective::kAllReduce ? "one-shot" : "direct", "LL");
  }
  out.seconds = best;
  out.bus_bandwidth = BusBandwidth(op, bytes, s.n, out.seconds);
  return out;
}

}  // namespace sextant
