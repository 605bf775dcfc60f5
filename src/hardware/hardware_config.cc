#include "hardware/hardware_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "hardware/hardware_library.h"
#include "util/close_matches.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/units.h"

namespace sextant {
namespace {

// Walks one YAML document, remembering the file name so every error can point at a line.
class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  SourceLocation Where(const YAML::Node& node) const {
    SourceLocation where;
    where.file = file_;
    const YAML::Mark mark = node.Mark();
    if (mark.line >= 0) {
      where.line = mark.line + 1;
      where.column = mark.column + 1;
    }
    return where;
  }

  [[noreturn]] void Fail(const YAML::Node& node, std::string_view key, std::string_view why) const {
    ThrowUserError(Where(node), key, why);
  }

  std::string Scalar(const YAML::Node& value, std::string_view key) const {
    if (!value.IsScalar()) Fail(value, key, "expected a single value");
    return value.Scalar();
  }

  // Numbers may be written as YAML numbers or as strings ("3.2e12"), as Primus accepts both.
  double Number(const YAML::Node& value, std::string_view key) const {
    const std::string text = Scalar(value, key);
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(begin, &end);
    while (end != nullptr && *end == ' ') ++end;
    if (text.empty() || end == begin || *end != '\0') {
      Fail(value, key, fmt::format("expected a number, got '{}'", text));
    }
    if (errno == ERANGE || !std::isfinite(parsed)) {
      Fail(value, key, fmt::format("'{}' is out of the range of numbers this file can hold", text));
    }
    return parsed;
  }

  // A link bandwidth in GB/s: from 1 MB/s to 1 PB/s; anything outside is a typo (a unit
  // slip) that would turn a projection into hours or nanoseconds.
  double Bandwidth(const YAML::Node& value, std::string_view key) const {
    const double v = Positive(value, key);
    if (v < 1e-3 || v > 1e6) {
      Fail(value, key, fmt::format("must be between 0.001 and 1000000 GB/s, got {}", v));
    }
    return v;
  }

  double Positive(const YAML::Node& value, std::string_view key) const {
    const double v = Number(value, key);
    if (!(v > 0)) Fail(value, key, fmt::format("must be positive, got {}", v));
    return v;
  }

  // A latency or fixed overhead in µs: at most a second (no link or launch takes longer; a
  // larger value is a unit mistake, and 1e308 would overflow the collective model's sums).
  double Microseconds(const YAML::Node& value, std::string_view key) const {
    return Within(value, key, 0, 1e6, "us");
  }

  double NonNegative(const YAML::Node& value, std::string_view key) const {
    const double v = Number(value, key);
    if (v < 0) Fail(value, key, fmt::format("must not be negative, got {}", v));
    return v;
  }

  double Fraction(const YAML::Node& value, std::string_view key, bool allow_zero) const {
    const double v = Number(value, key);
    if (v > 1 || v < 0 || (!allow_zero && v == 0)) {
      Fail(value, key,
           fmt::format("must be a fraction in {}0, 1], got {}", allow_zero ? "[" : "(", v));
    }
    return v;
  }

  // Integers accept "1e3"-style spellings as long as the value is whole.
  int64_t Integer(const YAML::Node& value, std::string_view key, int64_t min_value) const {
    const double v = Number(value, key);
    if (v != std::floor(v) || v < static_cast<double>(min_value) || v > 1e15) {
      Fail(value, key, fmt::format("expected a whole number >= {}, got {}", min_value, v));
    }
    return static_cast<int64_t>(v);
  }

  int SmallInteger(const YAML::Node& value, std::string_view key, int min_value) const {
    const int64_t v = Integer(value, key, min_value);
    if (v > 1'000'000) Fail(value, key, fmt::format("{} is too large", v));
    return static_cast<int>(v);
  }

  bool Boolean(const YAML::Node& value, std::string_view key) const {
    std::string text = Scalar(value, key);
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "0" || text == "no" || text == "off") return false;
    Fail(value, key, fmt::format("expected true or false, got '{}'", Scalar(value, key)));
  }

  [[noreturn]] void UnknownKey(const YAML::Node& key_node, const std::string& key,
                               const std::vector<std::string>& known) const {
    Fail(key_node, key, "unknown key" + DidYouMean(ClosestNames(key, known)));
  }

  // A mapping whose keys are each written once: YAML parsers disagree on which of two
  // repeated keys wins (yaml-cpp keeps the first, PyYAML the last), so a repeat is refused.
  void RequireMap(const YAML::Node& node, std::string_view key) const {
    if (!node.IsMap()) Fail(node, key, "expected a mapping of keys to values");
    std::map<std::string, int> first_line;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) continue;
      const auto [it, inserted] =
          first_line.emplace(entry.first.Scalar(), entry.first.Mark().line + 1);
      if (!inserted) {
        Fail(entry.first, entry.first.Scalar(),
             fmt::format("given twice (also on line {}); keep one", it->second));
      }
    }
  }

  // A quantity that must lie in [lo, hi] `unit`: outside is a typo or a unit slip that would
  // turn a projection into nanoseconds or centuries.
  double Within(const YAML::Node& value, std::string_view key, double lo, double hi,
                std::string_view unit) const {
    const double v = Number(value, key);
    if (!(v >= lo && v <= hi)) {
      Fail(value, key, fmt::format("must be between {:g} and {:g} {}, got {:g}", lo, hi, unit, v));
    }
    return v;
  }

 private:
  std::string file_;
};

FabricKind ParseFabric(const ConfigReader& r, const YAML::Node& value, std::string_view key) {
  const std::string text = r.Scalar(value, key);
  if (text == "mesh") return FabricKind::kMesh;
  if (text == "switch") return FabricKind::kSwitch;
  r.Fail(value, key, fmt::format("expected 'mesh' or 'switch', got '{}'", text));
}

using PrimusSetter = std::function<void(const ConfigReader&, const YAML::Node&, const std::string&,
                                        ClusterSpec&, int& pod_size)>;

// Primus's CollectiveArgs fields, each mapped onto the Sextant field with the same meaning.
// Units as in Primus: GB/s, microseconds, bytes, FLOP/s.
const std::map<std::string, PrimusSetter>& PrimusSetters() {
  using R = const ConfigReader&;
  using N = const YAML::Node&;
  using K = const std::string&;
  static const std::map<std::string, PrimusSetter> setters = {
      {"node_size",
       [](R r, N v, K k, ClusterSpec& c, int&) {
         c.gpus_per_node = r.SmallInteger(v, k, 1);
         c.gpu.gpus_per_node = c.gpus_per_node;
       }},
      {"pod_size", [](R r, N v, K k, ClusterSpec&, int& pod) { pod = r.SmallInteger(v, k, 1); }},
      {"num_nodes",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.num_nodes = r.SmallInteger(v, k, 1); }},
      {"hp",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.calibration.hp = r.SmallInteger(v, k, 1); }},
      {"pp",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.calibration.pp = r.SmallInteger(v, k, 1); }},
      {"cp",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.calibration.cp = r.SmallInteger(v, k, 1); }},
      {"ep",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.calibration.ep = r.SmallInteger(v, k, 1); }},
      {"node_bw", [](R r, N v, K k, ClusterSpec& c,
                     int&) { c.gpu.intra_node_bandwidth = r.Bandwidth(v, k) * kGBps; }},
      {"pod_bw", [](R r, N v, K k, ClusterSpec& c,
                    int&) { c.gpu.nic_bandwidth = r.Bandwidth(v, k) * kGBps; }},
      {"cluster_bw",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.pod_bandwidth = r.Bandwidth(v, k) * kGBps; }},
      {"bw_eff",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.calibration.bw_eff = r.Fraction(v, k, false); }},
      {"p2p_bw_eff", [](R r, N v, K k, ClusterSpec& c,
                        int&) { c.calibration.p2p_bw_eff = r.Fraction(v, k, false); }},
      {"node_lat", [](R r, N v, K k, ClusterSpec& c,
                      int&) { c.gpu.intra_node_latency = r.Microseconds(v, k) * kUs; }},
      {"pod_lat", [](R r, N v, K k, ClusterSpec& c,
                     int&) { c.gpu.inter_node_latency = r.Microseconds(v, k) * kUs; }},
      {"cluster_lat",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.pod_latency = r.Microseconds(v, k) * kUs; }},
      {"hbm_latency", [](R r, N v, K k, ClusterSpec& c,
                         int&) { c.calibration.hbm_latency_us = r.Microseconds(v, k); }},
      {"write_latency", [](R r, N v, K k, ClusterSpec& c,
                           int&) { c.calibration.write_latency_us = r.Microseconds(v, k); }},
      {"write_resp", [](R r, N v, K k, ClusterSpec& c,
                        int&) { c.calibration.write_resp_us = r.Microseconds(v, k); }},
      {"kernel_launch_latency",
       [](R r, N v, K k, ClusterSpec& c, int&) {
         c.calibration.kernel_launch_latency_us = r.Microseconds(v, k);
       }},
      {"vector_flops",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.calibration.vector_flops = r.Positive(v, k); }},
      {"rccl_overhead_us", [](R r, N v, K k, ClusterSpec& c,
                              int&) { c.calibration.rccl_overhead_us = r.Microseconds(v, k); }},
      {"switch_topology",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.scale_out_switch = r.Boolean(v, k); }},
      {"node_topology",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.gpu.fabric = ParseFabric(r, v, k); }},
      {"nics_per_node",
       [](R r, N v, K k, ClusterSpec& c, int&) {
         // Primus: null means one NIC per GPU.
         c.nics_per_node = v.IsNull() ? 0 : r.SmallInteger(v, k, 1);
       }},
      {"ar_overlap_factor", [](R r, N v, K k, ClusterSpec& c,
                               int&) { c.calibration.ar_overlap_factor = r.Fraction(v, k, true); }},
      {"ar_warmup_chunk_bytes",
       [](R r, N v, K k, ClusterSpec& c,
          int&) { c.calibration.ar_warmup_chunk_bytes = r.Integer(v, k, 0); }},
      {"nic_rdma_setup_us", [](R r, N v, K k, ClusterSpec& c,
                               int&) { c.calibration.nic_rdma_setup_us = r.Microseconds(v, k); }},
      {"nic_warmup_bytes", [](R r, N v, K k, ClusterSpec& c,
                              int&) { c.calibration.nic_warmup_bytes = r.Integer(v, k, 0); }},
      {"a2a_peer_lat", [](R r, N v, K k, ClusterSpec& c,
                          int&) { c.calibration.a2a_peer_lat_us = r.Microseconds(v, k); }},
      {"a2a_intra_sync_overhead",
       [](R r, N v, K k, ClusterSpec& c,
          int&) { c.calibration.a2a_intra_sync_overhead_us = r.Microseconds(v, k); }},
      {"a2a_intra_node_peer_lat",
       [](R r, N v, K k, ClusterSpec& c,
          int&) { c.calibration.a2a_intra_node_peer_lat_us = r.Microseconds(v, k); }},
      {"a2a_mesh_contention",
       [](R r, N v, K k, ClusterSpec& c,
          int&) { c.calibration.a2a_mesh_contention = r.Fraction(v, k, true); }},
      {"a2a_rccl_overhead_us",
       [](R r, N v, K k, ClusterSpec& c,
          int&) { c.calibration.a2a_rccl_overhead_us = r.Microseconds(v, k); }},
      {"a2a_remote_contention",
       [](R r, N v, K k, ClusterSpec& c,
          int&) { c.calibration.a2a_remote_contention = r.Fraction(v, k, true); }},
      // Read by Primus's sub-node summary only; kept for display.
      {"gpus_per_tray",
       [](R r, N v, K k, ClusterSpec& c, int&) { c.gpus_per_tray = r.SmallInteger(v, k, 1); }},
  };
  return setters;
}

std::vector<std::string> KeysOf(const auto& map) {
  std::vector<std::string> keys;
  for (const auto& entry : map) keys.push_back(entry.first);
  return keys;
}

void ApplyPrimus(const ConfigReader& r, const YAML::Node& section, ClusterSpec& cluster) {
  r.RequireMap(section, "hardware_config");
  int pod_size = 0;
  YAML::Node pod_size_node;
  for (const auto& entry : section) {
    const std::string key = r.Scalar(entry.first, "hardware_config");
    auto it = PrimusSetters().find(key);
    if (it == PrimusSetters().end()) r.UnknownKey(entry.first, key, PrimusHardwareConfigKeys());
    it->second(r, entry.second, key, cluster, pod_size);
    if (key == "pod_size") pod_size_node = entry.second;
  }
  // Primus counts a pod in GPUs; Sextant in whole nodes.
  if (pod_size > 0) {
    if (pod_size % cluster.gpus_per_node != 0) {
      r.Fail(pod_size_node, "pod_size",
             fmt::format("{} GPUs is not a whole number of {}-GPU nodes", pod_size,
                         cluster.gpus_per_node));
    }
    cluster.nodes_per_pod = pod_size / cluster.gpus_per_node;
  }
}

void ApplyCluster(const ConfigReader& r, const YAML::Node& section, ClusterSpec& cluster) {
  r.RequireMap(section, "cluster");
  for (const auto& entry : section) {
    const std::string key = r.Scalar(entry.first, "cluster");
    const YAML::Node& v = entry.second;
    if (key == "gpus_per_node") {
      cluster.gpus_per_node = r.SmallInteger(v, key, 1);
    } else if (key == "num_nodes") {
      cluster.num_nodes = r.SmallInteger(v, key, 1);
    } else if (key == "nodes_per_pod") {
      cluster.nodes_per_pod = r.SmallInteger(v, key, 0);
    } else if (key == "nics_per_node") {
      cluster.nics_per_node = r.SmallInteger(v, key, 1);
    } else if (key == "pod_bandwidth_gbs") {
      cluster.pod_bandwidth = r.Bandwidth(v, key) * kGBps;
    } else if (key == "pod_latency_us") {
      cluster.pod_latency = r.Within(v, key, 0, 1e6, "us") * kUs;
    } else if (key == "scale_out") {
      const std::string text = r.Scalar(v, key);
      if (text != "switch" && text != "direct") {
        r.Fail(v, key, fmt::format("expected 'switch' or 'direct', got '{}'", text));
      }
      cluster.scale_out_switch = text == "switch";
    } else if (key == "gpus_per_tray") {
      cluster.gpus_per_tray = r.SmallInteger(v, key, 1);
    } else {
      r.UnknownKey(entry.first, key, SextantClusterKeys());
    }
  }
}

void ApplyPeaks(const ConfigReader& r, const YAML::Node& section, GpuSpec& gpu) {
  r.RequireMap(section, "peak_tflops");
  for (const auto& entry : section) {
    const std::string name = r.Scalar(entry.first, "peak_tflops");
    const std::optional<DType> dtype = ParseDType(name);
    if (!dtype)
      r.Fail(entry.first, name, "unknown dtype (fp32, tf32, bf16, fp16, fp8, mxfp8, fp4)");
    // Up to an exaFLOP/s per GPU: a figure past that is a unit slip (FLOP/s for TFLOP/s).
    gpu.peak_dense_tflops[*dtype] = r.Within(entry.second, name, 1e-3, 1e6, "TFLOP/s");
    // The library's measured max-achievable figure belongs to the library's part.
    gpu.max_achievable_tflops.erase(*dtype);
  }
}

void ApplySextant(const ConfigReader& r, const YAML::Node& section, ClusterSpec& cluster) {
  r.RequireMap(section, "hardware");
  // The GPU is chosen first so the overrides below apply to it, whatever their order.
  if (const YAML::Node gpu_node = section["gpu"]) {
    const std::string name = r.Scalar(gpu_node, "gpu");
    const GpuSpec* gpu = FindGpu(name);
    if (gpu == nullptr) {
      r.Fail(gpu_node, "gpu",
             fmt::format("unknown GPU '{}'{}", name, DidYouMean(SimilarGpuNames(name))));
    }
    cluster.gpu = *gpu;
    cluster.gpus_per_node = gpu->gpus_per_node;
  }
  std::optional<double> clock_mhz;
  for (const auto& entry : section) {
    const std::string key = r.Scalar(entry.first, "hardware");
    const YAML::Node& v = entry.second;
    GpuSpec& gpu = cluster.gpu;
    if (key == "gpu") {
      continue;
    } else if (key == "clock_mhz") {
      clock_mhz = r.Within(v, key, 100, 10000, "MHz");
    } else if (key == "hbm_gib") {
      const double gib = r.Positive(v, key);
      if (gib > 1e6) r.Fail(v, key, "implausibly large");
      gpu.hbm_bytes = static_cast<int64_t>(gib * static_cast<double>(kGiB));
    } else if (key == "hbm_bandwidth_tbs") {
      gpu.hbm_bandwidth = r.Within(v, key, 1e-3, 1e3, "TB/s") * 1e12;
    } else if (key == "compute_units") {
      gpu.compute_units = r.SmallInteger(v, key, 1);
    } else if (key == "l2_mib") {
      gpu.l2_bytes =
          static_cast<int64_t>(r.Within(v, key, 0, 1e6, "MiB") * static_cast<double>(kMiB));
    } else if (key == "last_level_cache_mib") {
      gpu.last_level_cache_bytes =
          static_cast<int64_t>(r.Within(v, key, 0, 1e6, "MiB") * static_cast<double>(kMiB));
    } else if (key == "tdp_watts") {
      gpu.tdp_watts = r.Within(v, key, 1, 1e5, "W");
    } else if (key == "peak_tflops") {
      ApplyPeaks(r, v, gpu);
    } else if (key == "fabric") {
      gpu.fabric = ParseFabric(r, v, key);
    } else if (key == "intra_node_bandwidth_gbs") {
      gpu.intra_node_bandwidth = r.Bandwidth(v, key) * kGBps;
    } else if (key == "intra_node_links") {
      gpu.intra_node_links = r.SmallInteger(v, key, 1);
    } else if (key == "intra_node_latency_us") {
      gpu.intra_node_latency = r.Within(v, key, 0, 1e6, "us") * kUs;
    } else if (key == "nic_bandwidth_gbs") {
      gpu.nic_bandwidth = r.Bandwidth(v, key) * kGBps;
    } else if (key == "inter_node_latency_us") {
      gpu.inter_node_latency = r.Within(v, key, 0, 1e6, "us") * kUs;
    } else if (key == "collective_preset") {
      const std::string preset = r.Scalar(v, key);
      static const std::vector<std::string> kPresets = {"auto", "nccl", "rccl", "primus",
                                                        "primus-fixed"};
      if (std::find(kPresets.begin(), kPresets.end(), preset) == kPresets.end()) {
        r.Fail(v, key,
               fmt::format("unknown preset '{}' (auto, nccl, rccl, primus, primus-fixed)", preset));
      }
      cluster.collective_preset = preset;
    } else if (key == "cluster") {
      ApplyCluster(r, v, cluster);
    } else {
      r.UnknownKey(entry.first, key, SextantHardwareKeys());
    }
  }
  // Applied last: a clock override scales the peaks as they stand after any peak override.
  if (clock_mhz) cluster.gpu.SetClockMhz(*clock_mhz);
  cluster.gpu.gpus_per_node = cluster.gpus_per_node;
}

}  // namespace

const std::vector<std::string>& PrimusHardwareConfigKeys() {
  static const std::vector<std::string> keys = KeysOf(PrimusSetters());
  return keys;
}

const std::vector<std::string>& SextantHardwareKeys() {
  static const std::vector<std::string> keys = {"gpu",
                                                "clock_mhz",
                                                "hbm_gib",
                                                "hbm_bandwidth_tbs",
                                                "compute_units",
                                                "l2_mib",
                                                "last_level_cache_mib",
                                                "tdp_watts",
                                                "peak_tflops",
                                                "fabric",
                                                "intra_node_bandwidth_gbs",
                                                "intra_node_links",
                                                "intra_node_latency_us",
                                                "nic_bandwidth_gbs",
                                                "inter_node_latency_us",
                                                "collective_preset",
                                                "cluster"};
  return keys;
}

const std::vector<std::string>& SextantClusterKeys() {
  static const std::vector<std::string> keys = {
      "gpus_per_node",     "num_nodes",      "nodes_per_pod", "nics_per_node",
      "pod_bandwidth_gbs", "pod_latency_us", "scale_out",     "gpus_per_tray"};
  return keys;
}

ClusterSpec ParseHardwareConfig(std::string_view text, const std::string& file_name,
                                const ClusterSpec& base) {
  const ConfigReader reader(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    SourceLocation where;
    where.file = file_name;
    if (e.mark.line >= 0) {
      where.line = e.mark.line + 1;
      where.column = e.mark.column + 1;
    }
    ThrowUserError(where, "", fmt::format("not valid YAML: {}", e.msg));
  }
  if (!root.IsMap()) {
    SourceLocation where;
    where.file = file_name;
    ThrowUserError(where, "",
                   "expected a mapping with 'hardware_config:' (Primus) and/or 'hardware:' keys");
  }
  reader.RequireMap(root, "");  // no key given twice
  ClusterSpec cluster = base;
  std::optional<YAML::Node> primus;
  std::optional<YAML::Node> sextant;
  for (const auto& entry : root) {
    const std::string key = reader.Scalar(entry.first, "");
    if (key == "hardware_config") {
      primus = entry.second;
    } else if (key == "hardware") {
      sextant = entry.second;
    } else {
      reader.UnknownKey(entry.first, key, {"hardware_config", "hardware"});
    }
  }
  // Sextant's schema may switch the GPU; Primus's keys then refine that GPU's fabric.
  if (sextant) ApplySextant(reader, *sextant, cluster);
  if (primus && !primus->IsNull()) ApplyPrimus(reader, *primus, cluster);
  return cluster;
}

bool IsHardwareConfigText(std::string_view text) {
  if (text.find("hardware") == std::string_view::npos) return false;  // most configs: no parse
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap() || root.size() == 0) return false;
    for (const auto& entry : root) {
      if (!entry.first.IsScalar()) return false;
      const std::string& key = entry.first.Scalar();
      if (key != "hardware_config" && key != "hardware") return false;
    }
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::vector<std::string> HardwareConfigContradictions(const ClusterSpec& base,
                                                      const ClusterSpec& configured,
                                                      const std::string& path) {
  std::vector<std::string> out;
  // Primus's hardware files carry no GPU name; their node_topology is the one fact that tells
  // a file written for another vendor's nodes (mi300x.yaml's "mesh" on NVSwitch parts).
  if (configured.gpu.fabric != base.gpu.fabric) {
    out.push_back(fmt::format(
        "{}: node_topology {} replaces the {}'s {} ({}): intra-node collectives are modelled as "
        "the file says; is it written for another GPU's nodes?",
        path, FabricName(configured.gpu.fabric), base.gpu.name, FabricName(base.gpu.fabric),
        base.gpu.fabric == FabricKind::kSwitch ? "NVSwitch" : "xGMI links to every peer"));
  }
  return out;
}

ClusterSpec LoadHardwareConfig(const std::string& path, const ClusterSpec& base) {
  // A hardware config is a few KB; 64 MiB is far beyond any real one.
  return ParseHardwareConfig(ReadFile(path, int64_t{64} << 20), path, base);
}

}  // namespace sextant
