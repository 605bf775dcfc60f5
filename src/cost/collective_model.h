// Time of one collective operation on a group of GPUs. Implementations: the analytical
// model with per-vendor presets (NCCL over NVLink/NVSwitch + InfiniBand; RCCL over xGMI +
// RoCE) and Primus's calibrated constants as a preset of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/gpu_spec.h"
#include "parallel/parallel_plan.h"

namespace sextant {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kSendRecv };

std::string_view CollectiveName(Collective op);  // "all-reduce", "all-gather", ...

// A process group as it sits on the cluster. `bytes` passed to Time() is the per-rank
// buffer size as NCCL counts it (all-reduce: the whole buffer; all-gather: the output;
// reduce-scatter: the input; all-to-all: what one rank sends in total; send/recv: message).
struct CommGroup {
  int size = 1;            // ranks in the group
  int ranks_per_node = 1;  // group members sharing one node (= size when intra-node)
  int Nodes() const {
    return ranks_per_node > 0 ? (size + ranks_per_node - 1) / ranks_per_node : 1;
  }
};

struct CollectiveEstimate {
  double seconds = 0;
  std::string algorithm;  // "ring", "tree", "hierarchical", "one-shot", "direct", ...
  std::string protocol;   // "LL", "LL128", "Simple" (NCCL's names) or Primus's "simple", "ll", ...
  double bus_bandwidth = 0;  // bytes/s achieved, NCCL's busbw convention
};

class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  virtual std::string Name() const = 0;
  virtual CollectiveEstimate Estimate(Collective op, int64_t bytes,
                                      const CommGroup& group) const = 0;
  double Time(Collective op, int64_t bytes, const CommGroup& group) const {
    return Estimate(op, bytes, group).seconds;
  }
};

// NCCL's bus-bandwidth convention (nccl-tests doc/PERFORMANCE.md): algbw = bytes / time,
// busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather, reduce-scatter and
// all-to-all, x 1 for send/recv. Returns 0 when seconds <= 0 or n < 2.
double BusBandwidth(Collective op, int64_t bytes, int group_size, double seconds);

// Presets: "auto" (by vendor: nccl for NVIDIA, rccl for AMD), "nccl", "rccl", "primus"
// (Primus's calibrated constants and formulas, known bugs included, so its numbers are
// reproduced) and "primus-fixed" (same constants, bugs fixed). Throws UserError for an
// unknown preset name. `plan` matters only to the Primus presets, whose formulas read the
// TP/PP/CP/EP sizes (the cluster's `calibration.hp/pp/cp/ep` pins override it).
std::unique_ptr<CollectiveModel> MakeCollectiveModel(const ClusterSpec& cluster,
                                                     const std::string& preset = "auto");
std::unique_ptr<CollectiveModel> MakeCollectiveModel(const ClusterSpec& cluster,
                                                     const std::string& preset,
                                                     const ParallelPlan& plan);
const std::vector<std::string>& CollectivePresetNames();

// Where each parallel group lands with Megatron's rank order (TP innermost, then CP, EP/DP,
// PP outermost) on nodes of `gpus_per_node` GPUs.
enum class ParallelDim { kTP, kCP, kEP, kETP, kDP, kExpertDP, kPP };
CommGroup GroupFor(ParallelDim dim, const ParallelPlan& plan, int gpus_per_node);

}  // namespace sextant
