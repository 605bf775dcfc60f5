#include "hardware/hardware_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hardware/hardware_library.h"
#include "util/corpus_path.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

using ::testing::HasSubstr;

const std::string kCorpus = CorpusPath("primus/examples/hardware_configs/");
const std::string kData = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/hardware/";

ClusterSpec Mi300xCluster(int nodes = 1) { return MakeCluster(*FindGpu("MI300X"), nodes); }

std::string ErrorOf(const std::string& text) {
  try {
    ParseHardwareConfig(text, "hw.yaml", Mi300xCluster());
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LoadHardwareConfig, ReadsPrimusMi300xFile) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const ClusterSpec c = LoadHardwareConfig(kCorpus + "mi300x.yaml", MakeCluster(*FindGpu("H100")));
  // Primus keys overwrite the fabric figures of whatever GPU the base cluster had.
  EXPECT_DOUBLE_EQ(c.gpu.intra_node_bandwidth, 448e9);
  EXPECT_DOUBLE_EQ(c.gpu.intra_node_latency, 0.45e-6);
  EXPECT_DOUBLE_EQ(c.gpu.nic_bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(c.gpu.inter_node_latency, 2.0e-6);
  EXPECT_DOUBLE_EQ(c.pod_bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(c.pod_latency, 10e-6);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.nodes_per_pod, 8);  // pod_size 64 GPUs / 8 per node
  EXPECT_EQ(c.nics_per_node, 8);
  EXPECT_FALSE(c.scale_out_switch);
  EXPECT_EQ(c.gpu.fabric, FabricKind::kMesh);
  EXPECT_DOUBLE_EQ(c.calibration.vector_flops, 163e12);
  // Keys the file leaves out keep Primus's defaults.
  EXPECT_DOUBLE_EQ(c.calibration.bw_eff, 0.70);
  EXPECT_DOUBLE_EQ(c.calibration.a2a_rccl_overhead_us, 150.0);
}

TEST(LoadHardwareConfig, ReadsEveryCorpusHardwareConfig) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  for (const char* name : {"mi300x.yaml", "mi325x.yaml", "mi350x.yaml", "mi355x.yaml"}) {
    SCOPED_TRACE(name);
    const ClusterSpec c = LoadHardwareConfig(kCorpus + name, Mi300xCluster());
    EXPECT_GT(c.gpu.intra_node_bandwidth, 0);
  }
  EXPECT_DOUBLE_EQ(
      LoadHardwareConfig(kCorpus + "mi355x.yaml", Mi300xCluster()).gpu.intra_node_bandwidth,
      537.6e9);
  EXPECT_DOUBLE_EQ(
      LoadHardwareConfig(kCorpus + "mi350x.yaml", Mi300xCluster()).calibration.vector_flops,
      144e12);
}

// Told apart from experiment configs in a folder of YAML files: Primus's hardware files and
// Sextant's are; an experiment (modules:), a MaxText config and non-YAML text are not.
TEST(LoadHardwareConfig, HardwareConfigTextIsToldApartFromJobs) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  for (const char* name : {"mi300x.yaml", "mi325x.yaml", "mi350x.yaml", "mi355x.yaml"}) {
    EXPECT_TRUE(IsHardwareConfigText(ReadFile(kCorpus + name, 1 << 20))) << name;
  }
  EXPECT_TRUE(IsHardwareConfigText("hardware:\n  gpu: MI300X\n"));
  EXPECT_TRUE(IsHardwareConfigText("hardware_config:\n  node_bw: 448\nhardware:\n  gpu: MI300X\n"));
  EXPECT_FALSE(IsHardwareConfigText("modules:\n  pre_trainer:\n    framework: megatron\n"));
  EXPECT_FALSE(IsHardwareConfigText("hardware_config:\n  node_bw: 1\nmodules: {}\n"));
  EXPECT_FALSE(IsHardwareConfigText("model_name: llama3-8b\nhardware: gpu\nsteps: 10\n"));
  EXPECT_FALSE(IsHardwareConfigText("hardware: [unclosed\n"));
  EXPECT_FALSE(IsHardwareConfigText(""));
}

TEST(LoadHardwareConfig, SextantSchemaWithClusterTiers) {
  const ClusterSpec c = LoadHardwareConfig(kData + "h100_cluster.yaml", Mi300xCluster());
  EXPECT_EQ(c.gpu.name, "H100");
  EXPECT_NEAR(c.gpu.PeakTflops(DType::kBF16), 989.4 * 1500 / 1830, 1e-6);
  EXPECT_DOUBLE_EQ(c.gpu.hbm_bandwidth, 3.0e12);
  EXPECT_EQ(c.num_nodes, 64);
  EXPECT_EQ(c.WorldSize(), 512);
  EXPECT_EQ(c.nodes_per_pod, 32);
  EXPECT_DOUBLE_EQ(c.pod_bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(c.pod_latency, 5e-6);
  EXPECT_EQ(c.collective_preset, "nccl");
}

TEST(LoadHardwareConfig, BothSchemasInOneFile) {
  const ClusterSpec c = LoadHardwareConfig(kData + "mixed_schemas.yaml", Mi300xCluster());
  EXPECT_EQ(c.gpu.name, "MI355X");
  EXPECT_DOUBLE_EQ(c.gpu.intra_node_bandwidth, 500e9);
  EXPECT_DOUBLE_EQ(c.calibration.bw_eff, 0.75);
  EXPECT_DOUBLE_EQ(c.calibration.rccl_overhead_us, 120);
  EXPECT_EQ(c.nodes_per_pod, 4);
}

TEST(LoadHardwareConfig, UnknownKeyNamesFileLineKeyAndSuggestion) {
  try {
    LoadHardwareConfig(kData + "unknown_primus_key.yaml", Mi300xCluster());
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("unknown_primus_key.yaml:3:3"));
    EXPECT_THAT(msg, HasSubstr("'pod_bww'"));
    EXPECT_THAT(msg, HasSubstr("did you mean pod_bw?"));
  }
}

TEST(ParseHardwareConfig, PrimusAcceptsNumbersWrittenAsStrings) {
  const ClusterSpec c = ParseHardwareConfig(
      "hardware_config:\n  vector_flops: \"3.2e12\"\n  nic_warmup_bytes: 1e6\n"
      "  switch_topology: \"off\"\n  nics_per_node: null\n",
      "hw.yaml", Mi300xCluster());
  EXPECT_DOUBLE_EQ(c.calibration.vector_flops, 3.2e12);
  EXPECT_EQ(c.calibration.nic_warmup_bytes, 1000000);
  EXPECT_FALSE(c.scale_out_switch);
  EXPECT_EQ(c.nics_per_node, 0);  // null: one NIC per GPU, as in Primus
}

TEST(ParseHardwareConfig, RedefinedPeakDropsTheLibrarysMaxAchievableFigure) {
  // The MI300X's 708 TFLOP/s bf16 max-achievable was measured on the library's part; a file
  // that gives another bf16 peak describes another part. FP8 keeps its figure.
  const ClusterSpec c =
      ParseHardwareConfig("hardware:\n  peak_tflops: {bf16: 1000}\n", "hw.yaml", Mi300xCluster());
  EXPECT_DOUBLE_EQ(c.gpu.MaxAchievableFraction(DType::kBF16), 0.0);
  EXPECT_DOUBLE_EQ(c.gpu.MaxAchievableFraction(DType::kFP8), 1273.0 / 2614.9);
}

TEST(ParseHardwareConfig, EveryPrimusKeyIsAccepted) {
  std::string text = "hardware_config:\n";
  for (const std::string& key : PrimusHardwareConfigKeys()) {
    std::string value = "1";
    if (key == "node_topology") value = "mesh";
    if (key == "switch_topology") value = "true";
    if (key == "pod_size" || key == "node_size") value = "8";
    text += "  " + key + ": " + value + "\n";
  }
  EXPECT_NO_THROW(ParseHardwareConfig(text, "all.yaml", Mi300xCluster()));
  EXPECT_EQ(PrimusHardwareConfigKeys().size(), 35u);  // 34 CollectiveArgs fields + gpus_per_tray
}

TEST(ParseHardwareConfig, ClearErrors) {
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_bw: fast\n"),
              HasSubstr("hw.yaml:2:12: 'node_bw': expected a number, got 'fast'"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  bw_eff: 1.5\n"),
              HasSubstr("'bw_eff': must be a fraction"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_size: 2.5\n"), HasSubstr("whole number"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_topology: torus\n"),
              HasSubstr("expected 'mesh' or 'switch'"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  pod_size: 12\n"),
              HasSubstr("not a whole number of 8-GPU nodes"));
  EXPECT_THAT(ErrorOf("hardware:\n  gpu: H1000\n"), HasSubstr("did you mean H100"));
  EXPECT_THAT(ErrorOf("hardware:\n  gpu: MI300X\n  cluster:\n    nodes: 4\n"),
              HasSubstr("hw.yaml:4:5: 'nodes': unknown key"));
  EXPECT_THAT(ErrorOf("hardware:\n  peak_tflops: {bf17: 5}\n"), HasSubstr("unknown dtype"));
  EXPECT_THAT(ErrorOf("hardware:\n  collective_preset: mpi\n"), HasSubstr("unknown preset 'mpi'"));
  EXPECT_THAT(ErrorOf("hardwar_config:\n  node_bw: 1\n"),
              HasSubstr("did you mean hardware_config?"));
  EXPECT_THAT(ErrorOf("- 1\n- 2\n"), HasSubstr("expected a mapping"));
  EXPECT_THAT(ErrorOf("hardware_config: [1, 2\n"), HasSubstr("not valid YAML"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_bw: [1]\n"), HasSubstr("expected a single value"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  pod_lat: -1\n"),
              HasSubstr("must be between 0 and 1e+06 us"));
  // Latencies and fixed overheads are held to a second, as bandwidths are held to plausibility.
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_lat: 1e308\n"),
              HasSubstr("'node_lat': must be between 0 and 1e+06 us, got 1e+308"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  kernel_launch_latency: 2e6\n"),
              HasSubstr("'kernel_launch_latency': must be between 0 and 1e+06 us"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_bw: .inf\n"), HasSubstr("expected a number"));
  // A unit slip in a bandwidth would make a projection take centuries: refused.
  EXPECT_THAT(ErrorOf("hardware_config:\n  pod_bw: 1e-300\n"),
              HasSubstr("'pod_bw': must be between 0.001 and 1000000 GB/s, got 1e-300"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  node_bw: 4e9\n"),
              HasSubstr("must be between 0.001 and 1000000 GB/s"));
  EXPECT_THAT(ErrorOf("hardware_config:\n  pod_bw: 1e-320\n"),
              HasSubstr("'1e-320' is out of the range of numbers"));
}

// Sextant's own schema is held to the same plausibility as Primus's: a clock of 1e9 MHz, an
// exaFLOP-scale peak or a 1e300 GB/s link is a slip, not a GPU. A key given twice is refused
// (parsers disagree on which copy wins).
TEST(ParseHardwareConfig, SextantSchemaValuesMustBePlausibleAndGivenOnce) {
  EXPECT_THAT(ErrorOf("hardware:\n  gpu: H100\n  clock_mhz: 1000000000\n"),
              HasSubstr("hw.yaml:3:14: 'clock_mhz': must be between 100 and 10000 MHz"));
  EXPECT_THAT(ErrorOf("hardware:\n  peak_tflops: {bf16: 1e308}\n"),
              HasSubstr("'bf16': must be between 0.001 and 1e+06 TFLOP/s"));
  EXPECT_THAT(ErrorOf("hardware:\n  intra_node_bandwidth_gbs: 1e300\n"),
              HasSubstr("must be between 0.001 and 1000000 GB/s"));
  EXPECT_THAT(ErrorOf("hardware:\n  nic_bandwidth_gbs: 1e-9\n"),
              HasSubstr("must be between 0.001 and 1000000 GB/s"));
  EXPECT_THAT(ErrorOf("hardware:\n  hbm_bandwidth_tbs: 5000\n"),
              HasSubstr("must be between 0.001 and 1000 TB/s"));
  EXPECT_THAT(ErrorOf("hardware:\n  gpu: H100\n  gpu: MI300X\n"),
              HasSubstr("hw.yaml:3:3: 'gpu': given twice (also on line 2); keep one"));
  EXPECT_THAT(ErrorOf("hardware:\n  gpu: H100\nhardware:\n  gpu: MI300X\n"),
              HasSubstr("'hardware': given twice (also on line 1)"));
  EXPECT_EQ(ErrorOf("hardware:\n  gpu: H100\n  clock_mhz: 1755\n"), "(no error)");
}

TEST(LoadHardwareConfig, MissingFile) {
  EXPECT_THROW(LoadHardwareConfig(kData + "no_such_file.yaml", Mi300xCluster()), UserError);
}

}  // namespace
}  // namespace sextant
