// The built-in GPU library. Every figure is a vendor-published number; the source of each
// entry is named next to it and repeated in docs/hardware.md. Peaks are dense (no 2:4
// sparsity). Memory sizes follow the datasheet's unit: AMD and the 80 GB NVIDIA parts ship
// whole binary-GiB stacks, H200/B200/GB200 are quoted as usable decimal GB.
#include "hardware/hardware_library.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "util/close_matches.h"
#include "util/units.h"

namespace sextant {
namespace {

// A 400 Gb/s NIC (ConnectX-7 NDR / Pollara 400 / Thor2) moves 50 GB/s per direction.
constexpr double k400GbitNic = 400e9 / 8;
// NCCL's tuning model (src/graph/tuning.cc, hwLat, LL protocol ring step): 0.47 us per
// NVLink hop and 2.7 us per network hop; these are the per-step latencies NCCL itself assumes.
constexpr double kNvlinkHopLatency = 0.47 * kUs;
constexpr double kNetHopLatency = 2.7 * kUs;
// Primus's calibrated xGMI and inter-node latencies (examples/hardware_configs/mi3*.yaml:
// node_lat 0.45 us, pod_lat 2.0 us), measured on MI300-class nodes.
constexpr double kXgmiHopLatency = 0.45 * kUs;
constexpr double kRoceHopLatency = 2.0 * kUs;

// AMD's max-achievable FLOPs (MAF): hipBLASLt on its best shape at the power limit, measured
// by AMD and published in "Measuring Max-Achievable FLOPs - Part 2" (rocm.blogs.amd.com,
// 2025), as TraceLens carries them (TraceLens/Agent/Analysis/utils/arch/MI3*.json). AMD has
// published no MAF for CDNA 4 (MI350X, MI355X).
constexpr const char* kAmdMafSource =
    "AMD, Measuring Max-Achievable FLOPs Part 2 (rocm.blogs.amd.com), via TraceLens arch files";

GpuSpec Mi300x() {
  GpuSpec g;
  g.name = "MI300X";
  g.vendor = Vendor::kAMD;
  g.arch = "gfx942";
  g.aliases = {"mi300", "gfx942", "mi300x_oam"};
  g.device_names = {"mi300x", "mi300"};
  g.description = "AMD Instinct MI300X OAM (CDNA 3)";
  g.source = "AMD Instinct MI300X data sheet; AMD CDNA 3 architecture white paper (2023)";
  g.hbm_bytes = 192 * kGiB;  // 8 HBM3 stacks x 24 GiB
  g.hbm_bandwidth = 5.3 * kTBps;
  g.compute_units = 304;
  g.max_clock_mhz = 2100;
  g.l2_bytes = 8 * 4 * kMiB;              // 4 MB L2 per XCD, 8 XCDs
  g.last_level_cache_bytes = 256 * kMiB;  // AMD Infinity Cache
  g.peak_dense_tflops = {{DType::kFP32, 163.4},
                         {DType::kTF32, 653.7},
                         {DType::kBF16, 1307.4},
                         {DType::kFP16, 1307.4},
                         {DType::kFP8, 2614.9}};
  g.tdp_watts = 750;
  g.max_achievable_tflops = {{DType::kBF16, 708}, {DType::kFP16, 654}, {DType::kFP8, 1273}};
  g.max_achievable_source = kAmdMafSource;
  // 7 peer Infinity Fabric (xGMI) links x 64 GB/s per direction (128 GB/s bidirectional).
  g.fabric = FabricKind::kMesh;
  g.intra_node_links = 7;
  g.intra_node_bandwidth = 7 * 64 * kGBps;
  g.intra_node_latency = kXgmiHopLatency;
  g.gpus_per_node = 8;
  g.nic_bandwidth = k400GbitNic;
  g.inter_node_latency = kRoceHopLatency;
  return g;
}

GpuSpec Mi325x() {
  GpuSpec g = Mi300x();  // same CDNA 3 die and clocks; more and faster HBM3E
  g.name = "MI325X";
  g.aliases = {"mi325x_oam"};
  g.device_names = {"mi325"};
  g.description = "AMD Instinct MI325X OAM (CDNA 3)";
  g.source = "AMD Instinct MI325X data sheet (2024)";
  g.hbm_bytes = 256 * kGiB;  // 8 HBM3E stacks x 32 GiB
  g.hbm_bandwidth = 6.0 * kTBps;
  g.tdp_watts = 1000;
  // The same die at a higher power limit holds a higher clock under GEMM load.
  g.max_achievable_tflops = {{DType::kBF16, 843}, {DType::kFP16, 794}, {DType::kFP8, 1519}};
  return g;
}

GpuSpec Mi350x() {
  GpuSpec g;
  g.name = "MI350X";
  g.vendor = Vendor::kAMD;
  g.arch = "gfx950";
  g.aliases = {"mi350x_oam"};
  g.device_names = {"mi350"};
  g.description = "AMD Instinct MI350X OAM (CDNA 4, air-cooled)";
  g.source = "AMD Instinct MI350X data sheet; AMD CDNA 4 architecture white paper (2025)";
  g.hbm_bytes = 288 * kGiB;  // 8 HBM3E stacks x 36 GiB
  g.hbm_bandwidth = 8.0 * kTBps;
  g.compute_units = 256;
  g.max_clock_mhz = 2200;
  g.l2_bytes = 8 * 4 * kMiB;
  g.last_level_cache_bytes = 256 * kMiB;
  // CDNA 4 has no TF32 matrix path; MX formats run at the FP8 (MXFP8) and FP4 (MXFP4) rates.
  g.peak_dense_tflops = {{DType::kFP32, 144.2}, {DType::kBF16, 2306.9},  {DType::kFP16, 2306.9},
                         {DType::kFP8, 4613.7}, {DType::kMXFP8, 4613.7}, {DType::kFP4, 9227.5}};
  g.tdp_watts = 1000;
  // 7 xGMI links x 76.8 GB/s per direction (1075 GB/s aggregate bidirectional).
  g.fabric = FabricKind::kMesh;
  g.intra_node_links = 7;
  g.intra_node_bandwidth = 7 * 76.8 * kGBps;
  g.intra_node_latency = kXgmiHopLatency;
  g.gpus_per_node = 8;
  g.nic_bandwidth = k400GbitNic;
  g.inter_node_latency = kRoceHopLatency;
  return g;
}

GpuSpec Mi355x() {
  GpuSpec g = Mi350x();  // same die, liquid-cooled, higher clock and power
  g.name = "MI355X";
  g.aliases = {"mi355", "gfx950", "mi355x_oam"};  // "MI355": Primus's mlperf directories
  g.device_names = {"mi355"};
  g.description = "AMD Instinct MI355X OAM (CDNA 4, liquid-cooled)";
  g.source = "AMD Instinct MI355X data sheet; AMD CDNA 4 architecture white paper (2025)";
  g.max_clock_mhz = 2400;
  g.peak_dense_tflops = {{DType::kFP32, 157.3}, {DType::kBF16, 2516.6},  {DType::kFP16, 2516.6},
                         {DType::kFP8, 5033.2}, {DType::kMXFP8, 5033.2}, {DType::kFP4, 10066.3}};
  g.tdp_watts = 1400;
  return g;
}

GpuSpec A100() {
  GpuSpec g;
  g.name = "A100";
  g.vendor = Vendor::kNVIDIA;
  g.arch = "sm_80";
  g.aliases = {"a100_80gb", "a100_sxm", "a100_sxm4_80gb", "sm_80"};
  g.device_names = {"a100-sxm4-80gb", "a100 80gb", "a100-80gb"};
  g.description = "NVIDIA A100 80GB SXM4 (Ampere)";
  g.source =
      "NVIDIA A100 Tensor Core GPU data sheet (80GB SXM column); NVIDIA Ampere GA100 "
      "architecture white paper";
  g.hbm_bytes = 80 * kGiB;
  g.hbm_bandwidth = 2.039 * kTBps;
  g.compute_units = 108;
  g.max_clock_mhz = 1410;
  g.l2_bytes = 40 * kMiB;
  g.peak_dense_tflops = {
      {DType::kFP32, 19.5}, {DType::kTF32, 156}, {DType::kBF16, 312}, {DType::kFP16, 312}};
  g.tdp_watts = 400;
  // NVLink 3: 12 links x 25 GB/s per direction (600 GB/s bidirectional) through NVSwitch.
  g.fabric = FabricKind::kSwitch;
  g.intra_node_links = 12;
  g.intra_node_bandwidth = 12 * 25 * kGBps;
  g.intra_node_latency = kNvlinkHopLatency;
  g.gpus_per_node = 8;
  g.nic_bandwidth = 200e9 / 8;  // DGX A100: one 200 Gb/s HDR InfiniBand NIC per GPU
  g.inter_node_latency = kNetHopLatency;
  return g;
}

GpuSpec H100() {
  GpuSpec g;
  g.name = "H100";
  g.vendor = Vendor::kNVIDIA;
  g.arch = "sm_90";
  g.aliases = {"h100_sxm", "h100_sxm5", "h100_sxm5_80gb", "h100_80gb", "sm_90"};
  g.device_names = {"h100"};
  g.description = "NVIDIA H100 SXM5 80GB (Hopper)";
  g.source =
      "NVIDIA H100 Tensor Core GPU data sheet (SXM column); NVIDIA H100 architecture "
      "white paper; HBM capacity: nvidia-smi memory.total";
  // NVIDIA GPUs: the memory the driver reports (nvidia-smi memory.total), what a job can
  // address. The data sheets' "80GB" / "141GB" / "180GB" are rounded and in different units:
  // an H200 reports 143771 MiB (140.4 GiB), not 141e9 bytes.
  g.hbm_bytes = 81559 * kMiB;  // nvidia-smi on "NVIDIA H100 80GB HBM3" (and H800)
  g.hbm_bandwidth = 3.35 * kTBps;
  g.compute_units = 132;
  // The clock NVIDIA's peak rates are quoted at (132 SMs x 4096 dense BF16 FLOP/clk x
  // 1830 MHz = 989.4 TFLOP/s); the SXM5 part may boost to 1980 MHz.
  g.max_clock_mhz = 1830;
  g.l2_bytes = 50 * kMiB;
  g.peak_dense_tflops = {{DType::kFP32, 66.9},
                         {DType::kTF32, 494.7},
                         {DType::kBF16, 989.4},
                         {DType::kFP16, 989.4},
                         {DType::kFP8, 1978.9}};
  g.tdp_watts = 700;
  // NVLink 4: 18 links x 25 GB/s per direction (900 GB/s bidirectional) through NVSwitch.
  g.fabric = FabricKind::kSwitch;
  g.intra_node_links = 18;
  g.intra_node_bandwidth = 18 * 25 * kGBps;
  g.intra_node_latency = kNvlinkHopLatency;
  g.gpus_per_node = 8;
  g.nic_bandwidth = k400GbitNic;  // DGX H100: one 400 Gb/s NDR ConnectX-7 per GPU
  g.inter_node_latency = kNetHopLatency;
  return g;
}

GpuSpec H200() {
  GpuSpec g = H100();  // same GH100 die and clocks; 141 GB HBM3e
  g.name = "H200";
  g.aliases = {"h200_sxm", "h200_141gb"};
  g.device_names = {"h200"};
  g.description = "NVIDIA H200 SXM 141GB (Hopper)";
  g.source =
      "NVIDIA H200 Tensor Core GPU data sheet (SXM column); HBM capacity: nvidia-smi memory.total";
  g.hbm_bytes = 143771 * kMiB;  // nvidia-smi on "NVIDIA H200"
  g.hbm_bandwidth = 4.8 * kTBps;
  return g;
}

GpuSpec B200() {
  GpuSpec g;
  g.name = "B200";
  g.vendor = Vendor::kNVIDIA;
  g.arch = "sm_100";
  g.aliases = {"b200_sxm", "hgx_b200", "sm_100"};
  g.device_names = {"b200"};
  g.description = "NVIDIA B200 in HGX/DGX B200 (Blackwell)";
  g.source =
      "NVIDIA HGX B200 / DGX B200 data sheets (per-GPU = 8-GPU system figure / 8, "
      "dense = half the sparse figure); NVIDIA Blackwell architecture technical brief; HBM "
      "capacity: nvidia-smi memory.total";
  g.hbm_bytes = 183359 * kMiB;  // nvidia-smi on "NVIDIA B200" (data sheet: 180 GB)
  g.hbm_bandwidth = 8.0 * kTBps;
  g.compute_units = 148;
  g.max_clock_mhz = 1965;  // boost clock; NVIDIA does not state the clock its peaks assume
  g.l2_bytes = 126 * kMiB;
  g.peak_dense_tflops = {{DType::kFP32, 75},   {DType::kTF32, 1125}, {DType::kBF16, 2250},
                         {DType::kFP16, 2250}, {DType::kFP8, 4500},  {DType::kMXFP8, 4500},
                         {DType::kFP4, 9000}};
  g.tdp_watts = 1000;
  // NVLink 5: 18 links x 50 GB/s per direction (1.8 TB/s bidirectional) through NVSwitch.
  g.fabric = FabricKind::kSwitch;
  g.intra_node_links = 18;
  g.intra_node_bandwidth = 18 * 50 * kGBps;
  g.intra_node_latency = kNvlinkHopLatency;
  g.gpus_per_node = 8;
  g.nic_bandwidth = k400GbitNic;  // DGX B200: 8 x 400 Gb/s ConnectX-7
  g.inter_node_latency = kNetHopLatency;
  return g;
}

GpuSpec GB200() {
  GpuSpec g = B200();
  g.name = "GB200";
  g.aliases = {"gb200_nvl72", "gb200nvl72"};
  g.device_names = {"gb200"};
  g.description = "NVIDIA GB200 NVL72, per Blackwell GPU (72-GPU NVLink domain)";
  g.source =
      "NVIDIA GB200 NVL72 data sheet (rack figure / 72 GPUs, dense = half the sparse "
      "figure); HBM capacity: nvidia-smi memory.total";
  g.hbm_bytes = 189471 * kMiB;    // nvidia-smi on "NVIDIA GB200" (13.4 TB per 72 GPUs)
  g.hbm_bandwidth = 8.0 * kTBps;  // 576 TB/s per 72 GPUs
  g.peak_dense_tflops = {{DType::kFP32, 80},   {DType::kTF32, 1250}, {DType::kBF16, 2500},
                         {DType::kFP16, 2500}, {DType::kFP8, 5000},  {DType::kMXFP8, 5000},
                         {DType::kFP4, 10000}};
  g.tdp_watts = 1200;
  // The NVLink switch trays join all 72 GPUs of the rack into one fabric domain, so the
  // collective model treats the rack as the "node".
  g.gpus_per_node = 72;
  return g;
}

// Blackwell Ultra in HGX/DGX B300: the B200's dense BF16/FP8 rates, 1.5x its FP4, 288 GB of
// 12-high HBM3e and one 800 Gb/s ConnectX-8 per GPU.
GpuSpec B300() {
  GpuSpec g = B200();
  g.name = "B300";
  g.arch = "sm_103";
  g.aliases = {"b300_sxm", "hgx_b300", "dgx_b300", "sm_103"};
  g.device_names = {"b300"};
  g.description = "NVIDIA B300 in HGX/DGX B300 (Blackwell Ultra)";
  g.source =
      "NVIDIA HGX B300 / DGX B300 data sheets (per-GPU = 8-GPU system figure / 8, dense = "
      "half the sparse figure; FP4 dense 108 PFLOPS per system); HBM capacity: nvidia-smi "
      "memory.total";
  g.hbm_bytes = 275040 * kMiB;  // nvidia-smi on "NVIDIA B300 SXM6 AC" (2.3 TB per 8 GPUs)
  g.peak_dense_tflops = {{DType::kFP32, 75},   {DType::kTF32, 1125}, {DType::kBF16, 2250},
                         {DType::kFP16, 2250}, {DType::kFP8, 4500},  {DType::kMXFP8, 4500},
                         {DType::kFP4, 13500}};
  g.tdp_watts =
      1400;  // up to 1.4 kW per Blackwell Ultra GPU (NVIDIA GTC 2025 Blackwell Ultra brief)
  g.nic_bandwidth = 2 * k400GbitNic;  // 1.6 TB/s of networking per 8 GPUs (ConnectX-8)
  return g;
}

// Blackwell Ultra in the GB300 NVL72 rack: the GB200's 72-GPU NVLink domain, 288 GB per GPU,
// rack peaks / 72.
GpuSpec GB300() {
  GpuSpec g = B300();
  g.name = "GB300";
  g.aliases = {"gb300_nvl72", "gb300nvl72"};
  g.device_names = {"gb300"};
  g.description = "NVIDIA GB300 NVL72, per Blackwell Ultra GPU (72-GPU NVLink domain)";
  g.source =
      "NVIDIA GB300 NVL72 data sheet (rack figure / 72 GPUs: 360 PFLOPS dense FP8, "
      "1080 PFLOPS dense FP4, 576 TB/s HBM3e, dense = half the sparse figure); HBM capacity: "
      "nvidia-smi memory.total";
  g.peak_dense_tflops = {{DType::kFP32, 80},   {DType::kTF32, 1250}, {DType::kBF16, 2500},
                         {DType::kFP16, 2500}, {DType::kFP8, 5000},  {DType::kMXFP8, 5000},
                         {DType::kFP4, 15000}};
  g.hbm_bytes = 284208 * kMiB;  // nvidia-smi on "NVIDIA GB300" (20.7 TB per 72 GPUs)
  g.gpus_per_node = 72;
  return g;
}

// H800 SXM: the export variant of the H100 SXM with the same compute and HBM, and NVLink cut to
// 8 links (400 GB/s bidirectional); DeepSeek's clusters pair each with a 400 Gb/s InfiniBand NIC
// (DeepSeek-V3 technical report, arXiv 2412.19437, §3.1).
GpuSpec H800() {
  GpuSpec g = H100();
  g.name = "H800";
  g.aliases = {"h800_sxm", "h800_80gb"};
  g.device_names = {"h800"};
  g.description = "NVIDIA H800 SXM5 80GB (Hopper, 8 NVLink links)";
  g.source =
      "NVIDIA H800 product brief (SXM: H100 SXM compute, 400 GB/s NVLink); DeepSeek-V3 "
      "technical report §3.1 (cluster: 8 GPUs per node, 400 Gb/s InfiniBand per GPU)";
  g.intra_node_links = 8;
  g.intra_node_bandwidth = 8 * 25 * kGBps;
  return g;
}

// Older and PCIe parts, kept so that profiler traces from them get roofline peaks and
// projections can be asked about them.

GpuSpec A100_40gb() {
  GpuSpec g = A100();  // same GA100 die and clocks; 40 GB of HBM2
  g.name = "A100-40GB";
  g.aliases = {"a100_sxm4_40gb", "a100_40g"};
  // A bare "A100" device name (e.g. "NVIDIA A100-PG509-200", the SXM4 40GB board) is this part;
  // the 80GB boards say so in their name.
  g.device_names = {"a100"};
  g.description = "NVIDIA A100 40GB SXM4 (Ampere)";
  g.source = "NVIDIA A100 Tensor Core GPU data sheet (40GB SXM column)";
  g.hbm_bytes = 40 * kGiB;
  g.hbm_bandwidth = 1.555 * kTBps;
  return g;
}

GpuSpec H100_pcie() {
  GpuSpec g = H100();
  g.name = "H100-PCIe";
  g.aliases = {"h100_pcie_80gb"};
  g.device_names = {"h100 pcie", "h100-pcie"};
  g.description = "NVIDIA H100 PCIe 80GB (Hopper)";
  g.source = "NVIDIA H100 Tensor Core GPU data sheet (PCIe column)";
  g.hbm_bandwidth = 2.0 * kTBps;  // HBM2e
  g.compute_units = 114;
  g.max_clock_mhz = 1620;  // the clock the peaks are quoted at (boost: 1755 MHz)
  g.peak_dense_tflops = {{DType::kFP32, 51},
                         {DType::kTF32, 378},
                         {DType::kBF16, 756},
                         {DType::kFP16, 756},
                         {DType::kFP8, 1513}};
  g.tdp_watts = 350;
  // No NVSwitch: GPUs talk over PCIe Gen5 x16 (64 GB/s per direction) through the host's
  // PCIe switches; the optional two-GPU NVLink bridge is not modelled.
  g.fabric = FabricKind::kSwitch;
  g.intra_node_links = 1;
  g.intra_node_bandwidth = 64 * kGBps;
  g.intra_node_latency = kNetHopLatency;  // assumed: a PCIe switch hop costs about a NIC hop
  g.nic_bandwidth = 200e9 / 8;            // assumed: one 200 Gb/s NIC per GPU
  return g;
}

GpuSpec V100() {
  GpuSpec g;
  g.name = "V100";
  g.vendor = Vendor::kNVIDIA;
  g.arch = "sm_70";
  g.aliases = {"v100_sxm2", "v100_sxm2_32gb", "sm_70"};
  g.device_names = {"v100"};
  g.description = "NVIDIA Tesla V100 SXM2 32GB (Volta), as in DGX-2";
  g.source = "NVIDIA Tesla V100 data sheet (SXM2 column); NVIDIA DGX-2 data sheet";
  g.hbm_bytes = 32 * kGiB;
  g.hbm_bandwidth = 0.9 * kTBps;
  g.compute_units = 80;
  g.max_clock_mhz = 1530;
  g.l2_bytes = 6 * kMiB;
  // Volta's tensor cores take FP16 only: no BF16, TF32 or FP8.
  g.peak_dense_tflops = {{DType::kFP32, 15.7}, {DType::kFP16, 125}};
  g.tdp_watts = 300;
  // NVLink 2: 6 links x 25 GB/s per direction; DGX-2 joins 16 GPUs through NVSwitch and gives
  // them 8 x 100 Gb/s EDR InfiniBand ports (a 6.25 GB/s share per GPU).
  g.fabric = FabricKind::kSwitch;
  g.intra_node_links = 6;
  g.intra_node_bandwidth = 6 * 25 * kGBps;
  g.intra_node_latency = kNvlinkHopLatency;
  g.gpus_per_node = 16;
  g.nic_bandwidth = 8 * 100e9 / 8 / 16;
  g.inter_node_latency = kNetHopLatency;
  return g;
}

GpuSpec Mi250x() {
  GpuSpec g;
  g.name = "MI250X";
  g.vendor = Vendor::kAMD;
  g.arch = "gfx90a";
  g.aliases = {"gfx90a", "mi250x_gcd"};
  g.device_names = {"mi250"};
  // One MI250X OAM holds two GCDs and PyTorch sees each GCD as a device, so this entry is one
  // GCD: half of every per-OAM figure of the data sheet.
  g.description = "AMD Instinct MI250X OAM (CDNA 2), one of its two GCDs";
  g.source = "AMD Instinct MI250X data sheet (per-OAM figures / 2 GCDs); AMD CDNA 2 white paper";
  g.hbm_bytes = 64 * kGiB;  // 128 GB HBM2e per OAM
  g.hbm_bandwidth = 1.6384 * kTBps;
  g.compute_units = 110;
  g.max_clock_mhz = 1700;
  g.l2_bytes = 8 * kMiB;
  // CDNA 2 runs FP32 matrix ops (MFMA) at twice its vector FP32 rate; no FP8 or TF32.
  g.peak_dense_tflops = {{DType::kFP32, 47.85}, {DType::kBF16, 191.5}, {DType::kFP16, 191.5}};
  g.vector_fp32_tflops = 23.95;
  g.tdp_watts = 280;
  // Each GCD has 4 external Infinity Fabric links of 50 GB/s per direction; a node (e.g.
  // Frontier's) holds 4 OAMs = 8 GCDs and one 200 Gb/s NIC per OAM.
  g.fabric = FabricKind::kMesh;
  g.intra_node_links = 4;
  g.intra_node_bandwidth = 4 * 50 * kGBps;
  g.intra_node_latency = kXgmiHopLatency;
  g.gpus_per_node = 8;
  g.nic_bandwidth = 200e9 / 8 / 2;
  g.inter_node_latency = kRoceHopLatency;
  return g;
}

GpuSpec Mi210() {
  GpuSpec g = Mi250x();  // the same CDNA 2 GCD with 104 active CUs on a PCIe card
  g.name = "MI210";
  g.aliases = {"mi210_pcie"};
  g.device_names = {"mi210"};
  g.description = "AMD Instinct MI210 PCIe (CDNA 2)";
  g.source = "AMD Instinct MI210 data sheet";
  g.compute_units = 104;
  g.peak_dense_tflops = {{DType::kFP32, 45.3}, {DType::kBF16, 181.0}, {DType::kFP16, 181.0}};
  g.vector_fp32_tflops = 22.6;
  g.tdp_watts = 300;
  // Up to 3 Infinity Fabric bridge links of 50 GB/s per direction within a hive of 4 cards.
  g.intra_node_links = 3;
  g.intra_node_bandwidth = 3 * 50 * kGBps;
  g.gpus_per_node = 4;
  g.nic_bandwidth = 200e9 / 8;  // assumed: one 200 Gb/s NIC per GPU
  return g;
}

}  // namespace

const std::vector<GpuSpec>& GpuLibrary() {
  static const std::vector<GpuSpec> library = {
      Mi300x(), Mi325x(), Mi350x(), Mi355x(), A100(),  H100(), H200(),      B200(),     GB200(),
      B300(),   GB300(),  H800(),   Mi250x(), Mi210(), V100(), A100_40gb(), H100_pcie()};
  return library;
}

const GpuSpec* FindGpu(std::string_view name) {
  const std::string key = FoldName(name);
  if (key.empty()) return nullptr;
  for (const GpuSpec& gpu : GpuLibrary()) {
    if (FoldName(gpu.name) == key) return &gpu;
    for (const std::string& alias : gpu.aliases) {
      if (FoldName(alias) == key) return &gpu;
    }
  }
  return nullptr;
}

namespace {

// The entry whose chip the device name names, form factor aside: the longest matching piece.
const GpuSpec* ChipOfDevice(std::string_view device_name) {
  if (const GpuSpec* exact = FindGpu(device_name)) return exact;
  std::string lower(device_name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const GpuSpec* best = nullptr;
  size_t best_length = 0;
  for (const GpuSpec& gpu : GpuLibrary()) {
    for (const std::string& piece : gpu.device_names) {
      if (piece.size() > best_length && lower.find(piece) != std::string::npos) {
        best = &gpu;
        best_length = piece.size();
      }
    }
  }
  return best;
}

}  // namespace

const GpuSpec* FindGpuForDevice(std::string_view device_name) {
  if (!UnheldPart(device_name).empty()) return nullptr;
  return ChipOfDevice(device_name);
}

std::string_view UnheldPart(std::string_view device_name) {
  // Parts whose chip name matches a library entry while their per-GPU peaks, memory or SMs
  // differ by more than a tenth: unknown is better than another GPU's figures. (Parts that
  // differ only in their links or a few percent, such as A100 80GB PCIe at 1.94 TB/s against
  // the SXM's 2.04 or V100 PCIe, resolve to the entry.) Sources: NVIDIA H100 NVL / H200 NVL /
  // GH200 / H800 data sheets, AMD MI300A data sheet, the MIG user guide.
  static constexpr std::pair<std::string_view, std::string_view> kUnheld[] = {
      {"h100 nvl", "H100 NVL: 94 GB at 3.9 TB/s against the SXM's 80 GB at 3.35"},
      {"h100-nvl", "H100 NVL: 94 GB at 3.9 TB/s against the SXM's 80 GB at 3.35"},
      {"h200 nvl", "H200 NVL: 835 dense BF16 TFLOP/s at 600 W against the SXM's 989"},
      {"h200-nvl", "H200 NVL: 835 dense BF16 TFLOP/s at 600 W against the SXM's 989"},
      {"gh200", "GH200: 96 or 144 GB at 4.0 or 4.9 TB/s beside a Grace CPU"},
      {"h800 pcie", "H800 PCIe: 2.0 TB/s against the SXM's 3.35"},
      {"h800-pcie", "H800 PCIe: 2.0 TB/s against the SXM's 3.35"},
      {"mi300a", "MI300A: 228 CUs and 128 GB shared with its CPUs against MI300X's 304 and 192"},
  };
  std::string lower(device_name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [piece, why] : kUnheld) {
    if (lower.find(piece) != std::string::npos) return why;
  }
  // A MIG slice ("NVIDIA H100 80GB HBM3 MIG 1g.10gb") has a fraction of its GPU's SMs and
  // memory; "mig" as a word of the name.
  for (size_t at = lower.find("mig"); at != std::string::npos; at = lower.find("mig", at + 1)) {
    const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(lower[at - 1]));
    const bool ends =
        at + 3 == lower.size() || !std::isalpha(static_cast<unsigned char>(lower[at + 3]));
    if (starts && ends) return "a MIG slice: a fraction of its GPU's SMs and memory";
  }
  return "";
}

bool DeviceMayStandFor(std::string_view device_name, const GpuSpec& gpu) {
  // An entry of the library stands for itself only; otherwise the chip its name matches, if any.
  if (const GpuSpec* entry = FindGpuForDevice(device_name)) return entry->name == gpu.name;
  const GpuSpec* chip = ChipOfDevice(device_name);
  return chip == nullptr || chip->name == gpu.name;
}

std::string DeviceMismatch(std::string_view device_name, const GpuSpec& gpu) {
  if (device_name.empty()) return "";
  const GpuSpec* recorded = FindGpuForDevice(device_name);
  // By name: a job's GPU is a copy of the entry, its clock or memory perhaps changed.
  if (recorded != nullptr && recorded->name == gpu.name) return "";
  if (recorded != nullptr) {
    return fmt::format("was recorded on {} ({}), not on the {}", recorded->name, device_name,
                       gpu.name);
  }
  const std::string_view why = UnheldPart(device_name);
  return fmt::format(
      "was recorded on '{}', which is not the {}{}", device_name, gpu.name,
      why.empty() ? std::string(" (nor any GPU of the library)") : fmt::format(" ({})", why));
}

std::vector<std::string> OtherGpusOfArch(const GpuSpec& gpu, std::string_view name) {
  std::vector<std::string> out;
  if (FoldName(name) != FoldName(gpu.arch)) return out;
  for (const GpuSpec& other : GpuLibrary()) {
    if (&other != &gpu && FoldName(other.arch) == FoldName(gpu.arch)) out.push_back(other.name);
  }
  return out;
}

std::vector<std::string> SimilarGpuNames(std::string_view name, size_t max_results) {
  std::vector<std::string> names;
  for (const GpuSpec& gpu : GpuLibrary()) names.push_back(gpu.name);
  return ClosestNames(name, names, max_results);
}

}  // namespace sextant
