#include "cost/collective_primus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sextant {
namespace {

// Primus expresses time as bytes / (GB/s) * 1e-3 microseconds.
constexpr double kUsPerBytePerGBps = 1e-3;
constexpr double kUnreachable = std::numeric_limits<double>::infinity();

// Primus tries every protocol for every algorithm and keeps the fastest.
constexpr std::array<const char*, 4> kProtocols = {"simple", "ll", "ll64", "ll128"};

double CeilLog2(double x) { return x <= 1 ? 0.0 : std::ceil(std::log2(x)); }

double Transfer(double bytes, double gbps) { return bytes / gbps * kUsPerBytePerGBps; }

// The NIC-stream contention derate of multi-node all-to-all, floored so a very wide group
// slows down instead of dividing by zero (Primus itself fails there).
double RemoteContention(double per_node, int nodes) {
  return std::max(0.05, 1.0 - per_node * (nodes - 1));
}

struct Candidate {
  double us = kUnreachable;
  std::string name;
  void Offer(double t, const char* algorithm, const char* protocol) {
    if (t < us) {
      us = t;
      name = std::string(algorithm) + "/" + protocol;
    }
  }
};

}  // namespace

struct PrimusCollectiveModel::Wire {
  double latency_us;
  double bytes;
};

PrimusCollectiveParams PrimusCollectiveParams::Defaults(int num_nodes, int gpus_per_node) {
  PrimusCollectiveParams p;
  p.node_size = gpus_per_node;
  p.num_nodes = num_nodes;
  p.pod_size = num_nodes * gpus_per_node;
  return p;
}

PrimusCollectiveParams PrimusCollectiveParams::FromCluster(const ClusterSpec& cluster,
                                                           const ParallelPlan& plan) {
  PrimusCollectiveParams p;
  const CollectiveCalibration& cal = cluster.calibration;
  p.node_size = std::max(1, cluster.gpus_per_node);
  p.num_nodes = std::max(1, cluster.num_nodes);
  p.pod_size =
      cluster.nodes_per_pod > 0 ? cluster.nodes_per_pod * p.node_size : p.num_nodes * p.node_size;
  p.hp = cal.hp > 0 ? cal.hp : std::max(1, plan.tp);
  p.pp = cal.pp > 0 ? cal.pp : std::max(1, plan.pp);
  p.cp = cal.cp > 0 ? cal.cp : std::max(1, plan.cp);
  p.ep = cal.ep > 0 ? cal.ep : std::max(1, plan.ep);
  p.node_bw = cluster.gpu.intra_node_bandwidth / 1e9;
  p.pod_bw = cluster.gpu.nic_bandwidth / 1e9;
  p.cluster_bw = cluster.PodBandwidth() / 1e9;
  p.node_lat = cluster.gpu.intra_node_latency * 1e6;
  p.pod_lat = cluster.gpu.inter_node_latency * 1e6;
  p.cluster_lat = cluster.PodLatency() * 1e6;
  p.switch_topology = cluster.scale_out_switch;
  p.mesh = cluster.gpu.fabric == FabricKind::kMesh;
  p.nics_per_node = cluster.NicsPerNode();
  p.calibration = cal;
  return p;
}

PrimusCollectiveModel::PrimusCollectiveModel(const PrimusCollectiveParams& params,
                                             bool reproduce_known_bugs)
    : p_(params), faithful_(reproduce_known_bugs) {
  p_.node_size = std::max(1, p_.node_size);
  p_.pod_size = std::max(p_.node_size, p_.pod_size);
  if (p_.nics_per_node <= 0) p_.nics_per_node = p_.node_size;
  // Primus applies bw_eff once, to the three tier bandwidths (collective_args.py).
  node_bw_ = p_.node_bw * p_.calibration.bw_eff;
  pod_bw_ = p_.pod_bw * p_.calibration.bw_eff;
  cluster_bw_ = p_.cluster_bw * p_.calibration.bw_eff;
}

// Packetisation of each protocol: Simple adds an 8-byte header and three write latencies;
// LL carries 4 data bytes per 8-byte line; LL64 56 per 64; LL128 120 per 128.
PrimusCollectiveModel::Wire PrimusCollectiveModel::NodeWire(double bytes, int protocol) const {
  const CollectiveCalibration& c = p_.calibration;
  Wire w{c.write_latency_us + c.hbm_latency_us, bytes};
  switch (protocol) {
    case 0:
      w.latency_us += c.write_latency_us + c.write_resp_us;
      w.bytes = bytes + 8;
      break;
    case 1: w.bytes = std::ceil(bytes / 4) * 8; break;
    case 2: w.bytes = std::ceil(bytes / 56) * 64; break;
    default: w.bytes = std::ceil(bytes / 120) * 128; break;
  }
  return w;
}

// On an xGMI mesh a group of g GPUs reaches only g-1 of the node's links; a full-mesh
// all-to-all additionally loses a contention share growing with the square of link use.
double PrimusCollectiveModel::IntraBw(int g, bool all_to_all) const {
  const int ns = p_.node_size;
  double bw = node_bw_;
  if (p_.mesh && g > 1 && g < ns) bw *= static_cast<double>(g - 1) / (ns - 1);
  if (all_to_all && p_.mesh && g > 1 && ns > 2) {
    const double saturation = static_cast<double>(g - 1) / (ns - 1);
    bw *= 1 - p_.calibration.a2a_mesh_contention * saturation * saturation;
  }
  return bw;
}

int PrimusCollectiveModel::DerateGroup(const CommGroup& group) const {
  if (faithful_) return p_.hp;  // bug 1: Primus derates every collective by the TP size
  return std::max(1, std::min(group.size, group.ranks_per_node));
}

int PrimusCollectiveModel::TpStride(const CommGroup& group) const {
  if (faithful_) return std::max(1, p_.hp);
  // Primus places EP ranks TP apart; a group with r members per node behaves the same way.
  const int per_node = std::max(1, std::min({group.size, group.ranks_per_node, p_.node_size}));
  return std::max(1, p_.node_size / per_node);
}

// Bruck-style reduce-scatter / all-gather; above one node the intra- and inter-node phases
// overlap up to ar_overlap_factor once the per-GPU chunk reaches ar_warmup_chunk_bytes.
double PrimusCollectiveModel::BruckRs(double m, int g, int protocol, const CommGroup& grp,
                                      bool reduce) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  const Wire w = NodeWire(std::floor(m * (g - 1) / g), protocol);
  const double bw = IntraBw(DerateGroup(grp), false);
  double t;
  if (g > ns) {
    const double chunk = (w.bytes * g / (g - 1)) / ns;
    const double warm = c.ar_warmup_chunk_bytes > 0
                            ? std::min(1.0, chunk / static_cast<double>(c.ar_warmup_chunk_bytes))
                            : 1.0;
    const double overlap = c.ar_overlap_factor * warm;
    const double intra_bytes = w.bytes * (ns - 1) / ns;
    const double t_intra = Transfer(intra_bytes, bw) + w.latency_us * CeilLog2(ns);
    const double t_inter = Transfer(w.bytes - intra_bytes, pod_bw_) +
                           p_.pod_lat * CeilLog2(static_cast<double>(g) / ns);
    t = std::max(t_intra, t_inter) + (1 - overlap) * std::min(t_intra, t_inter);
  } else {
    t = Transfer(w.bytes, bw) + w.latency_us * CeilLog2(g);
  }
  if (reduce) t += (w.bytes / 2) / c.vector_flops * 1e6;
  return t + c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::RingUs(double m, int g, int protocol, const CommGroup& grp,
                                     int passes, bool reduce) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  const Wire w = NodeWire(std::floor(m * (g - 1) / g), protocol);
  double t;
  if (g <= ns) {
    t = w.latency_us * (g - 1) + Transfer(w.bytes, IntraBw(DerateGroup(grp), false));
  } else if (g <= p_.pod_size) {
    t = p_.pod_lat * (g - 1) + Transfer(w.bytes, std::min(node_bw_, ns * pod_bw_));
  } else {
    t = p_.cluster_lat * (g - 1) + Transfer(w.bytes, std::min(node_bw_, ns * cluster_bw_));
  }
  t *= passes;
  if (reduce) t += (w.bytes * g / 2) / c.vector_flops * 1e6;
  return t + c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::HypercubeAr(double m, int g, int protocol,
                                          const CommGroup& grp) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  const Wire w = NodeWire(m, protocol);
  const double bw = IntraBw(DerateGroup(grp), false);
  double t;
  if (g > ns) {
    t = Transfer(w.bytes * (ns - 1), bw) + Transfer(w.bytes * CeilLog2(g - ns), pod_bw_) +
        w.latency_us * CeilLog2(ns) + p_.pod_lat * CeilLog2(static_cast<double>(g) / ns);
  } else {
    t = Transfer(w.bytes * (g - 1), bw) + w.latency_us * CeilLog2(g);
  }
  t += (w.bytes * g / 2) / c.vector_flops * 1e6;
  return t + c.kernel_launch_latency_us;
}

// Every rank sends its 1/g share to all peers at once (fan-out node_size-1 and pod_size-1).
double PrimusCollectiveModel::SingleShot(double m, int g, int protocol, const CommGroup& grp,
                                         bool reduce) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  const double per_peer = std::ceil(m / g);
  const int local = std::min(g, ns);
  const int intra_peers = local - 1;
  const int inter_peers = std::max(0, g - local);
  double t_intra = 0, t_inter = 0;
  if (intra_peers > 0) {
    const Wire w = NodeWire(per_peer, protocol);
    t_intra = std::ceil(static_cast<double>(intra_peers) / (ns - 1)) * w.latency_us +
              Transfer(w.bytes * intra_peers, IntraBw(DerateGroup(grp), false));
  }
  if (inter_peers > 0) {
    t_inter =
        std::ceil(static_cast<double>(inter_peers) / std::max(1, p_.pod_size - 1)) * p_.pod_lat +
        Transfer(per_peer * inter_peers, pod_bw_);
  }
  double t = std::max(t_intra, t_inter);
  if (reduce) t += std::ceil(per_peer * (g - 1) / 2) / c.vector_flops * 1e6;
  return t + c.kernel_launch_latency_us;
}

// Intra-node reduce-scatter, inter-node all-reduce of the node's shard over all NICs,
// intra-node all-gather; the two tiers pipeline like BruckRs.
double PrimusCollectiveModel::HierarchicalAr(double m, int g, int protocol,
                                             const CommGroup& grp) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  if (g <= ns) {
    return BruckRs(m, g, protocol, grp, true) + BruckRs(m, g, protocol, grp, false) -
           c.kernel_launch_latency_us;
  }
  const int nodes = (g + ns - 1) / ns;
  const Wire w = NodeWire(m * (ns - 1) / ns, protocol);
  const double bw = IntraBw(DerateGroup(grp), false);
  const double t_ag = Transfer(w.bytes, bw) + w.latency_us * CeilLog2(ns);
  const double t_rs = t_ag + (w.bytes / 2) / c.vector_flops * 1e6;
  const double chunk = m / ns;
  const double inter_bytes = chunk * (nodes - 1) / nodes;
  const double inter_bw = p_.switch_topology ? pod_bw_ * p_.nics_per_node : pod_bw_;
  const double t_inter = 2 * (Transfer(inter_bytes, inter_bw) + p_.pod_lat * CeilLog2(nodes)) +
                         (inter_bytes / 2) / c.vector_flops * 1e6;
  const double warm = c.ar_warmup_chunk_bytes > 0
                          ? std::min(1.0, chunk / static_cast<double>(c.ar_warmup_chunk_bytes))
                          : 1.0;
  const double overlap = c.ar_overlap_factor * warm;
  const double t_intra = t_rs + t_ag;
  return std::max(t_intra, t_inter) + (1 - overlap) * std::min(t_intra, t_inter) +
         c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::AllReduceUs(double m, const CommGroup& grp,
                                          std::string* algorithm) const {
  const int g = grp.size;
  if (g <= 1 || m <= 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  Candidate best;
  for (int p = 0; p < static_cast<int>(kProtocols.size()); ++p) {
    best.Offer(RingUs(m, g, p, grp, 2, true), "ring", kProtocols[p]);
    best.Offer(BruckRs(m, g, p, grp, true) + BruckRs(m, g, p, grp, false), "rs+ag", kProtocols[p]);
    best.Offer(HypercubeAr(m, g, p, grp), "one-shot", kProtocols[p]);
    best.Offer(SingleShot(m, g, p, grp, true) + SingleShot(m, g, p, grp, false) -
                   c.kernel_launch_latency_us,
               "direct", kProtocols[p]);
    best.Offer(HierarchicalAr(m, g, p, grp), "hierarchical", kProtocols[p]);
  }
  double t = best.us + c.rccl_overhead_us;
  // Small per-NIC transfers pay an RDMA start-up cost that fades as each NIC's share
  // approaches nic_warmup_bytes (power law 2.5, calibrated on MI325X by Primus).
  if (g > p_.node_size) {
    const int nodes = g / p_.node_size;
    const double steps = std::max(1.0, CeilLog2(nodes));
    const double per_nic = m / (p_.nics_per_node * steps);
    const double ratio = c.nic_warmup_bytes > 0
                             ? std::min(1.0, per_nic / static_cast<double>(c.nic_warmup_bytes))
                             : 1.0;
    if (ratio < 1) t += c.nic_rdma_setup_us * steps * (1 - std::pow(ratio, 2.5));
  }
  if (algorithm) *algorithm = best.name;
  return t;
}

double PrimusCollectiveModel::AllGatherUs(double m, const CommGroup& grp,
                                          std::string* algorithm) const {
  const int g = grp.size;
  if (g <= 1 || m <= 0) return 0;
  Candidate best;
  for (int p = 0; p < static_cast<int>(kProtocols.size()); ++p) {
    best.Offer(BruckRs(m, g, p, grp, false), "bruck", kProtocols[p]);
    best.Offer(RingUs(m, g, p, grp, 1, false), "ring", kProtocols[p]);
    best.Offer(SingleShot(m, g, p, grp, false), "direct", kProtocols[p]);
  }
  if (algorithm) *algorithm = best.name;
  return best.us;
}

double PrimusCollectiveModel::ReduceScatterUs(double m, const CommGroup& grp,
                                              std::string* algorithm) const {
  const int g = grp.size;
  if (g <= 1 || m <= 0) return 0;
  Candidate best;
  for (int p = 0; p < static_cast<int>(kProtocols.size()); ++p) {
    best.Offer(BruckRs(m, g, p, grp, true), "bruck", kProtocols[p]);
    best.Offer(RingUs(m, g, p, grp, 1, true), "ring", kProtocols[p]);
    best.Offer(SingleShot(m, g, p, grp, true), "direct", kProtocols[p]);
  }
  if (algorithm) *algorithm = best.name;
  return best.us;
}

// Inter-node all-to-all within a pod when each node holds node_size ranks: intra-node and
// NIC traffic proceed in parallel, plus per-remote-peer RDMA set-up. `raw` is the scaled
// message before protocol packetisation, `wire` after it.
double PrimusCollectiveModel::DirectA2a(double raw, double wire, int g, int protocol) const {
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  const int nodes = (g + ns - 1) / ns;
  const double intra_share = static_cast<double>(ns - 1) / (g - 1);
  // Bug 2: Primus packetises the already packetised size again for the intra-node share.
  const Wire w = NodeWire((faithful_ ? wire : raw) * intra_share, protocol);
  const double t_intra = Transfer(w.bytes, IntraBw(ns, true)) + w.latency_us;
  const double pod = p_.pod_bw * c.p2p_bw_eff * RemoteContention(c.a2a_remote_contention, nodes);
  const double inter_bytes = wire * (1 - intra_share);
  const double t_inter = p_.switch_topology
                             ? Transfer(inter_bytes * ns, pod * p_.nics_per_node) + p_.pod_lat
                             : Transfer(inter_bytes, pod) + p_.pod_lat * (nodes - 1);
  return std::max(t_intra, t_inter) + (nodes - 1) * p_.pod_lat * 0.5 +
         c.a2a_peer_lat_us * (g - ns) + c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::PlainA2a(double m, int g, int protocol, const CommGroup& grp) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const double scaled = std::floor(m * (g - 1) / g);
  const Wire w = NodeWire(scaled, protocol);
  const int hp = TpStride(grp);
  if (static_cast<int64_t>(hp) * g <= p_.node_size) {
    return Transfer(w.bytes, IntraBw(g, true)) + w.latency_us + c.kernel_launch_latency_us;
  }
  if (static_cast<int64_t>(hp) * g <= p_.pod_size) {
    if (hp == 1) return DirectA2a(scaled, w.bytes, g, protocol);
    return Transfer(w.bytes, pod_bw_) + p_.pod_lat + c.kernel_launch_latency_us;
  }
  return Transfer(w.bytes, cluster_bw_) + p_.cluster_lat + c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::SingleShotA2a(double m, int g, int protocol,
                                            const CommGroup& grp) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int ns = p_.node_size;
  const double per_peer = std::ceil(m / g);
  const int local = std::max(1, std::min(g, ns / TpStride(grp)));
  const int intra_peers = local - 1;
  const int inter_peers = std::max(0, g - local);
  double t_intra = 0, t_inter = 0;
  if (intra_peers > 0) {
    const Wire w = NodeWire(per_peer, protocol);
    t_intra = std::ceil(static_cast<double>(intra_peers) / std::max(1, ns - 1)) * w.latency_us +
              Transfer(w.bytes * intra_peers, IntraBw(local, true));
  }
  if (inter_peers > 0) {
    const int nodes = (g + ns - 1) / ns;
    const double pod = p_.pod_bw * c.p2p_bw_eff * RemoteContention(c.a2a_remote_contention, nodes);
    const double rounds =
        std::ceil(static_cast<double>(inter_peers) / std::max(1, p_.pod_size - 1));
    t_inter = rounds * p_.pod_lat +
              (p_.switch_topology ? Transfer(per_peer * inter_peers * local, pod * p_.nics_per_node)
                                  : Transfer(per_peer * inter_peers, pod));
  }
  return std::max(t_intra, t_inter) + c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::HierarchicalA2a(double m, int g, int protocol,
                                              const CommGroup& grp) const {
  if (g == 1 || m == 0) return 0;
  const CollectiveCalibration& c = p_.calibration;
  const int local = std::max(1, std::min(g, p_.node_size / TpStride(grp)));
  const int nodes = (g + local - 1) / local;
  if (nodes == 1) return SingleShotA2a(m, g, protocol, grp);
  const Wire w = NodeWire(m * (local - 1) / g, protocol);
  const double t_intra = w.latency_us + Transfer(w.bytes, IntraBw(local, true));
  const double pod = p_.pod_bw * c.p2p_bw_eff * RemoteContention(c.a2a_remote_contention, nodes);
  const double inter_bytes = m * (g - local) / g;
  const double t_inter = p_.switch_topology
                             ? p_.pod_lat + Transfer(inter_bytes * local, pod * p_.nics_per_node)
                             : p_.pod_lat * nodes + Transfer(inter_bytes, pod);
  return std::max(t_intra, t_inter) + c.kernel_launch_latency_us;
}

double PrimusCollectiveModel::AllToAllUs(double m, const CommGroup& grp,
                                         std::string* algorithm) const {
  const int g = grp.size;
  // Bug 3: Primus still charges the fixed overheads for a one-GPU "all-to-all".
  if (!faithful_ && (g <= 1 || m <= 0)) return 0;
  const CollectiveCalibration& c = p_.calibration;
  Candidate best;
  for (int p = 0; p < static_cast<int>(kProtocols.size()); ++p) {
    best.Offer(PlainA2a(m, g, p, grp), "direct", kProtocols[p]);
    best.Offer(SingleShotA2a(m, g, p, grp), "single-shot", kProtocols[p]);
    best.Offer(HierarchicalA2a(m, g, p, grp), "hierarchical", kProtocols[p]);
  }
  const int intra_peers = std::min(g - 1, p_.node_size - 1);
  const int inter_peers = std::max(0, g - p_.node_size);
  double t = best.us;
  if (intra_peers > 0) {
    t += c.a2a_intra_sync_overhead_us + c.a2a_intra_node_peer_lat_us * intra_peers;
  }
  t += c.a2a_peer_lat_us * inter_peers + c.a2a_rccl_overhead_us;
  if (algorithm) *algorithm = best.name;
  return t;
}

double PrimusCollectiveModel::SendRecvUs(double m, const CommGroup& grp) const {
  const CollectiveCalibration& c = p_.calibration;
  if (!faithful_ && m <= 0) return 0;
  const int ns = p_.node_size;
  bool inter_node;
  if (faithful_) {
    // Primus: adjacent stages sit on different nodes once one stage fills a node.
    inter_node = p_.pp > 1 && p_.num_nodes > 1 && (p_.num_nodes * ns) / p_.pp >= ns;
  } else {
    inter_node = grp.Nodes() > 1;
  }
  double bw, lat;
  if (inter_node) {
    bw = p_.pod_bw * c.p2p_bw_eff;
    lat = p_.pod_lat;
  } else {
    const int64_t domain = faithful_ ? static_cast<int64_t>(p_.hp) * p_.cp * p_.ep : 1;
    if (domain <= ns) {
      // A single peer link: on a mesh only one of the node_size-1 xGMI links carries it.
      bw = p_.node_bw * c.p2p_bw_eff;
      if (p_.mesh && ns > 2) bw /= (ns - 1);
      lat = p_.node_lat;
    } else if (domain <= p_.pod_size) {
      bw = pod_bw_;
      lat = p_.pod_lat;
    } else {
      bw = cluster_bw_;
      lat = p_.cluster_lat;
    }
  }
  return Transfer(m, bw) + lat + c.kernel_launch_latency_us;
}

CollectiveEstimate PrimusCollectiveModel::Estimate(Collective op, int64_t bytes,
                                                   const CommGroup& group) const {
  CollectiveEstimate out;
  std::string name;
  const double m = static_cast<double>(std::max<int64_t>(0, bytes));
  double us = 0;
  switch (op) {
    case Collective::kAllReduce: us = AllReduceUs(m, group, &name); break;
    case Collective::kAllGather: us = AllGatherUs(m, group, &name); break;
    case Collective::kReduceScatter: us = ReduceScatterUs(m, group, &name); break;
    case Collective::kAllToAll: us = AllToAllUs(m, group, &name); break;
    case Collective::kSendRecv:
      us = SendRecvUs(m, group);
      name = "p2p/simple";
      break;
  }
  out.seconds = us * 1e-6;
  const size_t slash = name.find('/');
  out.algorithm = slash == std::string::npos ? name : name.substr(0, slash);
  out.protocol = slash == std::string::npos ? "" : name.substr(slash + 1);
  out.bus_bandwidth =
      BusBandwidth(op, bytes, op == Collective::kSendRecv ? 2 : group.size, out.seconds);
  return out;
}

}  // namespace sextant
