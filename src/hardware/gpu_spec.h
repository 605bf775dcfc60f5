// Accelerator and cluster descriptions: the vendor's published figures, plus the
// achievable-fraction knobs our cost models use. Bandwidths in bytes/s, times in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/dtype.h"
#include "util/units.h"

namespace sextant {

enum class Vendor { kAMD, kNVIDIA };
enum class FabricKind { kMesh /* xGMI all-to-all links */, kSwitch /* NVSwitch */ };

std::string_view VendorName(Vendor v);      // "AMD", "NVIDIA"
std::string_view FabricName(FabricKind f);  // "mesh", "switch"

struct GpuSpec {
  std::string name;  // library key, e.g. "MI300X", "H100"
  Vendor vendor = Vendor::kAMD;
  std::string arch;                  // "gfx942", "sm_90", ...
  std::vector<std::string> aliases;  // other spellings FindGpu accepts ("gfx942", "h100_sxm")
  // Lower-case pieces of the name a profiler trace gives the device (deviceProperties "name",
  // e.g. "nvidia h100 80gb hbm3", "amd instinct mi300x"); FindGpuForDevice picks the longest.
  std::vector<std::string> device_names;
  std::string description;  // "AMD Instinct MI300X OAM"
  std::string source;       // where the figures come from (datasheet / white paper)
  int64_t hbm_bytes = 0;
  double hbm_bandwidth = 0;  // bytes/s
  int compute_units = 0;     // CUs (AMD) or SMs (NVIDIA)
  double max_clock_mhz = 0;
  int64_t l2_bytes = 0;                // whole device (AMD: sum over XCDs)
  int64_t last_level_cache_bytes = 0;  // AMD Infinity Cache / MALL; 0 if none
  // Peak dense (no sparsity) throughput per dtype, TFLOP/s. Missing dtype = unsupported.
  std::map<DType, double> peak_dense_tflops;
  // Max-achievable dense matrix TFLOP/s per dtype: what the vendor measured for its best GEMM
  // shape at the power limit (AMD's "max-achievable FLOPs", MAF). Empty where none is
  // published; the efficiency table then uses its vendor default (cost/efficiency_table.cc).
  std::map<DType, double> max_achievable_tflops;
  std::string max_achievable_source;
  // Non-matrix (vector ALU) FP32 TFLOP/s, for element-wise rooflines; 0 = the FP32 entry above
  // (the same unit runs both on NVIDIA and CDNA 3/4; CDNA 2 has a faster FP32 matrix path).
  double vector_fp32_tflops = 0;
  double tdp_watts = 0;

  // Intra-node fabric, per GPU, one direction.
  FabricKind fabric = FabricKind::kSwitch;
  double intra_node_bandwidth = 0;  // bytes/s aggregate per GPU
  int intra_node_links = 0;         // xGMI/NVLink links per GPU
  double intra_node_latency = 0;    // seconds
  int gpus_per_node = 8;            // GPUs sharing the fabric (NVLink domain for NVL72)

  // Scale-out network, per GPU (one NIC per GPU is assumed unless stated).
  double nic_bandwidth = 0;       // bytes/s
  double inter_node_latency = 0;  // seconds

  // Throws UserError if the GPU has no peak for this dtype.
  double PeakTflops(DType dtype) const;
  bool Supports(DType dtype) const { return peak_dense_tflops.count(dtype) > 0; }
  double VectorFp32Tflops() const;
  double HbmTbps() const { return hbm_bandwidth / 1e12; }
  // max_achievable_tflops / PeakTflops for this dtype (at most 1), or 0 when none is known.
  double MaxAchievableFraction(DType dtype) const;
  // Sets the clock and scales every compute peak, max-achievable figures included, by new/old
  // clock (memory and links are unaffected). Throws UserError for a non-positive clock.
  void SetClockMhz(double mhz);
  // Bandwidth of one intra-node link, one direction (aggregate / links).
  double LinkBandwidth() const {
    return intra_node_links > 0 ? intra_node_bandwidth / intra_node_links : intra_node_bandwidth;
  }
};

// Primus's calibrated collective constants: every `hardware_config:` key that is not a
// bandwidth, latency or topology (those live in GpuSpec / ClusterSpec). Defaults are
// Primus's CollectiveArgs defaults (primus/core/projection/module_profilers/collective_args.py).
// Only the "primus" collective preset reads them.
struct CollectiveCalibration {
  double bw_eff = 0.70;      // achievable fraction of node/pod/cluster bandwidth
  double p2p_bw_eff = 0.80;  // achievable fraction for send/recv and all-to-all NIC streams
  double hbm_latency_us = 0.09;
  double write_latency_us = 0.28;
  double write_resp_us = 0.09;
  double kernel_launch_latency_us = 2.8;
  double vector_flops = 3.2e12;     // FLOP/s used for the reduction arithmetic
  double rccl_overhead_us = 200.0;  // fixed cost per all-reduce
  double ar_overlap_factor = 0.9;   // intra/inter-node phase overlap of hierarchical collectives
  int64_t ar_warmup_chunk_bytes = 32 * kMiB;
  double nic_rdma_setup_us = 260.0;
  int64_t nic_warmup_bytes = 32 * kMiB;
  double a2a_peer_lat_us = 0.45;
  double a2a_intra_sync_overhead_us = 50.0;
  double a2a_intra_node_peer_lat_us = 2.5;
  double a2a_mesh_contention = 0.12;
  double a2a_rccl_overhead_us = 150.0;
  double a2a_remote_contention = 0.04;
  // Parallel sizes a Primus hardware_config may pin (`hp`, `pp`, `cp`, `ep`); 0 = from the plan.
  int hp = 0;
  int pp = 0;
  int cp = 0;
  int ep = 0;
};

// A cluster of identical nodes. Scale-out topology tiers: node -> pod -> cluster.
struct ClusterSpec {
  GpuSpec gpu;
  int gpus_per_node = 8;
  int num_nodes = 1;
  int nodes_per_pod = 0;     // 0 = one flat tier beyond the node
  double pod_bandwidth = 0;  // bytes/s per GPU across pods (0 = same as nic_bandwidth)
  double pod_latency = 0;    // seconds (0 = same as inter_node_latency)
  int nics_per_node = 0;     // 0 = one NIC per GPU
  // Scale-out through a switch: a node's NICs carry traffic in parallel (rail-optimised
  // fabric). false = Primus's `switch_topology: false` (each GPU limited to its own NIC).
  bool scale_out_switch = true;
  int gpus_per_tray = 0;                   // informational (Primus's `gpus_per_tray`); 0 = unknown
  std::string collective_preset = "auto";  // "auto", "nccl", "rccl", "primus", "primus-fixed"
  CollectiveCalibration calibration;

  int WorldSize() const { return gpus_per_node * num_nodes; }
  int NicsPerNode() const { return nics_per_node > 0 ? nics_per_node : gpus_per_node; }
  double PodBandwidth() const { return pod_bandwidth > 0 ? pod_bandwidth : gpu.nic_bandwidth; }
  double PodLatency() const { return pod_latency > 0 ? pod_latency : gpu.inter_node_latency; }
};

// One node (or `num_nodes`) of this GPU with its standard node size.
ClusterSpec MakeCluster(const GpuSpec& gpu, int num_nodes = 1);

}  // namespace sextant
