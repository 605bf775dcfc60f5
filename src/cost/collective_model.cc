#include "cost/collective_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "cost/collective_analytical.h"
#include "cost/collective_primus.h"
#include "util/error.h"

namespace sextant {

std::string_view CollectiveName(Collective op) {
  switch (op) {
    case Collective::kAllReduce: return "all-reduce";
    case Collective::kReduceScatter: return "reduce-scatter";
    case Collective::kAllGather: return "all-gather";
    case Collective::kAllToAll: return "all-to-all";
    case Collective::kSendRecv: return "send/recv";
  }
  return "?";
}

double BusBandwidth(Collective op, int64_t bytes, int group_size, double seconds) {
  if (seconds <= 0 || group_size < 2 || bytes <= 0) return 0;
  const double algbw = static_cast<double>(bytes) / seconds;
  const double n = group_size;
  switch (op) {
    case Collective::kAllReduce: return algbw * 2 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return algbw * (n - 1) / n;
    case Collective::kSendRecv: return algbw;
  }
  return 0;
}

const std::vector<std::string>& CollectivePresetNames() {
  static const std::vector<std::string> names = {"auto", "nccl", "rccl", "primus", "primus-fixed"};
  return names;
}

std::unique_ptr<CollectiveModel> MakeCollectiveModel(const ClusterSpec& cluster,
                                                     const std::string& preset) {
  return MakeCollectiveModel(cluster, preset, ParallelPlan{});
}

std::unique_ptr<CollectiveModel> MakeCollectiveModel(const ClusterSpec& cluster,
                                                     const std::string& preset,
                                                     const ParallelPlan& plan) {
  std::string name = preset.empty() ? "auto" : preset;
  // "auto" defers to the cluster's own choice (a hardware config may name one), then to
  // the GPU's vendor library.
  if (name == "auto" && !cluster.collective_preset.empty()) name = cluster.collective_preset;
  if (name == "auto") name = cluster.gpu.vendor == Vendor::kNVIDIA ? "nccl" : "rccl";
  if (name == "nccl") {
    return std::make_unique<AnalyticalCollectiveModel>(cluster, AnalyticalPreset::Nccl());
  }
  if (name == "rccl") {
    return std::make_unique<AnalyticalCollectiveModel>(cluster, AnalyticalPreset::Rccl());
  }
  if (name == "primus" || name == "primus-fixed") {
    return std::make_unique<PrimusCollectiveModel>(
        PrimusCollectiveParams::FromCluster(cluster, plan), name == "primus");
  }
  ThrowUserError(fmt::format("unknown collective preset '{}' (choose one of: {})", preset,
                             fmt::join(CollectivePresetNames(), ", ")));
}

// Megatron orders ranks TP fastest, then CP, then DP, then PP (dense part) and ETP, EP,
// expert-DP, PP (experts) -- megatron/core/parallel_state.py, RankGenerator with order
// "tp-cp-ep-dp-pp". A group of `size` ranks spaced `stride` apart puts
// max(1, min(size, gpus_per_node / stride)) of its members on one node.
CommGroup GroupFor(ParallelDim dim, const ParallelPlan& plan, int gpus_per_node) {
  const int tp = std::max(1, plan.tp);
  const int cp = std::max(1, plan.cp);
  const int dp = std::max(1, plan.dp);
  const int pp = std::max(1, plan.pp);
  const int ep = std::max(1, plan.ep);
  const int etp = std::max(1, plan.etp);
  int size = 1;
  int64_t stride = 1;
  switch (dim) {
    case ParallelDim::kTP:
      size = tp;
      stride = 1;
      break;
    case ParallelDim::kCP:
      size = cp;
      stride = tp;
      break;
    case ParallelDim::kDP:
      size = dp;
      stride = int64_t{tp} * cp;
      break;
    case ParallelDim::kPP:
      size = pp;
      stride = int64_t{tp} * cp * dp;
      break;
    case ParallelDim::kETP:
      size = etp;
      stride = 1;
      break;
    case ParallelDim::kEP:
      size = ep;
      stride = etp;
      break;
    case ParallelDim::kExpertDP:
      size = plan.ExpertDataParallel();
      stride = int64_t{etp} * ep;
      break;
  }
  CommGroup group;
  group.size = std::max(1, size);
  const int64_t gpus = std::max(1, gpus_per_node);
  const int64_t per_node = stride >= gpus ? 1 : gpus / stride;
  group.ranks_per_node =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(group.size, per_node)));
  return group;
}

}  // namespace sextant
