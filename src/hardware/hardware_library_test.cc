#include "hardware/hardware_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/error.h"
#include "util/units.h"

namespace sextant {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

TEST(GpuLibrary, HasEveryGpuOfTheSpec) {
  std::vector<std::string> names;
  for (const GpuSpec& gpu : GpuLibrary()) names.push_back(gpu.name);
  EXPECT_THAT(names, ElementsAre("MI300X", "MI325X", "MI350X", "MI355X", "A100", "H100", "H200",
                                 "B200", "GB200", "B300", "GB300", "H800", "MI250X", "MI210",
                                 "V100", "A100-40GB", "H100-PCIe"));
}

TEST(GpuLibrary, EveryEntryIsComplete) {
  for (const GpuSpec& gpu : GpuLibrary()) {
    SCOPED_TRACE(gpu.name);
    EXPECT_FALSE(gpu.source.empty());
    EXPECT_GT(gpu.hbm_bytes, 0);
    EXPECT_GT(gpu.hbm_bandwidth, 0);
    EXPECT_GT(gpu.compute_units, 0);
    EXPECT_GT(gpu.max_clock_mhz, 0);
    EXPECT_GT(gpu.l2_bytes, 0);
    EXPECT_GT(gpu.tdp_watts, 0);
    EXPECT_GT(gpu.intra_node_bandwidth, 0);
    EXPECT_GT(gpu.intra_node_links, 0);
    EXPECT_GT(gpu.nic_bandwidth, 0);
    EXPECT_TRUE(gpu.Supports(DType::kBF16) || gpu.Supports(DType::kFP16));  // V100: FP16 only
    EXPECT_TRUE(gpu.Supports(DType::kFP32));
  }
}

// Peak = compute units x dense FLOP per clock per unit x clock. FLOP/clk/unit from the
// vendors' architecture papers: CDNA 3 2048 (BF16) and 4096 (FP8) per CU; CDNA 4 4096
// (BF16) and 8192 (FP8); Ampere 2048 (FP16/BF16) per SM; Hopper 4096 (BF16) per SM.
double Peak(double units, double flop_per_clock, double mhz) {
  return units * flop_per_clock * mhz * 1e6 / 1e12;
}

// Datasheets round the product (A100: 311.87 is quoted as 312).
void ExpectWithinTenthOfAPercent(double quoted, double computed) {
  EXPECT_NEAR(quoted, computed, computed * 1e-3);
}

// Capacities are what nvidia-smi reports as memory.total on each part (public nvidia-smi
// output of real machines), not the data sheets' rounded "GB": an H200 that holds a 135 GiB
// job must not be called out of memory.
TEST(GpuLibrary, NvidiaCapacitiesAreWhatTheDriverReports) {
  EXPECT_EQ(FindGpu("H100")->hbm_bytes, 81559 * kMiB);  // 79.6 GiB
  EXPECT_EQ(FindGpu("H800")->hbm_bytes, 81559 * kMiB);
  EXPECT_EQ(FindGpu("H200")->hbm_bytes, 143771 * kMiB);  // 140.4 GiB
  EXPECT_GT(FindGpu("H200")->hbm_bytes, 140 * kGiB);
  EXPECT_EQ(FindGpu("B200")->hbm_bytes, 183359 * kMiB);   // 179.1 GiB
  EXPECT_EQ(FindGpu("GB200")->hbm_bytes, 189471 * kMiB);  // 185.0 GiB
  EXPECT_EQ(FindGpu("GB300")->hbm_bytes, 284208 * kMiB);  // 277.5 GiB
  EXPECT_EQ(FindGpu("A100")->hbm_bytes, 80 * kGiB);       // 81920 MiB
}

TEST(GpuLibrary, PeaksMatchUnitsTimesClock) {
  ExpectWithinTenthOfAPercent(FindGpu("MI300X")->PeakTflops(DType::kBF16), Peak(304, 2048, 2100));
  ExpectWithinTenthOfAPercent(FindGpu("MI300X")->PeakTflops(DType::kFP8), Peak(304, 4096, 2100));
  ExpectWithinTenthOfAPercent(FindGpu("MI325X")->PeakTflops(DType::kBF16), Peak(304, 2048, 2100));
  ExpectWithinTenthOfAPercent(FindGpu("MI350X")->PeakTflops(DType::kBF16), Peak(256, 4096, 2200));
  ExpectWithinTenthOfAPercent(FindGpu("MI355X")->PeakTflops(DType::kBF16), Peak(256, 4096, 2400));
  ExpectWithinTenthOfAPercent(FindGpu("MI355X")->PeakTflops(DType::kFP8), Peak(256, 8192, 2400));
  ExpectWithinTenthOfAPercent(FindGpu("A100")->PeakTflops(DType::kBF16), Peak(108, 2048, 1410));
  ExpectWithinTenthOfAPercent(FindGpu("H100")->PeakTflops(DType::kBF16), Peak(132, 4096, 1830));
  // Volta 1024 FP16 FLOP/clk per SM (8 tensor cores x 64 FMA); CDNA 2 1024 BF16 per CU;
  // the H100 PCIe peak is quoted at 1620 MHz.
  EXPECT_NEAR(FindGpu("V100")->PeakTflops(DType::kFP16), Peak(80, 1024, 1530), 0.5);  // 125.3
  ExpectWithinTenthOfAPercent(FindGpu("MI250X")->PeakTflops(DType::kBF16), Peak(110, 1024, 1700));
  ExpectWithinTenthOfAPercent(FindGpu("MI210")->PeakTflops(DType::kBF16), Peak(104, 1024, 1700));
  ExpectWithinTenthOfAPercent(FindGpu("H100-PCIe")->PeakTflops(DType::kBF16),
                              Peak(114, 4096, 1620));
}

TEST(GpuLibrary, DatasheetFigures) {
  const GpuSpec& mi300x = *FindGpu("MI300X");
  EXPECT_EQ(mi300x.hbm_bytes, 192 * kGiB);
  EXPECT_DOUBLE_EQ(mi300x.hbm_bandwidth, 5.3e12);
  EXPECT_EQ(mi300x.fabric, FabricKind::kMesh);
  // 7 xGMI links x 64 GB/s = 448 GB/s, the node_bw of Primus's mi300x.yaml.
  EXPECT_DOUBLE_EQ(mi300x.intra_node_bandwidth, 448e9);
  EXPECT_DOUBLE_EQ(mi300x.LinkBandwidth(), 64e9);
  // MI355X: 7 links x 76.8 GB/s = 537.6 GB/s (Primus's mi355x.yaml node_bw).
  EXPECT_NEAR(FindGpu("MI355X")->intra_node_bandwidth, 537.6e9, 1);
  const GpuSpec& h100 = *FindGpu("H100");
  EXPECT_EQ(h100.fabric, FabricKind::kSwitch);
  EXPECT_DOUBLE_EQ(h100.intra_node_bandwidth, 450e9);  // 900 GB/s bidirectional NVLink 4
  EXPECT_DOUBLE_EQ(h100.nic_bandwidth, 50e9);          // 400 Gb/s
  EXPECT_FALSE(h100.Supports(DType::kFP4));
  EXPECT_TRUE(FindGpu("B200")->Supports(DType::kFP4));
  EXPECT_FALSE(FindGpu("A100")->Supports(DType::kFP8));
  EXPECT_FALSE(FindGpu("MI355X")->Supports(DType::kTF32));
  EXPECT_EQ(FindGpu("GB200")->gpus_per_node, 72);
  // Blackwell Ultra: B200's BF16 and FP8, 1.5x its dense FP4 (HGX B300: 108 vs 72 PFLOPS per
  // 8 GPUs), 288 GB on the data sheet and 275040 MiB in nvidia-smi; GB300 NVL72: 360 PFLOPS dense
  // FP8 / 72 GPUs = 5 PFLOPS.
  EXPECT_DOUBLE_EQ(FindGpu("B300")->PeakTflops(DType::kBF16), 2250);
  EXPECT_DOUBLE_EQ(FindGpu("B300")->PeakTflops(DType::kFP4), 108e3 / 8);
  EXPECT_EQ(FindGpu("B300")->hbm_bytes, 275040 * kMiB);
  EXPECT_DOUBLE_EQ(FindGpu("B300")->nic_bandwidth, 100e9);  // 800 Gb/s ConnectX-8
  EXPECT_DOUBLE_EQ(FindGpu("GB300")->PeakTflops(DType::kFP8), 360e3 / 72);
  EXPECT_EQ(FindGpu("GB300")->gpus_per_node, 72);
  // H800: H100 compute, NVLink 400 GB/s bidirectional = 200 GB/s per direction.
  EXPECT_DOUBLE_EQ(FindGpu("H800")->PeakTflops(DType::kBF16),
                   FindGpu("H100")->PeakTflops(DType::kBF16));
  EXPECT_DOUBLE_EQ(FindGpu("H800")->intra_node_bandwidth, 200e9);
  EXPECT_THROW(FindGpu("A100")->PeakTflops(DType::kFP8), UserError);
}

TEST(FindGpu, AcceptsNamesAndAliasesInAnyCase) {
  EXPECT_EQ(FindGpu("MI300X")->name, "MI300X");
  EXPECT_EQ(FindGpu("mi300x")->name, "MI300X");
  EXPECT_EQ(FindGpu("gfx942")->name, "MI300X");
  EXPECT_EQ(FindGpu("GFX950")->name, "MI355X");
  EXPECT_EQ(FindGpu("MI355")->name, "MI355X");  // Primus's mlperf/gpt_oss_20b/configs/MI355
  EXPECT_EQ(FindGpu("h100_sxm")->name, "H100");
  EXPECT_EQ(FindGpu("H100-SXM")->name, "H100");
  EXPECT_EQ(FindGpu("a100_80gb")->name, "A100");
  EXPECT_EQ(FindGpu("gb200_nvl72")->name, "GB200");
  EXPECT_EQ(FindGpu("H300"), nullptr);
  EXPECT_EQ(FindGpu(""), nullptr);
}

// Device names as PyTorch profiler traces spell them (deviceProperties "name").
TEST(FindGpuForDevice, MatchesTraceDeviceNamesAndShortKeys) {
  const GpuSpec* h100 = FindGpuForDevice("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->name, "H100");
  EXPECT_DOUBLE_EQ(h100->HbmTbps(), 3.35);
  EXPECT_EQ(FindGpuForDevice("NVIDIA H100 PCIe")->name, "H100-PCIe");  // longest piece wins
  EXPECT_EQ(FindGpuForDevice("AMD Instinct MI300X")->name, "MI300X");
  EXPECT_EQ(FindGpuForDevice("gfx942")->name, "MI300X");
  EXPECT_EQ(FindGpuForDevice("AMD Instinct MI325X")->name, "MI325X");
  EXPECT_DOUBLE_EQ(FindGpuForDevice("mi325x")->HbmTbps(), 6.0);
  EXPECT_DOUBLE_EQ(FindGpuForDevice("NVIDIA A100-SXM4-80GB")->HbmTbps(), 2.039);
  EXPECT_DOUBLE_EQ(FindGpuForDevice("NVIDIA A100-PG509-200")->HbmTbps(), 1.555);
  EXPECT_EQ(FindGpuForDevice("Tesla V100-DGXS-32GB")->name, "V100");
  EXPECT_EQ(FindGpuForDevice("NVIDIA GB200")->name, "GB200");
  EXPECT_EQ(FindGpuForDevice("NVIDIA H800")->name, "H800");
  EXPECT_EQ(FindGpuForDevice("NVIDIA GB300")->name, "GB300");
  EXPECT_EQ(FindGpuForDevice("NVIDIA B300 SXM6 AC")->name, "B300");
  EXPECT_EQ(FindGpuForDevice("AMD Instinct MI250X")->name, "MI250X");
  EXPECT_EQ(FindGpuForDevice("NVIDIA GeForce RTX 2080 Ti"), nullptr);
  EXPECT_EQ(FindGpuForDevice(""), nullptr);
}

// Parts whose chip name matches an entry while their per-GPU peaks, memory or SMs differ by
// more than a tenth are unknown, not that entry (nvidia-smi / torch.cuda.get_device_name
// spellings). H100 NVL: 94 GB at 3.9 TB/s against the SXM's 80 GB at 3.35; MI300A: 228 CUs
// against MI300X's 304; a 1g.10gb MIG slice: 1/7 of the SMs (NVIDIA and AMD data sheets, MIG
// user guide). Form factors the library's entries are, or that differ little, still resolve.
TEST(FindGpuForDevice, APartTheLibraryDoesNotHoldIsNotTheEntryItsChipNameMatches) {
  for (const char* device :
       {"NVIDIA H100 NVL", "NVIDIA H100-NVL", "NVIDIA H200 NVL", "NVIDIA H800 PCIe",
        "NVIDIA GH200 480GB", "AMD Instinct MI300A", "NVIDIA H100 80GB HBM3 MIG 1g.10gb"}) {
    EXPECT_EQ(FindGpuForDevice(device), nullptr) << device;
    EXPECT_FALSE(UnheldPart(device).empty()) << device;
  }
  EXPECT_EQ(FindGpuForDevice("NVIDIA H100 PCIe")->name, "H100-PCIe");
  EXPECT_EQ(FindGpuForDevice("NVIDIA H100-PCIE-80GB")->name, "H100-PCIe");
  EXPECT_EQ(FindGpuForDevice("NVIDIA GB200 NVL72")->name, "GB200");
  EXPECT_EQ(FindGpuForDevice("AMD Instinct MI210 PCIe")->name, "MI210");
  EXPECT_EQ(FindGpuForDevice("Tesla V100-PCIE-32GB")->name, "V100");        // megatron-tp2-v100
  EXPECT_EQ(FindGpuForDevice("NVIDIA A100-PCIE-40GB")->name, "A100-40GB");  // same HBM, peaks
  EXPECT_EQ(FindGpuForDevice("NVIDIA A100 80GB PCIe")->name, "A100");  // 1.94 against 2.04 TB/s
  EXPECT_EQ(FindGpuForDevice("AMD Instinct MI300X VF")->name, "MI300X");
  EXPECT_TRUE(UnheldPart("NVIDIA H100 80GB HBM3").empty());
}

// Whether measurements recorded on a device hold for a GPU: the same entry, or nothing
// recorded; another entry and a part the library does not hold never match.
TEST(DeviceMismatch, SaysWhatDiffers) {
  const GpuSpec& h100 = *FindGpu("H100");
  EXPECT_EQ(DeviceMismatch("NVIDIA H100 80GB HBM3", h100), "");
  EXPECT_EQ(DeviceMismatch("", h100), "");
  EXPECT_EQ(DeviceMismatch("AMD Instinct MI300X", h100),
            "was recorded on MI300X (AMD Instinct MI300X), not on the H100");
  const std::string nvl = DeviceMismatch("NVIDIA H100 NVL", h100);
  EXPECT_NE(nvl.find("was recorded on 'NVIDIA H100 NVL', which is not the H100 (H100 NVL: 94 GB"),
            std::string::npos)
      << nvl;
  EXPECT_NE(DeviceMismatch("Some Accelerator 9000", h100).find("nor any GPU of the library"),
            std::string::npos);
  // What may stand for an H100 job with a warning: a part of its own chip, or an unknown
  // device; never another entry or another chip's part.
  EXPECT_TRUE(DeviceMayStandFor("NVIDIA H100 80GB HBM3", h100));
  EXPECT_TRUE(DeviceMayStandFor("NVIDIA H100 NVL", h100));
  EXPECT_TRUE(DeviceMayStandFor("Some Accelerator 9000", h100));
  EXPECT_FALSE(DeviceMayStandFor("AMD Instinct MI300X", h100));
  EXPECT_FALSE(DeviceMayStandFor("NVIDIA H100 NVL", *FindGpu("MI300X")));
  EXPECT_FALSE(DeviceMayStandFor("NVIDIA GH200 480GB", h100));  // the H200's chip name
}

TEST(SimilarGpuNames, SuggestsCloseNames) {
  EXPECT_THAT(SimilarGpuNames("MI300"), Contains("MI300X"));
  EXPECT_THAT(SimilarGpuNames("H1000"), Contains("H100"));
  EXPECT_THAT(SimilarGpuNames("B20"), Contains("B200"));
  EXPECT_TRUE(SimilarGpuNames("TPUv5").empty());
  EXPECT_LE(SimilarGpuNames("MI3", 2).size(), 2u);
}

TEST(GpuSpec, ClockOverrideScalesEveryComputePeak) {
  GpuSpec gpu = *FindGpu("MI300X");
  gpu.SetClockMhz(1050);  // half the clock: half of every peak, memory untouched
  EXPECT_NEAR(gpu.PeakTflops(DType::kBF16), 1307.4 / 2, 1e-9);
  EXPECT_NEAR(gpu.PeakTflops(DType::kFP8), 2614.9 / 2, 1e-9);
  EXPECT_DOUBLE_EQ(gpu.hbm_bandwidth, 5.3e12);
  EXPECT_DOUBLE_EQ(gpu.max_clock_mhz, 1050);
  EXPECT_THROW(gpu.SetClockMhz(0), UserError);
}

TEST(MakeCluster, UsesTheGpusNodeSize) {
  const ClusterSpec nvl72 = MakeCluster(*FindGpu("GB200"), 2);
  EXPECT_EQ(nvl72.gpus_per_node, 72);
  EXPECT_EQ(nvl72.WorldSize(), 144);
  EXPECT_EQ(nvl72.NicsPerNode(), 72);
  EXPECT_DOUBLE_EQ(nvl72.PodBandwidth(), nvl72.gpu.nic_bandwidth);
}

}  // namespace
}  // namespace sextant
