// Accelerator and cluster descriptions: the vendor's published figures, plus the
// achievable-fraction knobs our cost models use. Bandwidths in bytes/s, times in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "util/dtype.h"

namespace sextant {

enum class Vendor { kAMD, kNVIDIA };
enum class FabricKind { kMesh /* xGMI all-to-all links */, kSwitch /* NVSwitch */ };

struct GpuSpec {
  std::string name;  // library key, e.g. "MI300X", "H100"
  Vendor vendor = Vendor::kAMD;
  std::string arch;  // "gfx942", "sm_90", ...
  int64_t hbm_bytes = 0;
  double hbm_bandwidth = 0;  // bytes/s
  int compute_units = 0;     // CUs (AMD) or SMs (NVIDIA)
  double max_clock_mhz = 0;
  int64_t l2_bytes = 0;
  int64_t last_level_cache_bytes = 0;  // AMD Infinity Cache / MALL; 0 if none
  // Peak dense (no sparsity) throughput per dtype, TFLOP/s. Missing dtype = unsupported.
  std::map<DType, double> peak_dense_tflops;
  double tdp_watts = 0;

  // Intra-node fabric, per GPU, one direction.
  FabricKind fabric = FabricKind::kSwitch;
  double intra_node_bandwidth = 0;  // bytes/s aggregate per GPU
  int intra_node_links = 0;         // xGMI/NVLink links per GPU
  double intra_node_latency = 0;    // seconds
  int gpus_per_node = 8;

  // Scale-out network, per GPU (one NIC per GPU is assumed unless stated).
  double nic_bandwidth = 0;       // bytes/s
  double inter_node_latency = 0;  // seconds

  // Throws UserError if the GPU has no peak for this dtype.
  double PeakTflops(DType dtype) const;
  bool Supports(DType dtype) const { return peak_dense_tflops.count(dtype) > 0; }
};

// A cluster of identical nodes. Scale-out topology tiers: node -> pod -> cluster.
struct ClusterSpec {
  GpuSpec gpu;
  int gpus_per_node = 8;
  int num_nodes = 1;
  int nodes_per_pod = 0;        // 0 = one flat tier beyond the node
  double pod_bandwidth = 0;     // bytes/s per GPU across pods (0 = same as nic_bandwidth)
  double pod_latency = 0;       // seconds
  int WorldSize() const { return gpus_per_node * num_nodes; }
};

}  // namespace sextant
