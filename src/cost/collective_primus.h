// Primus's calibrated collective model as a preset. Formulas and constants are those of
// Primus's projection tool (AMD-AGI/Primus, primus/core/projection/module_profilers/
// collective_model.py and collective_args.py; summarised in research/primus-projection.md
// §3.8 and §4.1). Units inside follow Primus: bytes, GB/s, microseconds.
//
// With `reproduce_known_bugs` (preset "primus") three quirks are kept so Primus's own
// numbers come out unchanged; preset "primus-fixed" removes them:
//   1. the intra-node mesh derate uses the TP size for every collective, not the size of
//      the group actually communicating;
//   2. the inter-node direct all-to-all inflates the intra-node part by the protocol
//      packet overhead twice;
//   3. an all-to-all on one GPU costs the fixed 150 us overhead instead of nothing.
// Fixed mode also decides "intra- or inter-node" from the group's placement (CommGroup)
// instead of Primus's global TP/PP/CP/EP products.
#pragma once

#include <string>

#include "cost/collective_model.h"

namespace sextant {

struct PrimusCollectiveParams {
  // Topology (CollectiveArgs: node_size, pod_size, num_nodes, hp, pp, cp, ep).
  int node_size = 8;
  int pod_size = 8;  // GPUs per pod; Primus's default is the whole cluster
  int num_nodes = 1;
  int hp = 1;  // tensor-parallel size
  int pp = 1;
  int cp = 1;
  int ep = 1;
  // Raw link figures before `bw_eff` (GB/s per GPU intra-node, per NIC, across pods; us).
  double node_bw = 1024.0;
  double pod_bw = 50.0;
  double cluster_bw = 25.0;
  double node_lat = 0.45;
  double pod_lat = 2.0;
  double cluster_lat = 10.0;
  bool switch_topology = true;  // inter-node: all NICs of a node aggregate
  bool mesh = false;            // node_topology == "mesh"
  int nics_per_node = 8;
  CollectiveCalibration calibration;

  // Primus's defaults with no hardware_config (get_default_args): pod = whole cluster.
  static PrimusCollectiveParams Defaults(int num_nodes, int gpus_per_node = 8);
  // From a Sextant cluster and plan: the cluster's GPU, tiers and calibration constants.
  static PrimusCollectiveParams FromCluster(const ClusterSpec& cluster, const ParallelPlan& plan);
};

class PrimusCollectiveModel : public CollectiveModel {
 public:
  PrimusCollectiveModel(const PrimusCollectiveParams& params, bool reproduce_known_bugs);
  std::string Name() const override { return faithful_ ? "primus" : "primus-fixed"; }
  CollectiveEstimate Estimate(Collective op, int64_t bytes, const CommGroup& group) const override;

  // The individual Primus selectors, in microseconds, for tests and documentation.
  // `group` only matters in fixed mode (bug 1 and placement); faithful mode ignores it.
  double AllReduceUs(double bytes, const CommGroup& group, std::string* algorithm = nullptr) const;
  double AllGatherUs(double bytes, const CommGroup& group, std::string* algorithm = nullptr) const;
  double ReduceScatterUs(double bytes, const CommGroup& group,
                         std::string* algorithm = nullptr) const;
  double AllToAllUs(double bytes, const CommGroup& group, std::string* algorithm = nullptr) const;
  double SendRecvUs(double bytes, const CommGroup& group) const;
  // Primus's tiered ("direct") all-to-all alone, for one protocol (0 simple, 1 ll, 2 ll64,
  // 3 ll128), without the fixed all-to-all overheads.
  double TieredAllToAllUs(double bytes, const CommGroup& group, int protocol) const {
    return PlainA2a(bytes, group.size, protocol, group);
  }

 private:
  struct Wire;  // protocol-adjusted latency and bytes
  Wire NodeWire(double bytes, int protocol) const;
  double IntraBw(int group_ranks, bool all_to_all) const;
  int DerateGroup(const CommGroup& group) const;  // whose size the mesh derate uses
  int TpStride(const CommGroup& group) const;     // hp in the all-to-all placement formulas

  double BruckRs(double m, int g, int p, const CommGroup& grp, bool reduce) const;
  double RingUs(double m, int g, int p, const CommGroup& grp, int passes, bool reduce) const;
  double HypercubeAr(double m, int g, int p, const CommGroup& grp) const;
  double SingleShot(double m, int g, int p, const CommGroup& grp, bool reduce) const;
  double HierarchicalAr(double m, int g, int p, const CommGroup& grp) const;
  double DirectA2a(double raw, double wire, int g, int p) const;
  double SingleShotA2a(double m, int g, int p, const CommGroup& grp) const;
  double HierarchicalA2a(double m, int g, int p, const CommGroup& grp) const;
  double PlainA2a(double m, int g, int p, const CommGroup& grp) const;

  PrimusCollectiveParams p_;
  bool faithful_;
  // Effective bandwidths after bw_eff (GB/s) and the raw ones P2P paths use.
  double node_bw_ = 0, pod_bw_ = 0, cluster_bw_ = 0;
};

}  // namespace sextant
