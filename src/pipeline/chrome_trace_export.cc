#include "pipeline/chrome_trace_export.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/file_io.h"

namespace sextant {
namespace {

using nlohmann::json;

constexpr int kComputeThread = 0;
constexpr int kSendThread = 1;
constexpr int kRecvThread = 2;

struct EventStyle {
  const char* name;
  const char* category;
  const char* colour;  // a reserved Chrome trace colour name
  int thread;
};

EventStyle StyleOf(TimelineEventKind kind) {
  switch (kind) {
    case TimelineEventKind::kForward: return {"F", "forward", "rail_response", kComputeThread};
    case TimelineEventKind::kBackwardInput:
      return {"B", "backward_input", "rail_load", kComputeThread};
    case TimelineEventKind::kBackwardWeight:
      return {"W", "backward_weight", "rail_idle", kComputeThread};
    case TimelineEventKind::kBackwardCombined: return {"BW", "backward", "good", kComputeThread};
    case TimelineEventKind::kSend: return {"send", "p2p", "generic_work", kSendThread};
    case TimelineEventKind::kRecv: return {"recv", "p2p", "generic_work", kRecvThread};
  }
  return {"?", "?", "generic_work", kComputeThread};
}

json Metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

std::string ChromeTraceJson(const PipelineSimulation& simulation) {
  json events = json::array();
  for (const RankSimulation& rank : simulation.ranks) {
    const int pid = rank.rank;
    events.push_back(Metadata("process_name", pid, 0, fmt::format("PP rank {}", rank.rank)));
    json sort = {{"name", "process_sort_index"},
                 {"ph", "M"},
                 {"pid", pid},
                 {"tid", 0},
                 {"args", {{"sort_index", rank.rank}}}};
    events.push_back(std::move(sort));
    events.push_back(Metadata("thread_name", pid, kComputeThread, "compute"));
    events.push_back(Metadata("thread_name", pid, kSendThread, "p2p send"));
    events.push_back(Metadata("thread_name", pid, kRecvThread, "p2p recv"));
    for (const TimelineEvent& e : rank.timeline) {
      const EventStyle style = StyleOf(e.kind);
      json args = {{"micro_batch", e.micro_batch}, {"chunk", e.chunk}, {"stage", e.stage}};
      std::string name = fmt::format("{} mb{} c{}", style.name, e.micro_batch, e.chunk);
      if (e.kind == TimelineEventKind::kSend || e.kind == TimelineEventKind::kRecv) {
        args["peer_rank"] = e.peer_rank;
        args["payload"] = e.carries_activation ? "activation" : "gradient";
        name = fmt::format("{} {} mb{} {} rank {}", style.name,
                           e.carries_activation ? "act" : "grad", e.micro_batch,
                           e.kind == TimelineEventKind::kSend ? "to" : "from", e.peer_rank);
      }
      events.push_back({{"name", name},
                        {"cat", style.category},
                        {"ph", "X"},
                        {"pid", pid},
                        {"tid", style.thread},
                        {"ts", e.start_s * 1e6},
                        {"dur", (e.end_s - e.start_s) * 1e6},
                        {"cname", style.colour},
                        {"args", std::move(args)}});
    }
  }
  json root = {{"traceEvents", std::move(events)},
               {"displayTimeUnit", "ms"},
               {"otherData",
                {{"generator", "sextant pipeline simulator"},
                 {"schedule", std::string(ScheduleKindName(simulation.kind))},
                 {"pp", simulation.shape.pipeline_ranks},
                 {"vpp", simulation.shape.chunks_per_rank},
                 {"micro_batches", simulation.shape.micro_batches},
                 {"step_time_ms", simulation.step_time_s * 1e3}}}};
  return root.dump();
}

void WriteChromeTrace(const PipelineSimulation& simulation, const std::string& path,
                      const std::vector<std::string>& inputs) {
  WriteFileAtomically(path, ChromeTraceJson(simulation), inputs);
}

}  // namespace sextant
