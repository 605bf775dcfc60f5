#include "projection/search_report.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string_view>

#include <fmt/format.h>

#include "job/maxtext_remat.h"
#include "job/torchtitan_schedules.h"
#include "report/console_table.h"
#include "util/units.h"

namespace sextant {
namespace {

const char* ObjectiveName(SearchObjective o) {
  return o == SearchObjective::kMemory ? "memory" : "tokens";
}

RecomputeGranularity ParseRecompute(const std::string& name) {
  if (name == "selective") return RecomputeGranularity::kSelective;
  if (name == "full") return RecomputeGranularity::kFull;
  return RecomputeGranularity::kNone;
}

Verdict ParseVerdict(const std::string& name) {
  if (name == "OOM") return Verdict::kOom;
  if (name == "AT-RISK") return Verdict::kAtRisk;
  return Verdict::kFits;
}

double GiB(int64_t bytes) { return static_cast<double>(bytes) / kGiB; }

// Whether a table is read by a person (console) or by a program (CSV, XLSX).
enum class Reader { kPerson, kProgram };

// "7/6" for first/last stage layers, "even" otherwise; a layout string in full for programs,
// "layout" for a person (32 stages do not fit a column; the overrides print it in full).
std::string LayerSplit(const Candidate& c, Reader reader) {
  if (!c.layout.empty()) return reader == Reader::kProgram ? c.layout : "layout";
  if (c.first_stage_layers < 0) return "even";
  return fmt::format("{}/{}", c.first_stage_layers, c.last_stage_layers);
}

// The schedule, and the others that built the same step for this configuration.
std::string ScheduleCell(const SearchEntry& e) {
  std::string cell(ScheduleKindName(e.candidate.schedule));
  for (ScheduleKind k : e.same_step_schedules) cell += fmt::format(" = {}", ScheduleKindName(k));
  return cell;
}

// MaxText shards over its mesh's fsdp axis (XLA), not with PyTorch's FSDP2.
std::string ShardingCell(const Candidate& c, const std::string& framework) {
  if (framework == "maxtext" && c.fsdp2) return "fsdp";
  return ShardingName(c);
}

Table EntryTable(const std::string& name, const std::string& title,
                 const std::vector<SearchEntry>& entries, Reader reader,
                 const std::string& framework) {
  Table t(name, title,
          {{"rank", "#", 0},
           {"tp", "TP", 0},
           {"pp", "PP", 0},
           {"vpp", "VPP", 0},
           {"cp", "CP", 0},
           {"ep", "EP", 0},
           {"etp", "ETP", 0},
           {"dp", "DP", 0},
           {"mbs", "mbs", 0},
           {"recompute", "recompute", 0},
           {"sharding", "sharding", 0},
           {"schedule", "schedule", 0},
           {"layer_split", "layer split", 0},
           {"tokens_per_s_per_gpu", "tokens/s/GPU", 1},
           {"model_tflops", "TFLOP/s", 1},
           {"mfu_pct", "MFU %", 1},
           {"peak_gib", "peak GiB", 2},
           {"headroom_gib", "headroom GiB", 2},
           {"verdict", "memory", 0}});
  int64_t rank = 0;
  for (const SearchEntry& e : entries) {
    const Candidate& c = e.candidate;
    t.AddRow({++rank, int64_t{c.tp}, int64_t{c.pp}, int64_t{c.vpp}, int64_t{c.cp}, int64_t{c.ep},
              int64_t{c.etp}, int64_t{c.dp}, c.micro_batch_size,
              std::string(RecomputeName(c.recompute)), ShardingCell(c, framework), ScheduleCell(e),
              LayerSplit(c, reader), e.tokens_per_s_per_gpu, e.model_tflops_per_gpu, e.mfu * 100,
              GiB(e.peak_bytes), GiB(e.HeadroomBytes()), std::string(VerdictName(e.verdict))});
  }
  return t;
}

nlohmann::json CountsJson(const SearchCounts& c) {
  return {{"enumerated", c.enumerated},
          {"pruned", c.pruned},
          {"invalid", c.invalid},
          {"out_of_memory", c.out_of_memory},
          {"evaluated", c.evaluated},
          {"fully_evaluated", c.fully_evaluated},
          {"layer_shapes_skipped", c.shapes_skipped},
          {"valid", c.Valid()}};
}

nlohmann::json SameStepSchedulesJson(const SearchEntry& e) {
  nlohmann::json j = nlohmann::json::array();
  for (ScheduleKind k : e.same_step_schedules) j.push_back(ScheduleKindName(k));
  return j;
}

// Valid configurations (built, validated, costed by the memory model) per second: pruned and
// invalid candidates are not work done for the answer.
double ValidPerSecond(const SearchResult& r) {
  return r.wall_s > 0 ? static_cast<double>(r.counts.Valid()) / r.wall_s : 0;
}

}  // namespace

nlohmann::json SearchEntryJson(const SearchEntry& e) {
  const Candidate& c = e.candidate;
  return {{"parallel", ParallelSizesJson(c.Sizes())},
          {"micro_batch_size", c.micro_batch_size},
          {"micro_batches", e.micro_batches},
          {"recompute", RecomputeName(c.recompute)},
          {"distributed_optimizer", c.distributed_optimizer},
          {"fsdp2", c.fsdp2},
          {"schedule", ScheduleKindName(c.schedule)},
          {"same_step_schedules", SameStepSchedulesJson(e)},
          {"decoder_first_pipeline_num_layers", c.first_stage_layers},
          {"decoder_last_pipeline_num_layers", c.last_stage_layers},
          {"pipeline_model_parallel_layout", c.layout},
          {"iteration_time_ms", e.iteration_time_ms},
          {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
          {"model_tflops_per_gpu", e.model_tflops_per_gpu},
          {"hardware_tflops_per_gpu", e.hardware_tflops_per_gpu},
          {"mfu", e.mfu},
          {"bubble_ratio", e.bubble_ratio},
          {"peak_bytes", e.peak_bytes},
          {"peak_pp_rank", e.peak_rank},
          {"capacity_bytes", e.capacity_bytes},
          {"headroom_bytes", e.HeadroomBytes()},
          {"verdict", VerdictName(e.verdict)},
          {"estimated_iteration_time_ms", e.estimated_iteration_ms},
          {"full_projection", e.full}};
}

SearchEntry SearchEntryFromJson(const nlohmann::json& j) {
  SearchEntry e;
  Candidate& c = e.candidate;
  const ParallelPlan p = ParallelSizesFromJson(j.at("parallel"));
  c.tp = p.tp;
  c.pp = p.pp;
  c.vpp = p.vpp;
  c.cp = p.cp;
  c.ep = p.ep;
  c.etp = p.etp;
  c.dp = p.dp;
  c.micro_batch_size = j.at("micro_batch_size").get<int64_t>();
  c.recompute = ParseRecompute(j.at("recompute").get<std::string>());
  c.distributed_optimizer = j.at("distributed_optimizer").get<bool>();
  c.fsdp2 = j.at("fsdp2").get<bool>();
  c.schedule = ParseScheduleKind(j.at("schedule").get<std::string>());
  if (j.contains("same_step_schedules")) {
    for (const auto& name : j.at("same_step_schedules")) {
      e.same_step_schedules.push_back(ParseScheduleKind(name.get<std::string>()));
    }
  }
  c.first_stage_layers = j.at("decoder_first_pipeline_num_layers").get<int64_t>();
  c.last_stage_layers = j.at("decoder_last_pipeline_num_layers").get<int64_t>();
  c.layout = j.at("pipeline_model_parallel_layout").get<std::string>();
  e.micro_batches = j.at("micro_batches").get<int64_t>();
  e.iteration_time_ms = j.at("iteration_time_ms").get<double>();
  e.tokens_per_s_per_gpu = j.at("tokens_per_s_per_gpu").get<double>();
  e.model_tflops_per_gpu = j.at("model_tflops_per_gpu").get<double>();
  e.hardware_tflops_per_gpu = j.at("hardware_tflops_per_gpu").get<double>();
  e.mfu = j.at("mfu").get<double>();
  e.bubble_ratio = j.at("bubble_ratio").get<double>();
  e.peak_bytes = j.at("peak_bytes").get<int64_t>();
  e.peak_rank = j.at("peak_pp_rank").get<int>();
  e.capacity_bytes = j.at("capacity_bytes").get<int64_t>();
  e.verdict = ParseVerdict(j.at("verdict").get<std::string>());
  e.estimated_iteration_ms = j.at("estimated_iteration_time_ms").get<double>();
  e.full = j.at("full_projection").get<bool>();
  return e;
}

namespace {

// torchtitan (torchtitan/distributed/pipeline_parallel.py, parallelism.* and training.* of its
// job config): TP, PP with its schedule class and stages, CP, EP, the FSDP shard degree, the
// batch, and activation checkpointing.
PrimusOverrides TorchTitanOverrides(const Candidate& c, bool moe, int64_t layers,
                                    int64_t global_batch) {
  PrimusOverrides o;
  auto add = [&](const char* key, std::string value) { o.values.emplace_back(key, value); };
  add("parallelism.tensor_parallel_degree", std::to_string(c.tp));
  add("parallelism.pipeline_parallel_degree", std::to_string(c.pp));
  if (c.pp > 1) {
    // The search offers a torchtitan job only the schedules torchtitan has.
    const TorchTitanSchedule* schedule = TorchTitanScheduleFor(c.schedule);
    add("parallelism.pipeline_parallel_schedule",
        std::string(schedule != nullptr ? schedule->name : "1F1B"));
    // Multi-stage schedules default to two stages per rank; more take layers_per_stage, with
    // stages = ceil((layers + 1 + 1) / layers_per_stage) (the embedding and the output count
    // one layer each).
    if (c.schedule == ScheduleKind::kInterleaved1F1B && c.vpp > 2 && layers > 0) {
      const int64_t stages = int64_t{c.pp} * c.vpp;
      int64_t per_stage = 0;
      for (int64_t n = 1; n <= layers + 2 && per_stage == 0; ++n) {
        if ((layers + 2 + n - 1) / n == stages) per_stage = n;
      }
      if (per_stage > 0) {
        add("parallelism.pipeline_parallel_layers_per_stage", std::to_string(per_stage));
      } else {
        o.notes.push_back(
            fmt::format("no pipeline_parallel_layers_per_stage gives {} stages of "
                        "{} layers in torchtitan",
                        stages, layers));
      }
    }
    add("parallelism.pipeline_parallel_microbatch_size", std::to_string(c.micro_batch_size));
  }
  add("parallelism.context_parallel_degree", std::to_string(c.cp));
  if (moe) {
    add("parallelism.expert_parallel_degree", std::to_string(c.ep));
    add("parallelism.expert_tensor_parallel_degree", std::to_string(c.etp));
  }
  add("parallelism.data_parallel_shard_degree", std::to_string(c.dp));
  // Without PP the local batch is the micro-batch and torchtitan accumulates up to the global
  // batch; with PP the local batch is split into pipeline micro-batches.
  if (global_batch > 0) {
    add("training.local_batch_size",
        std::to_string(c.pp > 1 ? global_batch / std::max(1, c.dp) : c.micro_batch_size));
    add("training.global_batch_size", std::to_string(global_batch));
  }
  switch (c.recompute) {
    case RecomputeGranularity::kNone: add("activation_checkpoint.mode", "none"); break;
    case RecomputeGranularity::kSelective:
      add("activation_checkpoint.mode", "selective");
      add("activation_checkpoint.selective_ac_option", "op");
      break;
    case RecomputeGranularity::kFull: add("activation_checkpoint.mode", "full"); break;
  }
  return o;
}

// MaxText's mesh (ici_*_parallelism; MaxText shards parameters and optimizer state over the
// fsdp axis) and remat policy. Its batch is per_device_batch_size: said in a note.
PrimusOverrides MaxTextOverrides(const Candidate& c, bool moe, int64_t global_batch,
                                 int gpus_per_node) {
  PrimusOverrides o;
  auto add = [&](const std::string& key, std::string value) { o.values.emplace_back(key, value); };
  // The ici_* axes multiply to the GPUs of one node and the dcn_* axes to the nodes (MaxText's
  // mesh: ici within a slice, dcn across slices). The node is filled tensor first (the most
  // communication), then expert, sequence, fsdp and pipeline; what does not fit goes to dcn.
  // The expert axis is a mesh axis of its own in MaxText; in the plan EP folds into DP.
  const std::pair<const char*, int> axes[] = {{"tensor", c.tp},
                                              {"expert", c.ep},
                                              {"sequence", c.cp},
                                              {"fsdp", moe ? c.dp / std::max(1, c.ep) : c.dp},
                                              {"pipeline", c.pp}};
  int room = gpus_per_node > 0 ? gpus_per_node : std::numeric_limits<int>::max();
  std::vector<std::pair<std::string, std::string>> dcn;
  for (const auto& [name, size] : axes) {
    if (!moe && std::string_view(name) == "expert") continue;
    const int ici = gpus_per_node > 0 ? std::gcd(size, room) : size;
    room /= std::max(1, ici);
    add(fmt::format("ici_{}_parallelism", name), std::to_string(ici));
    if (gpus_per_node > 0) {
      dcn.emplace_back(fmt::format("dcn_{}_parallelism", name), std::to_string(size / ici));
    }
  }
  // base.yml's dcn_data_parallelism is -1 (fill the remaining nodes): the plan's data
  // parallelism is all in fsdp, so the data axis is 1.
  if (gpus_per_node > 0) dcn.emplace_back("dcn_data_parallelism", "1");
  for (auto& kv : dcn) o.values.push_back(std::move(kv));
  // The search projects "selective" as this policy (job/maxtext_remat.h).
  switch (c.recompute) {
    case RecomputeGranularity::kNone: add("remat_policy", "none"); break;
    case RecomputeGranularity::kSelective:
      add("remat_policy", std::string(kMaxTextSelectivePolicy));
      break;
    case RecomputeGranularity::kFull: add("remat_policy", "full"); break;
  }
  if (global_batch > 0) {
    // per_device_batch_size is one accumulation step's batch per device (every device of the
    // mesh, TP / PP / CP ones included), gradient_accumulation_steps the steps (MaxText
    // configs/types.py calculate_global_batch_sizes). With a pipeline, one step's batch is split
    // into num_pipeline_microbatches of the plan's micro-batch.
    const int64_t devices = int64_t{c.tp} * c.pp * c.cp * c.dp;
    const int64_t micro = c.micro_batch_size * std::max(1, c.dp);  // sequences per micro-batch
    const int64_t micro_batches = std::max<int64_t>(1, global_batch / std::max<int64_t>(1, micro));
    const int64_t steps = c.pp > 1 ? 1 : micro_batches;
    const double per_device =
        static_cast<double>(micro * (micro_batches / steps)) / static_cast<double>(devices);
    add("per_device_batch_size", fmt::format("{:g}", per_device));
    add("gradient_accumulation_steps", std::to_string(steps));
    if (c.pp > 1) add("num_pipeline_microbatches", std::to_string(micro_batches));
  }
  return o;
}

}  // namespace

PrimusOverrides ToPrimusOverrides(const SearchEntry& entry, bool moe, const std::string& framework,
                                  int64_t layers, int64_t global_batch, int gpus_per_node) {
  const Candidate& c = entry.candidate;
  if (framework == "torchtitan") return TorchTitanOverrides(c, moe, layers, global_batch);
  if (framework == "maxtext") return MaxTextOverrides(c, moe, global_batch, gpus_per_node);
  PrimusOverrides o;
  auto add = [&](const char* key, std::string value) { o.values.emplace_back(key, value); };
  add("tensor_model_parallel_size", std::to_string(c.tp));
  add("sequence_parallel", c.tp > 1 ? "true" : "false");
  add("pipeline_model_parallel_size", std::to_string(c.pp));
  // Every key that shapes the pipeline split is given, "null" where this plan does not use it:
  // pasted over an experiment that sets one (a layout, VPP by another name, uneven ends), the
  // old value would otherwise clash with the plan or silently change it.
  // A layout's stage count gives Megatron the virtual stages (PP x VPP stages); both at once is
  // a second source of the same number.
  // Megatron-Bridge's recipes take Megatron-Core's virtual_pipeline_model_parallel_size;
  // Primus's Megatron backend its own num_virtual_stages_per_pipeline_rank.
  const bool bridge = framework == "megatron_bridge";
  const std::string vpp = c.vpp > 1 && c.layout.empty() ? std::to_string(c.vpp) : "null";
  if (!bridge) add("num_virtual_stages_per_pipeline_rank", vpp);
  add("virtual_pipeline_model_parallel_size", bridge ? vpp : "null");
  add("num_layers_per_virtual_pipeline_stage", "null");
  const bool uneven = c.first_stage_layers >= 0;
  add("decoder_first_pipeline_num_layers", uneven ? std::to_string(c.first_stage_layers) : "null");
  add("decoder_last_pipeline_num_layers", uneven ? std::to_string(c.last_stage_layers) : "null");
  add("pipeline_model_parallel_layout", c.layout.empty() ? "null" : c.layout);
  add("context_parallel_size", std::to_string(c.cp));
  if (moe) {
    add("expert_model_parallel_size", std::to_string(c.ep));
    add("expert_tensor_parallel_size", std::to_string(c.etp));
  }
  add("micro_batch_size", std::to_string(c.micro_batch_size));
  add("use_distributed_optimizer", c.distributed_optimizer ? "true" : "false");
  // Given either way: an experiment's FSDP2 would otherwise survive into a plan with PP.
  // Primus's Megatron-Bridge examples shard with Megatron-FSDP (use_megatron_fsdp).
  add(bridge ? "use_megatron_fsdp" : "use_torch_fsdp2", c.fsdp2 ? "true" : "false");
  switch (c.recompute) {
    case RecomputeGranularity::kNone: add("recompute_granularity", "null"); break;
    case RecomputeGranularity::kSelective: add("recompute_granularity", "selective"); break;
    case RecomputeGranularity::kFull:
      add("recompute_granularity", "full");
      add("recompute_method", "uniform");
      add("recompute_num_layers", "1");
      break;
  }
  const std::string_view algorithm = PrimusPipelineAlgorithm(c.schedule);
  if (c.schedule != ScheduleKind::k1F1B && c.schedule != ScheduleKind::kInterleaved1F1B) {
    if (algorithm.empty()) {
      o.notes.push_back(fmt::format(
          "schedule {} has no pp_algorithm in Primus's pipeline patch: run it with Sextant's "
          "--pipeline-schedule-algorithm {}",
          ScheduleKindName(c.schedule), ScheduleKindName(c.schedule)));
    } else {
      add("patch_primus_pipeline", "true");
      add("pp_algorithm", std::string(algorithm));
    }
  }
  return o;
}

namespace {

std::string TopTitle(const SearchResult& r) {
  return r.top.size() == 1 ? std::string("Top configuration")
                           : fmt::format("Top {} configurations", r.top.size());
}

}  // namespace

std::vector<Table> SearchResultTables(const SearchResult& r) {
  return {EntryTable("top", TopTitle(r), r.top, Reader::kProgram, r.framework),
          EntryTable("pareto", "Pareto front: tokens/s per GPU vs peak memory", r.pareto,
                     Reader::kProgram, r.framework)};
}

std::string RenderSearchResult(const SearchResult& r) {
  std::string out =
      fmt::format("{} on {} node(s) x {} {} | global batch {} x sequence {} | ranked by {}\n\n",
                  r.model, r.nodes, r.gpus_per_node, r.gpu, r.global_batch_size, r.seq_length,
                  r.objective == SearchObjective::kMemory ? "memory headroom" : "tokens/s per GPU");
  // Never one line per column (RenderConsoleTable's form for a wide single row): the two
  // tables are read side by side, column by column.
  out += RenderConsoleTable(EntryTable("top", TopTitle(r), r.top, Reader::kPerson, r.framework), 60,
                            0) +
         "\n";
  out += RenderConsoleTable(EntryTable("pareto",
                                       "Pareto front: tokens/s per GPU vs peak memory (no other "
                                       "configuration is both faster and smaller)",
                                       r.pareto, Reader::kPerson, r.framework),
                            60, 0) +
         "\n";
  const SearchCounts& c = r.counts;
  out += fmt::format(
      "Search: {} candidates enumerated ({} pruned before being built: layers not split over "
      "PP x VPP), {} invalid, {} out of memory, {} evaluated ({} re-run with the full "
      "projection) in {:.2f} s on {} process(es) x {} thread(s): {:.0f} valid configurations/s "
      "({:.0f} per thread)\n\nAssumptions:\n",
      c.enumerated, c.pruned, c.invalid, c.out_of_memory, c.evaluated, c.fully_evaluated, r.wall_s,
      r.processes, r.threads, ValidPerSecond(r),
      ValidPerSecond(r) / std::max(1, r.processes * static_cast<int>(r.threads)));
  for (const std::string& a : r.assumptions) out += "  - " + a + "\n";
  if (!r.top.empty()) {
    const PrimusOverrides o = ToPrimusOverrides(r.top.front(), r.moe, r.framework, r.layers,
                                                r.global_batch_size, r.gpus_per_node);
    out += "\nThe best configuration as Primus overrides:\n  command line:";
    // A layout string holds '|', '*' and '(': quoted for the shell and for YAML.
    const auto special = [](const std::string& v) {
      return v.find_first_of("|*()&;<>$ ") != std::string::npos;
    };
    for (const auto& [key, value] : o.values) {
      out += special(value) ? fmt::format(" --{} '{}'", key, value)
                            : fmt::format(" --{} {}", key, value);
    }
    out += fmt::format("\n  YAML, under modules.{}.overrides:\n",
                       r.module.empty() ? "pre_trainer" : r.module);
    // Dotted keys (torchtitan's parallelism.*) nest under their section, as its job config
    // files write them.
    std::string section;
    for (const auto& [key, value] : o.values) {
      const size_t dot = key.find('.');
      std::string leaf = key, indent = "    ";
      if (dot != std::string::npos) {
        if (key.substr(0, dot) != section) {
          section = key.substr(0, dot);
          out += fmt::format("    {}:\n", section);
        }
        leaf = key.substr(dot + 1);
        indent = "      ";
      } else {
        section.clear();
      }
      out += special(value) ? fmt::format("{}{}: \"{}\"\n", indent, leaf, value)
                            : fmt::format("{}{}: {}\n", indent, leaf, value);
    }
    for (const std::string& n : o.notes) out += "  note: " + n + "\n";
  }
  return out;
}

nlohmann::json SearchResultJson(const SearchResult& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["gpu"] = r.gpu;
  j["nodes"] = r.nodes;
  j["gpus_per_node"] = r.gpus_per_node;
  j["global_batch_size"] = r.global_batch_size;
  j["seq_length"] = r.seq_length;
  j["objective"] = ObjectiveName(r.objective);
  j["top"] = nlohmann::json::array();
  for (const SearchEntry& e : r.top) j["top"].push_back(SearchEntryJson(e));
  j["pareto"] = nlohmann::json::array();
  for (const SearchEntry& e : r.pareto) j["pareto"].push_back(SearchEntryJson(e));
  j["counts"] = CountsJson(r.counts);
  j["wall_time_s"] = r.wall_s;
  j["valid_configurations_per_s"] = ValidPerSecond(r);
  j["estimate_error_pct"] = {{"median", r.estimate_error_median_pct},
                             {"max", r.estimate_error_max_pct}};
  j["processes"] = r.processes;
  j["threads"] = r.threads;
  j["assumptions"] = r.assumptions;
  if (!r.top.empty()) {
    const PrimusOverrides o = ToPrimusOverrides(r.top.front(), r.moe, r.framework, r.layers,
                                                r.global_batch_size, r.gpus_per_node);
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [key, value] : o.values) values[key] = value;
    j["best_as_primus_overrides"] = {{"overrides", values}, {"notes", o.notes}};
  }
  return j;
}

}  // namespace sextant
