#include "pipeline/pp_dump_writer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "util/error.h"
#include "util/file_io.h"
#include "util/units.h"

namespace sextant {
namespace {

// Python's float repr: shortest round-trip digits, always with a '.' or an exponent.
std::string PythonFloat(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

template <typename T>
void AppendList(std::string& out, const char* name, const std::vector<T>& values) {
  out += fmt::format(", \"{}\": [", name);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    if constexpr (std::is_same_v<T, double>) {
      out += PythonFloat(values[i]);
    } else {
      out += fmt::format("{}", values[i]);
    }
  }
  out += "]";
}

}  // namespace

PrimusDump SimulationToPrimusDump(const PipelineSimulation& simulation,
                                  const PrimusDumpLayout& layout) {
  PrimusDump dump;
  const PipelineShape& shape = simulation.shape;
  dump.config.pp_size = shape.pipeline_ranks;
  dump.config.vp_size = shape.chunks_per_rank;
  dump.config.num_mbs = shape.micro_batches;
  dump.config.dp_size = layout.dp_size;
  dump.config.tp_size = layout.tp_size;
  dump.config.ep_size = layout.ep_size;
  dump.config.world_size = shape.pipeline_ranks * layout.dp_size * layout.tp_size;
  dump.config.train_iters = 1;
  dump.config.generator = "sextant";  // so a viewer does not take it for a measured run
  for (const RankSimulation& rank : simulation.ranks) {
    PrimusDumpRank out;
    out.pp_rank = rank.rank;
    PrimusDumpIteration it;
    it.key = "1";
    it.total_ms = rank.end_s * 1e3;
    it.memory_gib = ToGiB(rank.peak_activation_bytes);
    for (const TimelineEvent& e : rank.timeline) {
      switch (e.kind) {
        case TimelineEventKind::kForward:
          it.fwd_start.push_back(e.start_s * 1e3);
          it.fwd_end.push_back(e.end_s * 1e3);
          it.fwd_minibatch.push_back(e.micro_batch);
          it.fwd_chunk.push_back(e.chunk);
          break;
        case TimelineEventKind::kBackwardInput:
        case TimelineEventKind::kBackwardCombined:
          it.bwd_start.push_back(e.start_s * 1e3);
          it.bwd_end.push_back(e.end_s * 1e3);
          it.bwd_minibatch.push_back(e.micro_batch);
          it.bwd_chunk.push_back(e.chunk);
          break;
        case TimelineEventKind::kBackwardWeight:
          it.wgrad_start.push_back(e.start_s * 1e3);
          it.wgrad_end.push_back(e.end_s * 1e3);
          it.wgrad_minibatch.push_back(e.micro_batch);
          it.wgrad_chunk.push_back(e.chunk);
          break;
        case TimelineEventKind::kSend:
        case TimelineEventKind::kRecv: break;  // the dump format has no transfers
      }
    }
    out.iterations.push_back(std::move(it));
    dump.ranks.push_back(std::move(out));
  }
  return dump;
}

std::string FormatPrimusDumpConfig(const PrimusDumpConfig& c) {
  return fmt::format(
      "{{\"world_size\": {}, \"dp_size\": {}, \"tp_size\": {}, \"ep_size\": {}, "
      "\"pp_size\": {}, \"vp_size\": {}, \"num_mbs\": {}, \"train_iters\": {}{}}}",
      c.world_size, c.dp_size, c.tp_size, c.ep_size, c.pp_size, c.vp_size, c.num_mbs, c.train_iters,
      c.generator.empty() ? std::string()
                          : ", \"generator\": " + nlohmann::json(c.generator).dump());
}

std::string FormatPrimusDumpRank(const PrimusDumpRank& rank) {
  std::string out = "{";
  for (size_t i = 0; i < rank.iterations.size(); ++i) {
    const PrimusDumpIteration& it = rank.iterations[i];
    if (i > 0) out += ", ";
    out += fmt::format("\"{}\": {{\"total\": {}, \"memory\": {}", it.key, PythonFloat(it.total_ms),
                       PythonFloat(it.memory_gib));
    AppendList(out, "fwd_start", it.fwd_start);
    AppendList(out, "fwd_end", it.fwd_end);
    AppendList(out, "bwd_start", it.bwd_start);
    AppendList(out, "bwd_end", it.bwd_end);
    AppendList(out, "wgrad_start", it.wgrad_start);
    AppendList(out, "wgrad_end", it.wgrad_end);
    AppendList(out, "fwd_minibatch", it.fwd_minibatch);
    AppendList(out, "fwd_chunk", it.fwd_chunk);
    AppendList(out, "bwd_minibatch", it.bwd_minibatch);
    AppendList(out, "bwd_chunk", it.bwd_chunk);
    AppendList(out, "wgrad_minibatch", it.wgrad_minibatch);
    AppendList(out, "wgrad_chunk", it.wgrad_chunk);
    out += "}";
  }
  out += "}";
  return out;
}

void WritePrimusDump(const PrimusDump& dump, const std::string& dir,
                     const std::vector<std::string>& inputs) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) ThrowUserError({dir}, "", "cannot create dump directory: " + error.message());
  WriteFileAtomically(dir + "/config.json", FormatPrimusDumpConfig(dump.config), inputs);
  for (const PrimusDumpRank& rank : dump.ranks) {
    WriteFileAtomically(fmt::format("{}/pp_rank_{}.json", dir, rank.pp_rank),
                        FormatPrimusDumpRank(rank), inputs);
  }
}

}  // namespace sextant
