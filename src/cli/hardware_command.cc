// sextant hardware list | show NAME: the built-in GPU library, a cluster built from it (and
// optionally a hardware-config file), and what the collective model predicts on it.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cost/collective_model.h"
#include "cost/efficiency_table.h"
#include "hardware/hardware_library.h"
#include "report/console_table.h"
#include "report/table.h"
#include "util/close_matches.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant::cli {
namespace {

constexpr DType kDTypes[] = {DType::kFP32, DType::kTF32,  DType::kBF16, DType::kFP16,
                             DType::kFP8,  DType::kMXFP8, DType::kFP4};

Cell PeakCell(const GpuSpec& gpu, DType dtype) {
  if (!gpu.Supports(dtype)) return Cell{};
  return gpu.PeakTflops(dtype);
}

nlohmann::json PeaksJson(const GpuSpec& gpu) {
  nlohmann::json peaks = nlohmann::json::object();
  for (DType d : kDTypes) {
    if (gpu.Supports(d)) peaks[std::string(DTypeName(d))] = gpu.PeakTflops(d);
  }
  return peaks;
}

nlohmann::json MaxAchievableJson(const GpuSpec& gpu) {
  nlohmann::json maf = nlohmann::json::object();
  for (const auto& [d, tflops] : gpu.max_achievable_tflops) maf[std::string(DTypeName(d))] = tflops;
  return maf;
}

nlohmann::json GpuJson(const GpuSpec& gpu) {
  return {{"name", gpu.name},
          {"vendor", VendorName(gpu.vendor)},
          {"arch", gpu.arch},
          {"aliases", gpu.aliases},
          {"description", gpu.description},
          {"source", gpu.source},
          {"hbm_bytes", gpu.hbm_bytes},
          {"hbm_bandwidth_bytes_per_s", gpu.hbm_bandwidth},
          {"compute_units", gpu.compute_units},
          {"max_clock_mhz", gpu.max_clock_mhz},
          {"l2_bytes", gpu.l2_bytes},
          {"last_level_cache_bytes", gpu.last_level_cache_bytes},
          {"peak_dense_tflops", PeaksJson(gpu)},
          {"max_achievable_tflops", MaxAchievableJson(gpu)},
          {"max_achievable_source", gpu.max_achievable_source},
          {"tdp_watts", gpu.tdp_watts},
          {"fabric", FabricName(gpu.fabric)},
          {"intra_node_bandwidth_bytes_per_s", gpu.intra_node_bandwidth},
          {"intra_node_links", gpu.intra_node_links},
          {"intra_node_latency_s", gpu.intra_node_latency},
          {"gpus_per_node", gpu.gpus_per_node},
          {"nic_bandwidth_bytes_per_s", gpu.nic_bandwidth},
          {"inter_node_latency_s", gpu.inter_node_latency}};
}

Table GpuListTable() {
  Table t("gpus", "Built-in GPU library (peaks: dense TFLOP/s, no sparsity)",
          {{"name", "name"},
           {"arch", "arch"},
           {"hbm_gib", "HBM (GiB)", 1},
           {"hbm_tbs", "HBM (TB/s)", 2},
           {"units", "CU/SM"},
           {"bf16", "BF16", 1},
           {"fp8", "FP8", 1},
           {"fp4", "FP4", 1},
           {"fabric", "fabric"},
           {"intra_gbs", "link (GB/s)", 1},
           {"nic_gbits", "NIC (Gb/s)", 0},
           {"tdp", "TDP (W)", 0}});
  for (const GpuSpec& g : GpuLibrary()) {
    t.AddRow({g.name, g.arch, ToGiB(g.hbm_bytes), g.hbm_bandwidth / 1e12, int64_t{g.compute_units},
              PeakCell(g, DType::kBF16), PeakCell(g, DType::kFP8), PeakCell(g, DType::kFP4),
              fmt::format("{} x{}", FabricName(g.fabric), g.gpus_per_node),
              g.intra_node_bandwidth / 1e9, g.nic_bandwidth * 8 / 1e9, g.tdp_watts});
  }
  t.AddNote(
      "arch: gfx = AMD, sm = NVIDIA. HBM: nvidia-smi's memory.total for NVIDIA parts, the "
      "HBM stacks' capacity for AMD parts.");
  t.AddNote("link: intra-node bandwidth per GPU, one direction, all xGMI/NVLink links together.");
  t.AddNote(
      "fabric: mesh (xGMI, a link per peer) or switch (NVSwitch) x GPUs sharing it. NIC: per "
      "GPU.");
  t.AddNote("Sources per GPU: 'sextant hardware show NAME'.");
  return t;
}

const GpuSpec& LookupGpu(const std::string& name) {
  const GpuSpec* gpu = FindGpu(name);
  if (gpu != nullptr) {
    if (const std::vector<std::string> also = OtherGpusOfArch(*gpu, name); !also.empty()) {
      std::fprintf(stderr, "sextant: note: %s is also %s: showing %s; name the GPU to choose\n",
                   name.c_str(), fmt::format("{}", fmt::join(also, ", ")).c_str(),
                   gpu->name.c_str());
    }
    return *gpu;
  }
  // A device name as drivers and traces write it ("NVIDIA H200", "AMD Instinct MI300X"); only
  // with its vendor's name, so that a mistyped "H1000" is not read as the H100 it contains.
  const bool device_name = name.find("NVIDIA") != std::string::npos ||
                           name.find("AMD") != std::string::npos ||
                           name.find("Tesla") != std::string::npos;
  gpu = device_name ? FindGpuForDevice(name) : nullptr;
  if (gpu != nullptr) return *gpu;
  if (const std::string_view why = UnheldPart(name); !why.empty()) {
    ThrowUserError(
        fmt::format("'{}' is a part the library does not hold ({}): its figures are "
                    "not any entry's; a --hardware-config over the nearest entry "
                    "states them",
                    name, why));
  }
  ThrowUserError(fmt::format("unknown GPU '{}'{} ('sextant hardware list' shows all)", name,
                             DidYouMean(SimilarGpuNames(name))));
}

struct CollectiveRow {
  Collective op;
  int64_t bytes;
  CommGroup group;
  std::string group_label;
  CollectiveEstimate estimate;
};

// A fixed menu of collectives that shows how the model behaves on this cluster: one node,
// and the whole cluster when it has more than one node.
std::vector<CollectiveRow> CollectiveRows(const ClusterSpec& cluster,
                                          const CollectiveModel& model) {
  std::vector<std::pair<CommGroup, std::string>> groups;
  const int node = std::max(1, cluster.gpus_per_node);
  groups.push_back({CommGroup{node, node}, fmt::format("{} GPUs, 1 node", node)});
  if (cluster.num_nodes > 1) {
    groups.push_back({CommGroup{cluster.WorldSize(), node},
                      fmt::format("{} GPUs, {} nodes", cluster.WorldSize(), cluster.num_nodes)});
  }
  std::vector<CollectiveRow> rows;
  for (const auto& [group, label] : groups) {
    for (Collective op : {Collective::kAllReduce, Collective::kAllGather,
                          Collective::kReduceScatter, Collective::kAllToAll}) {
      for (int64_t bytes : {int64_t{1} << 20, int64_t{64} << 20, int64_t{1} << 30}) {
        rows.push_back({op, bytes, group, label, model.Estimate(op, bytes, group)});
      }
    }
  }
  const CommGroup pair_intra{2, 2};
  rows.push_back({Collective::kSendRecv, int64_t{16} << 20, pair_intra, "2 GPUs, same node",
                  model.Estimate(Collective::kSendRecv, int64_t{16} << 20, pair_intra)});
  if (cluster.num_nodes > 1) {
    const CommGroup pair_inter{2, 1};
    rows.push_back({Collective::kSendRecv, int64_t{16} << 20, pair_inter, "2 GPUs, 2 nodes",
                    model.Estimate(Collective::kSendRecv, int64_t{16} << 20, pair_inter)});
  }
  return rows;
}

// `nodes`: --nodes when given, which wins over the file's cluster.num_nodes as a flag wins
// over configuration everywhere else.
void Show(const std::string& name, const std::string& config, std::optional<int> nodes,
          const std::string& preset, bool json) {
  ClusterSpec cluster = MakeCluster(LookupGpu(name), nodes.value_or(1));
  // What the config file changed of what the command line asked for, said next to the result.
  std::vector<std::string> replaced;
  if (!config.empty()) {
    const ClusterSpec asked = cluster;
    cluster = LoadHardwareConfig(config, cluster);
    for (const std::string& w : HardwareConfigContradictions(asked, cluster, config)) {
      std::fprintf(stderr, "sextant: warning: %s\n", w.c_str());
    }
    if (cluster.gpu.name != asked.gpu.name) {
      replaced.push_back(
          fmt::format("{}'s gpu: {} replaces {}", config, cluster.gpu.name, asked.gpu.name));
    }
    if (nodes && cluster.num_nodes != *nodes) {
      replaced.push_back(fmt::format("--nodes {} replaces {}'s cluster.num_nodes {}", *nodes,
                                     config, cluster.num_nodes));
      cluster.num_nodes = *nodes;
    }
  }
  for (const std::string& r : replaced) std::fprintf(stderr, "sextant: note: %s\n", r.c_str());
  const std::unique_ptr<CollectiveModel> model = MakeCollectiveModel(cluster, preset);
  const std::vector<CollectiveRow> rows = CollectiveRows(cluster, *model);
  const GpuSpec& g = cluster.gpu;

  if (json) {
    nlohmann::json collectives = nlohmann::json::array();
    for (const CollectiveRow& r : rows) {
      collectives.push_back({{"op", CollectiveName(r.op)},
                             {"bytes", r.bytes},
                             {"group_size", r.group.size},
                             {"ranks_per_node", r.group.ranks_per_node},
                             {"time_us", r.estimate.seconds * 1e6},
                             {"algorithm", r.estimate.algorithm},
                             {"protocol", r.estimate.protocol},
                             {"bus_bandwidth_gbs", r.estimate.bus_bandwidth / 1e9}});
    }
    nlohmann::json j = {{"gpu", GpuJson(g)},
                        {"cluster",
                         {{"gpus_per_node", cluster.gpus_per_node},
                          {"num_nodes", cluster.num_nodes},
                          {"world_size", cluster.WorldSize()},
                          {"nodes_per_pod", cluster.nodes_per_pod},
                          {"nics_per_node", cluster.NicsPerNode()},
                          {"pod_bandwidth_bytes_per_s", cluster.PodBandwidth()},
                          {"pod_latency_s", cluster.PodLatency()},
                          {"scale_out_switch", cluster.scale_out_switch}}},
                        {"collective_model", model->Name()},
                        {"collectives", collectives}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }

  Table spec("gpu", fmt::format("{}: {}", g.name, g.description),
             {{"key", "field"}, {"value", "value"}});
  spec.AddRow({std::string("vendor / arch"), fmt::format("{} / {}", VendorName(g.vendor), g.arch)});
  spec.AddRow({std::string("HBM"), fmt::format("{:.1f} GiB at {:.2f} TB/s", ToGiB(g.hbm_bytes),
                                               g.hbm_bandwidth / 1e12)});
  spec.AddRow(
      {std::string(g.vendor == Vendor::kAMD ? "compute units" : "SMs"), int64_t{g.compute_units}});
  spec.AddRow({std::string("max clock"), fmt::format("{:.0f} MHz", g.max_clock_mhz)});
  spec.AddRow({std::string("L2 cache"), FormatBytes(g.l2_bytes)});
  spec.AddRow({std::string("last-level cache"),
               g.last_level_cache_bytes > 0 ? FormatBytes(g.last_level_cache_bytes) : "none"});
  spec.AddRow({std::string("TDP"), fmt::format("{:.0f} W", g.tdp_watts)});
  spec.AddRow({std::string("intra-node fabric"),
               fmt::format("{}, {} links, {:.1f} GB/s per GPU per direction, {:.2f} us hop",
                           FabricName(g.fabric), g.intra_node_links, g.intra_node_bandwidth / 1e9,
                           g.intra_node_latency * 1e6)});
  spec.AddRow({std::string("scale-out"),
               fmt::format("{:.0f} Gb/s NIC per GPU, {:.2f} us hop", g.nic_bandwidth * 8 / 1e9,
                           g.inter_node_latency * 1e6)});
  spec.AddRow({std::string("cluster"),
               fmt::format("{} node(s) x {} GPUs, {} NICs per node{}", cluster.num_nodes,
                           cluster.gpus_per_node, cluster.NicsPerNode(),
                           cluster.nodes_per_pod > 0
                               ? fmt::format(", pods of {} nodes ({:.1f} GB/s per GPU, {:.2f} us)",
                                             cluster.nodes_per_pod, cluster.PodBandwidth() / 1e9,
                                             cluster.PodLatency() * 1e6)
                               : std::string())});
  spec.AddNote("Source: " + g.source);
  if (!g.aliases.empty())
    spec.AddNote("Also accepted as: " + fmt::format("{}", fmt::join(g.aliases, ", ")));
  if (!config.empty()) spec.AddNote("With hardware config " + config);
  std::printf("%s\n", RenderConsoleTable(spec, 0).c_str());

  // A column of measured ceilings where the vendor published them (the cost model's
  // largest-GEMM ceiling); other GPUs use their vendor's default fraction of peak.
  const bool measured = !g.max_achievable_tflops.empty();
  std::vector<Column> peak_columns = {{"dtype", "dtype"}, {"tflops", "TFLOP/s", 1}};
  if (measured) peak_columns.push_back({"max_achievable_tflops", "max achievable", 1});
  Table peaks("peaks", "Peak dense throughput", peak_columns);
  for (DType d : kDTypes) {
    if (!g.Supports(d)) continue;
    std::vector<Cell> row = {std::string(DTypeName(d)), g.PeakTflops(d)};
    if (measured) {
      const auto maf = g.max_achievable_tflops.find(d);
      row.push_back(maf == g.max_achievable_tflops.end() ? Cell{} : Cell(maf->second));
    }
    peaks.AddRow(row);
  }
  if (measured) {
    peaks.AddNote(
        "Max achievable: the largest-GEMM throughput the vendor measured at sustained clocks; "
        "the cost model's GEMM ceiling. Source: " +
        g.max_achievable_source);
  } else if (g.vendor == Vendor::kAMD) {
    // The ceiling the efficiency table falls back to, read from it rather than restated.
    const double ceiling = EfficiencyTable::Default(g).GemmFraction(DType::kBF16, 1e15);
    peaks.AddNote(fmt::format(
        "No max-achievable figure is published for this GPU: the cost model's GEMM ceiling is "
        "the MI300X's measured fraction of peak ({:.1f}% bf16)",
        ceiling * 100));
  }
  std::printf("%s\n", RenderConsoleTable(peaks, 0).c_str());

  Table coll("collectives", fmt::format("Collective model '{}'", model->Name()),
             {{"op", "collective"},
              {"group", "group"},
              {"bytes", "size"},
              {"time_us", "time (us)", 1},
              {"algorithm", "algorithm"},
              {"protocol", "protocol"},
              {"busbw", "busbw (GB/s)", 1}});
  for (const CollectiveRow& r : rows) {
    coll.AddRow({std::string(CollectiveName(r.op)), r.group_label, FormatBytes(r.bytes),
                 r.estimate.seconds * 1e6, r.estimate.algorithm, r.estimate.protocol,
                 r.estimate.bus_bandwidth / 1e9});
  }
  coll.AddNote(
      "size: per-rank buffer as NCCL counts it (all-gather: output; all-to-all: sent). "
      "busbw: NCCL's bus bandwidth, algbw x 2(n-1)/n (all-reduce), x (n-1)/n (others).");
  std::printf("%s", RenderConsoleTable(coll, 0).c_str());
}

}  // namespace

void AddHardwareCommands(CLI::App& app) {
  auto* cmd = app.add_subcommand("hardware", "The built-in GPU library and collective model");
  cmd->require_subcommand(1);

  auto* list = cmd->add_subcommand("list", "List every GPU with its headline figures");
  auto list_json = std::make_shared<bool>(false);
  list->add_flag("--json", *list_json, "Machine-readable output");
  list->callback([list_json] {
    if (*list_json) {
      nlohmann::json gpus = nlohmann::json::array();
      for (const GpuSpec& g : GpuLibrary()) gpus.push_back(GpuJson(g));
      std::printf("%s\n", nlohmann::json({{"gpus", gpus}}).dump(2).c_str());
    } else {
      std::printf("%s", RenderConsoleTable(GpuListTable(), 0).c_str());
    }
  });

  auto* show = cmd->add_subcommand(
      "show", "One GPU's figures, its cluster, and predicted collective times on it");
  auto name = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto preset = std::make_shared<std::string>("auto");
  auto nodes = std::make_shared<int>(1);
  auto show_json = std::make_shared<bool>(false);
  show->add_option("NAME", *name, "GPU name or alias (MI300X, gfx942, h100_sxm, ...)")->required();
  show->add_option("--hardware-config", *config,
                   "Primus 'hardware_config:' or Sextant 'hardware:' YAML applied on top");
  show->add_option("--nodes", *nodes, "Nodes in the cluster (default 1)")
      ->check(CLI::Range(1, 1000000));
  show->add_option("--collective-preset", *preset, "auto, nccl, rccl, primus or primus-fixed");
  show->add_flag("--json", *show_json, "Machine-readable output");
  show->callback([name, config, nodes, preset, show_json, show] {
    Show(*name, *config, show->count("--nodes") > 0 ? std::optional<int>(*nodes) : std::nullopt,
         *preset, *show_json);
  });
}

}  // namespace sextant::cli
