#include "server/pp_view_data.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "pipeline/pp_dump_stats.h"
#include "pipeline/schedule.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant {
namespace {

// Above this many F/B/W intervals in one dump, only the shown iterations carry their blocks.
constexpr size_t kMaxBlocksPerRun = 200000;

struct Block {
  std::string op;  // F, B, W, BW
  int mb = -1;
  int chunk = -1;
  double start_ms = 0;
  double end_ms = 0;
};

nlohmann::json BlockJson(const Block& b) {
  return {{"op", b.op},
          {"mb", b.mb},
          {"chunk", b.chunk},
          {"start_ms", b.start_ms},
          {"end_ms", b.end_ms}};
}

// Most (micro-batch) activations a rank holds at once: a micro-batch is in flight from the end
// of its first forward until the end of its last backward piece (W when the rank splits the
// backward, else B/BW). Needs the micro-batch ids; -1 when a block has none.
int PeakInflightMicroBatches(const std::vector<Block>& blocks) {
  bool splits = false;
  for (const Block& b : blocks) {
    if (b.mb < 0) return -1;
    splits = splits || b.op == "W";
  }
  // Per micro-batch, its chunk activations alive: +1 at each forward's end, -1 at each
  // releasing backward piece's end.
  std::vector<std::pair<double, const Block*>> ends;
  for (const Block& b : blocks) ends.emplace_back(b.end_ms, &b);
  std::stable_sort(ends.begin(), ends.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<int, int> open;  // micro-batch -> activations alive
  int alive = 0, peak = 0;
  for (const auto& [t, b] : ends) {
    const bool releases = splits ? b->op == "W" : (b->op == "B" || b->op == "BW");
    if (b->op == "F") {
      if (open[b->mb]++ == 0) ++alive;
    } else if (releases) {
      auto it = open.find(b->mb);
      if (it != open.end() && it->second > 0 && --it->second == 0) --alive;
    }
    peak = std::max(peak, alive);
  }
  return peak;
}

// A simulated rank's compute ops as blocks (ms), its sends and receives into `transfers` when
// given. An un-split backward is named `combined` ("BW", or "B" where it stands for a measured
// backward).
std::vector<Block> SimulatedBlocks(const RankSimulation& rank, const char* combined,
                                   nlohmann::json* transfers) {
  std::vector<Block> blocks;
  for (const TimelineEvent& e : rank.timeline) {
    const double s = e.start_s * 1000, t = e.end_s * 1000;
    switch (e.kind) {
      case TimelineEventKind::kForward:
        blocks.push_back({"F", e.micro_batch, e.chunk, s, t});
        break;
      case TimelineEventKind::kBackwardInput:
        blocks.push_back({"B", e.micro_batch, e.chunk, s, t});
        break;
      case TimelineEventKind::kBackwardWeight:
        blocks.push_back({"W", e.micro_batch, e.chunk, s, t});
        break;
      case TimelineEventKind::kBackwardCombined:
        blocks.push_back({combined, e.micro_batch, e.chunk, s, t});
        break;
      case TimelineEventKind::kSend:
      case TimelineEventKind::kRecv:
        if (transfers == nullptr) break;
        transfers->push_back({{"kind", e.kind == TimelineEventKind::kSend ? "send" : "recv"},
                              {"peer", e.peer_rank},
                              {"mb", e.micro_batch},
                              {"chunk", e.chunk},
                              {"payload", e.carries_activation ? "activation" : "gradient"},
                              {"start_ms", s},
                              {"end_ms", t}});
        break;
    }
  }
  return blocks;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One rank of one iteration: statistics with Primus's definitions, then the blocks.
nlohmann::json RankJson(int rank, double iteration_time_ms, double total_ms, double memory_gib,
                        const std::vector<Block>& blocks, nlohmann::json transfers,
                        int peak_inflight) {
  double f = 0, b = 0, w = 0;
  for (const Block& blk : blocks) {
    const double d = blk.end_ms - blk.start_ms;
    if (blk.op == "F") f += d;
    if (blk.op == "B" || blk.op == "BW") b += d;
    if (blk.op == "W") w += d;
  }
  const double busy = f + b + w;
  nlohmann::json j = {
      {"rank", rank},
      {"total_ms", total_ms},
      {"forward_ms", f},
      {"backward_ms", b},
      {"wgrad_ms", w},
      {"busy_ms", busy},
      {"idle_ms", iteration_time_ms - busy},
      {"bubble_ratio", iteration_time_ms > 0 ? (iteration_time_ms - busy) / iteration_time_ms : 0},
      {"memory_gib", memory_gib},
      {"peak_inflight_micro_batches", nullptr},
      {"blocks", nlohmann::json::array()},
      {"transfers", std::move(transfers)}};
  if (peak_inflight >= 0) j["peak_inflight_micro_batches"] = peak_inflight;
  for (const Block& blk : blocks) j["blocks"].push_back(BlockJson(blk));
  return j;
}

// Slowest rank's busy time over the mean busy time: 1 is a perfectly balanced pipeline.
double StageImbalance(const nlohmann::json& ranks) {
  double sum = 0, most = 0;
  for (const auto& r : ranks) {
    sum += r["busy_ms"].get<double>();
    most = std::max(most, r["busy_ms"].get<double>());
  }
  return sum > 0 ? most * ranks.size() / sum : 1;
}

// The blocks of one rank's record, with micro-batch and chunk from the dump's lists when they
// are complete, else inferred from Megatron's order (*inferred set), else -1.
std::vector<Block> DumpBlocks(const PrimusDumpConfig& config, const PrimusDumpIteration& it,
                              bool* inferred) {
  std::vector<Block> out;
  const int pp = static_cast<int>(config.pp_size);
  const int vpp = static_cast<int>(std::max<int64_t>(1, config.vp_size));
  const int m = static_cast<int>(config.num_mbs);
  auto add = [&](const char* op, const std::vector<double>& start, const std::vector<double>& end,
                 const std::vector<int64_t>& mbs, const std::vector<int64_t>& chunks,
                 bool backward) {
    const size_t n = std::min(start.size(), end.size());
    const bool recorded = mbs.size() == n && chunks.size() == n;
    const bool inferable = !recorded && op[0] != 'W' && m > 0 && n == size_t(vpp) * size_t(m);
    for (size_t i = 0; i < n; ++i) {
      Block b{op, -1, -1, start[i], end[i]};
      if (recorded) {
        // Ids outside int's range are unknown, not wrapped around.
        auto id = [](int64_t v) { return v >= 0 && v <= INT32_MAX ? static_cast<int>(v) : -1; };
        b.mb = id(mbs[i]);
        b.chunk = id(chunks[i]);
      } else if (inferable &&
                 InferMegatronLabel(pp, vpp, m, static_cast<int>(i), backward, &b.mb, &b.chunk)) {
        *inferred = true;
      }
      out.push_back(std::move(b));
    }
  };
  add("F", it.fwd_start, it.fwd_end, it.fwd_minibatch, it.fwd_chunk, false);
  add("B", it.bwd_start, it.bwd_end, it.bwd_minibatch, it.bwd_chunk, true);
  add("W", it.wgrad_start, it.wgrad_end, it.wgrad_minibatch, it.wgrad_chunk, true);
  std::stable_sort(out.begin(), out.end(),
                   [](const Block& a, const Block& b) { return a.start_ms < b.start_ms; });
  return out;
}

// The measured order of every rank, replayed by the simulator with each op at the median of
// its measured durations on that rank and chunk, and free transfers: what the same schedule
// would take without waits on communication or slower-than-usual ops. Fails (UserError) when
// an op has no micro-batch or the order cannot run.
PipelineSimulation ReplayMeasuredOrder(const PrimusDumpConfig& config,
                                       const std::vector<std::vector<Block>>& ranks) {
  const int pp = static_cast<int>(config.pp_size);
  const int vpp = static_cast<int>(std::max<int64_t>(1, config.vp_size));
  bool splits = false;
  int max_mb = -1;
  size_t forwards = 0;
  for (const auto& blocks : ranks) {
    for (const Block& b : blocks) forwards += b.op == "F";
  }
  for (const auto& blocks : ranks) {
    for (const Block& b : blocks) {
      if (b.mb < 0 || b.chunk < 0 || b.chunk >= vpp) {
        ThrowUserError("an op has no micro-batch or chunk id");
      }
      // Ids come from the file: one past every forward is already impossible.
      if (static_cast<size_t>(b.mb) >= forwards) {
        ThrowUserError(
            fmt::format("micro-batch id {} exceeds the {} forwards recorded", b.mb, forwards));
      }
      splits = splits || b.op == "W";
      max_mb = std::max(max_mb, b.mb);
    }
  }
  Schedule schedule;
  schedule.kind = splits ? ScheduleKind::kZeroBubbleH1
                         : (vpp > 1 ? ScheduleKind::kInterleaved1F1B : ScheduleKind::k1F1B);
  schedule.shape = {pp, vpp, max_mb + 1};
  schedule.ops_per_rank.resize(pp);
  // Median duration per (rank, chunk, op).
  std::map<std::tuple<int, int, std::string>, std::vector<double>> durations;
  for (int r = 0; r < pp; ++r) {
    for (const Block& b : ranks[r]) {
      OpKind kind = OpKind::kForward;
      if (b.op == "B") kind = splits ? OpKind::kBackwardInput : OpKind::kBackwardCombined;
      if (b.op == "W") kind = OpKind::kBackwardWeight;
      schedule.ops_per_rank[r].push_back({kind, b.mb, b.chunk});
      durations[{r, b.chunk, b.op}].push_back((b.end_ms - b.start_ms) / 1000.0);
    }
  }
  auto build_costs = [&](const Schedule& s) {
    PipelineCosts costs;
    costs.stages.resize(static_cast<size_t>(pp * vpp));
    for (int r = 0; r < pp; ++r) {
      for (int c = 0; c < vpp; ++c) {
        StageCost& cost = costs.stages[static_cast<size_t>(s.StageOf(r, c))];
        cost.forward_s = Median(durations[{r, c, "F"}]);
        if (splits) {
          cost.backward_input_s = Median(durations[{r, c, "B"}]);
          cost.backward_weight_s = Median(durations[{r, c, "W"}]);
        } else {
          cost.backward_combined_s = Median(durations[{r, c, "B"}]);
        }
        cost.activation_bytes = 1;
      }
    }
    return costs;
  };
  // Megatron's interleaved placement first; a V-shape order (ZBV, DualPipeV) runs only there.
  std::string first_error;
  for (StageShape placement : {StageShape::kInterleaved, StageShape::kVShape}) {
    if (placement == StageShape::kVShape && vpp != 2) break;
    schedule.placement = placement;
    try {
      return SimulatePipeline(schedule, build_costs(schedule));
    } catch (const UserError& e) {
      if (first_error.empty()) first_error = e.what();
    }
  }
  ThrowUserError(first_error);
}

const nlohmann::json* FindRun(const nlohmann::json& runs, const std::string& id) {
  for (const auto& r : runs) {
    if (r["id"] == id) return &r;
  }
  return nullptr;
}

const nlohmann::json* FindIteration(const nlohmann::json& run, const std::string& key) {
  for (const auto& it : run["iterations"]) {
    if (it["key"] == key) return &it;
  }
  return nullptr;
}

nlohmann::json Compare(const nlohmann::json& measured, const std::string& measured_key,
                       const nlohmann::json& other, const std::string& other_key) {
  const nlohmann::json& m = *FindIteration(measured, measured_key);
  const nlohmann::json& o = *FindIteration(other, other_key);
  nlohmann::json c = {{"measured", measured["id"]},
                      {"other", other["id"]},
                      {"measured_iteration", measured_key},
                      {"other_iteration", other_key},
                      {"measured_iteration_time_ms", m["iteration_time_ms"]},
                      {"other_iteration_time_ms", o["iteration_time_ms"]},
                      {"ranks", nlohmann::json::array()}};
  const size_t n = std::min(m["ranks"].size(), o["ranks"].size());
  for (size_t r = 0; r < n; ++r) {
    const auto& a = m["ranks"][r];
    const auto& b = o["ranks"][r];
    const double mt = a["total_ms"].get<double>();
    const double ot = b["total_ms"].get<double>();
    c["ranks"].push_back({{"rank", a["rank"]},
                          {"measured_total_ms", mt},
                          {"other_total_ms", ot},
                          {"total_diff_pct", mt > 0 ? (ot - mt) / mt * 100 : 0},
                          {"measured_busy_ms", a["busy_ms"]},
                          {"other_busy_ms", b["busy_ms"]},
                          {"measured_bubble_ratio", a["bubble_ratio"]},
                          {"other_bubble_ratio", b["bubble_ratio"]}});
  }
  return c;
}

}  // namespace

bool InferMegatronLabel(int pp, int vpp, int micro_batches, int index, bool backward, int* mb,
                        int* chunk) {
  if (pp < 1 || vpp < 1 || micro_batches < 1 || index < 0) return false;
  if (vpp == 1) {
    *mb = index;
    *chunk = 0;
    return index < micro_batches;
  }
  if (micro_batches % pp != 0) return false;
  const int group = pp * vpp;
  const int in_group = index % group;
  const int c = in_group / pp;
  *chunk = backward ? vpp - 1 - c : c;
  *mb = (index / group) * pp + index % pp;
  return *mb < micro_batches;
}

namespace {

// The first iteration of a dump carries warm-up (allocator growth, autotuning): it is left out
// of the steady ones when there are more than two.
size_t FirstSteadyIteration(size_t iterations) { return iterations > 2 ? 1 : 0; }

}  // namespace

std::string TypicalIterationKey(const std::vector<PrimusDumpIterationStats>& stats) {
  std::vector<const PrimusDumpIterationStats*> steady;
  for (size_t i = FirstSteadyIteration(stats.size()); i < stats.size(); ++i) {
    steady.push_back(&stats[i]);
  }
  std::stable_sort(steady.begin(), steady.end(), [](const auto* a, const auto* b) {
    return a->iteration_time_ms < b->iteration_time_ms;
  });
  return steady[(steady.size() - 1) / 2]->key;
}

std::string PpViewData::NextId() { return fmt::format("r{}", runs_.size()); }

void PpViewData::AddMeasured(const PrimusDump& dump, const std::string& name,
                             const std::string& origin, const IterationChoice& choice) {
  const std::vector<PrimusDumpIterationStats> stats = AnalysePrimusDump(dump);
  if (stats.empty()) ThrowUserError(fmt::format("{}: the pipeline dump has no iteration", origin));
  std::vector<std::string> shown;
  if (choice.key == "all") {
    for (const auto& s : stats) shown.push_back(s.key);
  } else if (choice.key.empty()) {
    shown.push_back(TypicalIterationKey(stats));
    if (stats.size() > 1) {
      const size_t first = FirstSteadyIteration(stats.size());
      auto [fastest, slowest] = std::minmax_element(
          stats.begin() + static_cast<std::ptrdiff_t>(first), stats.end(),
          [](const auto& a, const auto& b) { return a.iteration_time_ms < b.iteration_time_ms; });
      notes_.push_back(fmt::format(
          "{}: iteration {} shown, the median by time of {} ({:.2f} .. {:.2f} ms); "
          "--iteration all shows each",
          name, shown.back(),
          first > 0 ? fmt::format("the {} iterations after the first", stats.size() - first)
                    : fmt::format("its {} iterations", stats.size()),
          fastest->iteration_time_ms, slowest->iteration_time_ms));
    }
  } else {
    auto found = std::find_if(stats.begin(), stats.end(),
                              [&](const auto& s) { return s.key == choice.key; });
    if (found == stats.end()) {
      ThrowUserError(fmt::format("{}: no iteration '{}' in the dump (it has {} .. {})", origin,
                                 choice.key, stats.front().key, stats.back().key));
    }
    shown.push_back(choice.key);
  }
  const std::string id = NextId();
  // A dump a simulator wrote (Sextant's --pp-dump, Primus's simulator) is shown as simulated,
  // without an ideal replay of itself.
  const bool measured = dump.config.generator.empty();
  nlohmann::json run = {{"id", id},
                        {"name", name},
                        {"source", measured ? "measured" : "simulated"},
                        {"generator", dump.config.generator},
                        {"origin", origin},
                        {"schedule", nullptr},
                        {"pp", dump.config.pp_size},
                        {"vpp", std::max<int64_t>(1, dump.config.vp_size)},
                        {"micro_batches", dump.config.num_mbs},
                        {"labels_inferred", false},
                        {"memory_label", measured ? "max memory reserved" : "peak activations"},
                        {"iterations", nlohmann::json::array()}};
  bool inferred = false;
  // Blocks of every iteration when the page stays small, else only of the shown ones (every
  // iteration keeps its statistics either way): a long dump of many ranks would otherwise make
  // a page of hundreds of megabytes.
  size_t total_blocks = 0;
  for (const PrimusDumpRank& rank : dump.ranks) {
    for (const PrimusDumpIteration& it : rank.iterations) {
      total_blocks += it.fwd_start.size() + it.bwd_start.size() + it.wgrad_start.size();
    }
  }
  const bool all_blocks = total_blocks <= kMaxBlocksPerRun;
  if (!all_blocks) {
    notes_.push_back(fmt::format(
        "{}: {} blocks in all iterations; only the shown iterations' blocks are drawn (pick "
        "others with --iteration)",
        name, total_blocks));
  }
  // config.json's micro-batch count against what the ranks recorded: each rank runs VPP x
  // num_mbs forwards. A mismatch leaves the micro-batch labels unknown; say why.
  const int64_t vpp = std::max<int64_t>(1, dump.config.vp_size);
  for (const PrimusDumpRank& rank : dump.ranks) {
    if (rank.iterations.empty()) continue;
    const PrimusDumpIteration& first = rank.iterations.front();
    const int64_t forwards = static_cast<int64_t>(first.fwd_start.size());
    if (dump.config.num_mbs > 0 && forwards > 0 && forwards != vpp * dump.config.num_mbs) {
      notes_.push_back(fmt::format(
          "{}: config.json says num_mbs {} (x VPP {} = {} forwards per rank), but rank {} "
          "recorded {} in iteration {}: micro-batch ids are not inferred",
          name, dump.config.num_mbs, vpp, vpp * dump.config.num_mbs, rank.pp_rank, forwards,
          first.key));
      break;
    }
  }
  // Each rank's records by key, and the blocks of the shown iterations, kept for the replay.
  std::vector<std::map<std::string, const PrimusDumpIteration*>> by_key(dump.ranks.size());
  for (size_t r = 0; r < dump.ranks.size(); ++r) {
    for (const PrimusDumpIteration& it : dump.ranks[r].iterations) by_key[r][it.key] = &it;
  }
  std::map<std::string, std::vector<std::vector<Block>>> blocks_of;
  for (const PrimusDumpIterationStats& s : stats) {
    const bool is_shown = std::find(shown.begin(), shown.end(), s.key) != shown.end();
    nlohmann::json it = {{"key", s.key},
                         {"iteration_time_ms", s.iteration_time_ms},
                         {"max_memory_gib", s.max_memory_gib},
                         {"ranks", nlohmann::json::array()}};
    for (size_t r = 0; r < dump.ranks.size(); ++r) {
      const PrimusDumpIteration& record = *by_key[r].at(s.key);
      std::vector<Block> blocks = DumpBlocks(dump.config, record, &inferred);
      const int peak = PeakInflightMicroBatches(blocks);
      nlohmann::json rank = RankJson(dump.ranks[r].pp_rank, s.iteration_time_ms, record.total_ms,
                                     record.memory_gib, blocks, nlohmann::json::array(), peak);
      if (!all_blocks && !is_shown) rank["blocks"] = nlohmann::json::array();
      it["ranks"].push_back(std::move(rank));
      if (is_shown) blocks_of[s.key].push_back(std::move(blocks));
    }
    it["stage_imbalance"] = StageImbalance(it["ranks"]);
    run["iterations"].push_back(std::move(it));
  }
  run["labels_inferred"] = inferred;
  runs_.push_back(std::move(run));
  for (const std::string& key : shown) initial_.push_back({{"run", id}, {"iteration", key}});

  if (!measured) return;
  // The ideal replay of each shown iteration, as one more run with the same iteration keys.
  nlohmann::json ideal = {{"id", NextId()},
                          {"name", name + " (ideal)"},
                          {"source", "ideal"},
                          {"ideal_of", id},
                          {"origin", origin},
                          {"schedule", nullptr},
                          {"pp", dump.config.pp_size},
                          {"vpp", std::max<int64_t>(1, dump.config.vp_size)},
                          {"micro_batches", dump.config.num_mbs},
                          {"labels_inferred", inferred},
                          {"memory_label", "max memory reserved"},
                          {"iterations", nlohmann::json::array()}};
  for (const std::string& key : shown) {
    PipelineSimulation sim;
    try {
      sim = ReplayMeasuredOrder(dump.config, blocks_of[key]);
    } catch (const UserError& e) {
      notes_.push_back(fmt::format("{}: iteration {}: no ideal replay ({})", name, key, e.what()));
      continue;
    }
    ideal["schedule"] = std::string(ScheduleKindName(sim.kind));
    const nlohmann::json& measured_it = *FindIteration(runs_.back(), key);
    nlohmann::json it = {{"key", key},
                         {"iteration_time_ms", sim.step_time_s * 1000},
                         {"max_memory_gib", measured_it["max_memory_gib"]},
                         {"ranks", nlohmann::json::array()}};
    for (const RankSimulation& r : sim.ranks) {
      // Named as the measured blocks it replays: a whole backward is "B".
      const std::vector<Block> blocks = SimulatedBlocks(r, "B", nullptr);
      it["ranks"].push_back(RankJson(r.rank, sim.step_time_s * 1000, r.end_s * 1000,
                                     measured_it["ranks"][size_t(r.rank)]["memory_gib"], blocks,
                                     nlohmann::json::array(), PeakInflightMicroBatches(blocks)));
    }
    it["stage_imbalance"] = StageImbalance(it["ranks"]);
    ideal["iterations"].push_back(std::move(it));
  }
  if (!ideal["iterations"].empty()) {
    notes_.push_back(fmt::format(
        "{} (ideal): the measured order of every rank replayed with each op at the median of its "
        "measured durations on that rank and chunk, and free transfers; what the measured run "
        "loses to waits and slow ops is the difference",
        name));
    runs_.push_back(std::move(ideal));
  }
  if (inferred) {
    notes_.push_back(fmt::format(
        "{}: the dump has no micro-batch ids; they are inferred from Megatron's schedule order "
        "(0-based; Primus's viewer numbers them from 1)",
        name));
  }
}

void PpViewData::AddSimulated(const PipelineSimulation& simulation, const std::string& name,
                              const std::string& origin, const std::vector<double>& memory_gib,
                              const std::string& memory_label) {
  const std::string id = NextId();
  const double step_ms = simulation.step_time_s * 1000;
  nlohmann::json it = {
      {"key", "1"}, {"iteration_time_ms", step_ms}, {"ranks", nlohmann::json::array()}};
  double max_memory = 0;
  for (const RankSimulation& r : simulation.ranks) {
    nlohmann::json transfers = nlohmann::json::array();
    const std::vector<Block> blocks = SimulatedBlocks(r, "BW", &transfers);
    const size_t rank = static_cast<size_t>(r.rank);
    const double memory =
        rank < memory_gib.size() ? memory_gib[rank] : ToGiB(r.peak_activation_bytes);
    max_memory = std::max(max_memory, memory);
    nlohmann::json rj =
        RankJson(r.rank, step_ms, r.end_s * 1000, memory, blocks, std::move(transfers), -1);
    rj["peak_inflight_micro_batches"] = r.peak_inflight_micro_batches;
    it["ranks"].push_back(std::move(rj));
  }
  it["max_memory_gib"] = max_memory;
  it["stage_imbalance"] = StageImbalance(it["ranks"]);
  nlohmann::json run = {{"id", id},
                        {"name", name},
                        {"source", "simulated"},
                        {"origin", origin},
                        {"schedule", std::string(ScheduleKindName(simulation.kind))},
                        {"pp", simulation.shape.pipeline_ranks},
                        {"vpp", simulation.shape.chunks_per_rank},
                        {"micro_batches", simulation.shape.micro_batches},
                        {"labels_inferred", false},
                        {"memory_label", memory_gib.empty() ? "peak activations" : memory_label},
                        {"iterations", nlohmann::json::array({std::move(it)})}};
  runs_.push_back(std::move(run));
  initial_.push_back({{"run", id}, {"iteration", "1"}});
}

void PpViewData::AddProjection(nlohmann::json memory, nlohmann::json performance) {
  projections_.push_back({{"run", runs_.empty() ? nlohmann::json() : runs_.back()["id"]},
                          {"memory", std::move(memory)},
                          {"performance", std::move(performance)}});
}

void PpViewData::AddSearch(nlohmann::json search) {
  if (!projections_.empty()) projections_.back()["search"] = std::move(search);
}

nlohmann::json PpViewData::ToJson() const {
  nlohmann::json comparisons = nlohmann::json::array();
  std::vector<std::string> notes = notes_;
  for (const auto& shown : initial_) {
    const nlohmann::json& m = *FindRun(runs_, shown["run"]);
    if (m["source"] != "measured") continue;
    const std::string key = shown["iteration"];
    for (const auto& o : runs_) {
      if (o["source"] == "measured") continue;
      if (o["source"] == "ideal") {
        if (o["ideal_of"] != m["id"] || !FindIteration(o, key)) continue;
        comparisons.push_back(Compare(m, key, o, key));
        continue;
      }
      // A simulation compares with a measured run only when it is the same pipeline: the same
      // PP, VPP and micro-batches per step; otherwise the view says why there is no comparison.
      std::vector<std::string> differ;
      for (const char* k : {"pp", "vpp", "micro_batches"}) {
        if (m[k] != o[k] && m[k].is_number() && m[k].get<int64_t>() > 0) {
          differ.push_back(fmt::format("{} {} vs {}", k, m[k].dump(), o[k].dump()));
        }
      }
      if (!differ.empty()) {
        const std::string why = fmt::format(
            "no comparison of {} with {}: not the same pipeline ({})", m["name"].get<std::string>(),
            o["name"].get<std::string>(), fmt::join(differ, ", "));
        // Once per pair, however many of the measured run's iterations are shown.
        if (std::find(notes.begin(), notes.end(), why) == notes.end()) notes.push_back(why);
        continue;
      }
      comparisons.push_back(Compare(m, key, o, o["iterations"][0]["key"]));
    }
  }
  return {{"title", title_},
          {"generator", std::string("sextant ") + SEXTANT_VERSION},
          {"runs", runs_},
          {"initial", initial_},
          {"comparisons", std::move(comparisons)},
          {"projections", projections_},
          {"notes", notes}};
}

}  // namespace sextant
