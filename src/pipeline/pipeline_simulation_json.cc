#include "pipeline/pipeline_simulation_json.h"

#include <string>

namespace sextant {
namespace {

const char* EventName(TimelineEventKind kind) {
  switch (kind) {
    case TimelineEventKind::kForward: return "F";
    case TimelineEventKind::kBackwardInput: return "B";
    case TimelineEventKind::kBackwardWeight: return "W";
    case TimelineEventKind::kBackwardCombined: return "BW";
    case TimelineEventKind::kSend: return "send";
    case TimelineEventKind::kRecv: return "recv";
  }
  return "?";
}

}  // namespace

nlohmann::json SimulationToJson(const PipelineSimulation& simulation, bool with_timeline) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankSimulation& rank : simulation.ranks) {
    nlohmann::json r = {{"rank", rank.rank},
                        {"end_ms", rank.end_s * 1e3},
                        {"busy_ms", rank.busy_s * 1e3},
                        {"bubble_ms", rank.bubble_s * 1e3},
                        {"bubble_ratio", rank.bubble_ratio},
                        {"peak_activation_bytes", rank.peak_activation_bytes},
                        {"peak_inflight_chunks", rank.peak_inflight_chunks},
                        {"peak_inflight_micro_batches", rank.peak_inflight_micro_batches}};
    if (with_timeline) {
      nlohmann::json timeline = nlohmann::json::array();
      for (const TimelineEvent& e : rank.timeline) {
        nlohmann::json event = {
            {"op", EventName(e.kind)}, {"micro_batch", e.micro_batch}, {"chunk", e.chunk},
            {"stage", e.stage},        {"start_ms", e.start_s * 1e3},  {"end_ms", e.end_s * 1e3}};
        if (e.kind == TimelineEventKind::kSend || e.kind == TimelineEventKind::kRecv) {
          event["peer_rank"] = e.peer_rank;
          event["payload"] = e.carries_activation ? "activation" : "gradient";
        }
        timeline.push_back(std::move(event));
      }
      r["timeline"] = std::move(timeline);
    }
    ranks.push_back(std::move(r));
  }
  return {{"schedule", std::string(ScheduleKindName(simulation.kind))},
          {"pp", simulation.shape.pipeline_ranks},
          {"vpp", simulation.shape.chunks_per_rank},
          {"micro_batches", simulation.shape.micro_batches},
          {"step_time_ms", simulation.step_time_s * 1e3},
          {"max_bubble_ratio", simulation.max_bubble_ratio},
          {"max_peak_activation_bytes", simulation.max_peak_activation_bytes},
          {"ranks", std::move(ranks)}};
}

nlohmann::json ComparisonToJson(const std::vector<ScheduleComparisonRow>& rows) {
  nlohmann::json schedules = nlohmann::json::array();
  for (const ScheduleComparisonRow& row : rows) {
    nlohmann::json entry;
    if (row.ran) {
      entry = SimulationToJson(row.simulation);
    } else {
      entry = {{"schedule", std::string(ScheduleKindName(row.kind))},
               {"skipped_because", row.skipped_because}};
    }
    entry["ran"] = row.ran;
    schedules.push_back(std::move(entry));
  }
  const int fastest = FastestSchedule(rows);
  return {{"schedules", std::move(schedules)},
          {"fastest", fastest < 0 ? nlohmann::json(nullptr)
                                  : nlohmann::json(std::string(ScheduleKindName(
                                        rows[static_cast<size_t>(fastest)].kind)))}};
}

}  // namespace sextant
