#include "server/views.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "hardware/hardware_config.h"
#include "memory/memory_report.h"
#include "parallel/schedule_kind.h"
#include "pipeline/pp_dump_reader.h"
#include "projection/design_space_search.h"
#include "projection/performance_report.h"
#include "projection/projection_runner.h"
#include "projection/search_base.h"
#include "projection/search_report.h"
#include "server/pp_view_page.h"
#include "snapshot/memory_snapshot.h"
#include "snapshot/snapshot_analysis.h"
#include "snapshot/snapshot_report.h"
#include "trace/report_json.h"
#include "trace/trace_runner.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/units.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxSearchDepth = 4;
constexpr size_t kMaxSearchEntries = 1000;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string BaseName(const std::string& path) {
  fs::path p(path);
  if (!p.has_filename()) p = p.parent_path();  // "dir/"
  return p.filename().string();
}

// The simulated runs of one experiment config, named `name`: the configured schedule, or every
// schedule the layout can run when options.schedule is "all" (each skipped one said in a note).
void AddConfig(PpViewData& view, const std::string& config, const std::string& name,
               const JobRequest& request, const ProjectionOptions& options) {
  JobRequest r = request;
  r.config_path = config;
  const Job job = BuildJob(r);
  for (const std::string& w : job.warnings) view.AddNote(name + ": " + w);
  std::vector<std::string> schedules = {options.schedule};
  if (options.schedule == "all") {
    // Every schedule that can run at the job's VPP, as `projection memory ... all` lists them.
    schedules.clear();
    for (ScheduleKind k : AllScheduleKinds()) {
      if (std::string_view why = VirtualStageMismatch(k, job.parallel.vpp); !why.empty()) {
        view.AddNote(fmt::format("{}: {} not shown: {}", name, ScheduleKindName(k), why));
        continue;
      }
      schedules.emplace_back(ScheduleKindName(k));
    }
  }
  for (const std::string& schedule : schedules) {
    ProjectionOptions o = options;
    o.schedule = schedule;
    PerformanceReport perf;
    try {
      perf = ProjectJobPerformance(job, o);
    } catch (const UserError& e) {
      if (options.schedule != "all") throw;
      view.AddNote(fmt::format("{}: {} not shown: {}", name, schedule, e.what()));
      continue;
    }
    // Say when the schedule that ran is not the one asked for by name (an interleaved
    // schedule at VPP 1 runs as 1F1B; Primus's names map onto Sextant's schedules).
    ScheduleKind asked;
    if (options.schedule != "all" && LookupScheduleKind(schedule, &asked) &&
        schedule != perf.schedule) {
      view.AddNote(fmt::format("{}: --pipeline-schedule-algorithm {} ran as {}{}", name, schedule,
                               perf.schedule,
                               ForVirtualStages(asked, job.parallel.vpp) != asked
                                   ? fmt::format(" (VPP {})", job.parallel.vpp)
                                   : std::string()));
    }
    const MemoryReport memory = ProjectMemoryFor(job, perf);
    std::vector<double> gib;
    for (const StageMemory& s : memory.stages) gib.push_back(ToGiB(s.total_bytes));
    view.AddSimulated(perf.simulation, fmt::format("{} · {}", name, perf.schedule), config, gib,
                      "projected memory per GPU");
    view.AddProjection(MemoryReportJson(memory), PerformanceReportJson(perf));
  }
}

// Where the config stands among the layouts its nodes allow: `projection search` on the
// config's own node count. A search that cannot run is a note, not a failed page.
void AddLayoutSearch(PpViewData& view, const std::string& config) {
  JobRequest request;
  request.config_path = config;
  try {
    const Job job = BuildJob(request);
    SearchOptions options;
    options.top_k = 10;
    view.AddSearch(SearchResultJson(
        SearchDesignSpace(BuildSearchBase(request, job.cluster.num_nodes), options)));
  } catch (const UserError& e) {
    view.AddNote(fmt::format("{}: no layout search: {}", BaseName(config), e.what()));
  }
}

// Builds once, under a lock; a failure is kept too, so every request says the same thing.
std::function<ViewContent()> Once(std::function<ViewContent()> build) {
  struct State {
    std::mutex mu;
    bool done = false;
    ViewContent content;
    std::string error;
  };
  auto state = std::make_shared<State>();
  return [state, build = std::move(build)]() -> ViewContent {
    std::lock_guard<std::mutex> lock(state->mu);
    if (!state->done) {
      try {
        state->content = build();
      } catch (const UserError& e) {
        state->error = e.what();
      }
      state->done = true;
    }
    if (!state->error.empty()) ThrowUserError(state->error);
    return state->content;
  };
}

View MakeView(const std::string& path, const std::string& kind) {
  View v{BaseName(path), kind, path, nullptr};
  if (kind == "pipeline dump" || kind == "experiment config") {
    v.build = [path, kind] {
      PpViewData data =
          BuildPipelineView({path}, JobRequest{}, ProjectionOptions{}, IterationChoice{});
      if (kind == "experiment config") AddLayoutSearch(data, path);
      nlohmann::json json = data.ToJson();
      return ViewContent{RenderPpViewPage(json), std::move(json)};
    };
  } else if (kind == "trace") {
    v.build = [path] {
      TraceReport report = CombineReports(AnalyzeTraceFiles({path}, ReportOptions{}, 0));
      return ViewContent{RenderReportHtml(report), ReportToJson(report)};
    };
  } else if (kind == "memory snapshot") {
    v.build = [path] {
      const MemorySnapshot snapshot = LoadMemorySnapshot(path);
      const SnapshotAnalysis analysis = AnalyzeSnapshot(snapshot);
      return ViewContent{SnapshotHtml(snapshot, analysis, nullptr),
                         SnapshotJson(snapshot, analysis)};
    };
  }
  v.build = Once(std::move(v.build));
  return v;
}

// Whether `target` (resolved) lies inside `root` (resolved).
bool Inside(const fs::path& root, const fs::path& target) {
  auto r = root.begin();
  auto t = target.begin();
  for (; r != root.end(); ++r, ++t) {
    if (t == target.end() || *r != *t) return false;
  }
  return true;
}

// Whether a YAML file found in a folder describes hardware (Primus's examples/hardware_configs/)
// rather than a job. A file that cannot be read is listed, and its page says why.
bool IsHardwareConfigFile(const fs::path& p) {
  try {
    return IsHardwareConfigText(ReadFile(p.string(), int64_t{1} << 20));
  } catch (const UserError&) {
    return false;
  }
}

// Returns whether every folder below `root` was searched (none was too deep).
bool SearchDirectory(const fs::path& root, std::vector<View>* views,
                     std::vector<std::string>* notes) {
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  size_t entries = 0;
  auto it =
      fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    notes->push_back(fmt::format("{}: cannot be listed ({})", root.string(), ec.message()));
    return true;
  }
  std::vector<fs::path> found;
  std::vector<fs::path> too_deep;  // folders left unsearched
  std::vector<fs::path> hardware;  // hardware configs: a cluster, not a job to show
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (++entries > kMaxSearchEntries) {
      notes->push_back(fmt::format("{}: only the first {} entries were searched", root.string(),
                                   kMaxSearchEntries));
      break;
    }
    const fs::path p = it->path();
    if (it->is_symlink(ec)) {
      const fs::path target = fs::canonical(p, ec);
      if (ec || !Inside(real_root, target)) {
        notes->push_back(
            fmt::format("{}: a symbolic link out of {}; not served", p.string(), root.string()));
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
    }
    if (it->is_directory(ec)) {
      if (IsPipelineDump(p)) {
        found.push_back(p);
        it.disable_recursion_pending();
      } else if (it.depth() + 1 >= kMaxSearchDepth) {
        it.disable_recursion_pending();
        std::error_code empty_ec;
        if (fs::directory_iterator(p, empty_ec) != fs::directory_iterator()) too_deep.push_back(p);
      }
      continue;
    }
    // Files of a pipeline dump belong to their directory's view.
    if (IsPipelineDump(p.parent_path())) continue;
    if (!it->is_regular_file(ec)) {
      if (!ViewKindOf(p.string()).empty()) {
        notes->push_back(fmt::format("{}: not a regular file; not served", p.string()));
      }
      continue;
    }
    const std::string kind = ViewKindOf(p.string());
    if (kind == "experiment config" && IsHardwareConfigFile(p)) {
      hardware.push_back(p);
    } else if (!kind.empty()) {
      found.push_back(p);
    }
  }
  if (!hardware.empty()) {
    std::sort(hardware.begin(), hardware.end());
    notes->push_back(
        fmt::format("{}: {} hardware config{} not listed (the first: {}): {} a cluster, not a job; "
                    "`sextant projection performance --hardware-config FILE` reads one",
                    root.string(), hardware.size(), hardware.size() == 1 ? " is" : "s are",
                    hardware.front().lexically_relative(root).string(),
                    hardware.size() == 1 ? "it describes" : "they describe"));
  }
  if (!too_deep.empty()) {
    // Said, or a tree of configs (Primus's examples/<framework>/configs/<GPU>/) would show only
    // its shallow files with nothing to say the rest was not looked at.
    std::sort(too_deep.begin(), too_deep.end());
    notes->push_back(fmt::format(
        "{}: searched {} levels down; {} deeper folder{} not searched (the first: {}): name a "
        "folder to serve what it holds",
        root.string(), kMaxSearchDepth, too_deep.size(), too_deep.size() == 1 ? " was" : "s were",
        too_deep.front().lexically_relative(root).string()));
  }
  std::sort(found.begin(), found.end());
  for (const fs::path& p : found) {
    View v = MakeView(p.string(), ViewKindOf(p.string()));
    v.name = p.lexically_relative(root).string();
    if (ec || v.name.empty()) v.name = p.string();
    views->push_back(std::move(v));
  }
  return too_deep.empty();
}

}  // namespace

std::string ViewKindOf(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return IsPipelineDump(p) ? "pipeline dump" : "";
  std::string name = p.filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* ext : {".yaml", ".yml", ".toml"}) {
    if (EndsWith(name, ext)) return "experiment config";
  }
  for (const char* ext : {".pickle", ".pkl"}) {
    if (EndsWith(name, ext)) return "memory snapshot";
  }
  for (const char* ext : {".json", ".json.gz", ".json.zst", ".pb", ".pt.trace.json"}) {
    if (EndsWith(name, ext)) return "trace";
  }
  return "";
}

std::vector<View> FindViews(const std::vector<std::string>& named,
                            std::vector<std::string>* notes) {
  std::vector<View> views;
  // A file of a pipeline dump named on its own (`serve dump/*`) stands for its dump, once.
  std::vector<std::string> paths;
  for (const std::string& path : named) {
    std::string dump = PipelineDumpOfFile(path);
    std::string p = dump.empty() ? path : dump;
    if (!dump.empty() && std::find(paths.begin(), paths.end(), p) != paths.end()) continue;
    paths.push_back(std::move(p));
  }
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
      ThrowUserError(fmt::format("{}: no such file or directory", path));
    if (fs::is_directory(status) && !IsPipelineDump(path)) {
      const size_t before = views.size();
      const bool searched_all = SearchDirectory(path, &views, notes);
      if (views.size() == before && searched_all) {
        notes->push_back(fmt::format("{}: holds no file Sextant reads", path));
      }
      continue;
    }
    if (!fs::is_directory(status) && !fs::is_regular_file(status)) {
      ThrowUserError(fmt::format("{}: not a regular file or directory", path));
    }
    const std::string kind = ViewKindOf(path);
    if (kind.empty()) {
      notes->push_back(fmt::format(
          "{}: not a kind Sextant reads (pipeline dump directory, .yaml/.toml config, trace "
          ".json/.json.gz/.pb, snapshot .pickle)",
          path));
      continue;
    }
    views.push_back(MakeView(path, kind));
  }
  return views;
}

std::vector<std::string> DistinctViewNames(const std::vector<std::string>& paths) {
  // Each path's components, last first ("runs/a/pp8/" -> pp8, a, runs).
  std::vector<std::vector<std::string>> parts;
  for (const std::string& path : paths) {
    std::vector<std::string> c;
    for (const fs::path& e : fs::path(path).lexically_normal()) {
      const std::string s = e.string();
      if (!s.empty() && s != "/" && s != ".") c.push_back(s);
    }
    std::reverse(c.begin(), c.end());
    if (c.empty()) c.push_back(path);
    parts.push_back(std::move(c));
  }
  std::vector<size_t> depth(paths.size(), 1);
  auto name = [&](size_t i) {
    std::string n;
    for (size_t k = std::min(depth[i], parts[i].size()); k-- > 0;) {
      n += parts[i][k];
      if (k) n += "/";
    }
    return n;
  };
  // Lengthen every name that another one shares until none does or the paths run out.
  for (bool grew = true; grew;) {
    grew = false;
    std::vector<std::string> names;
    for (size_t i = 0; i < paths.size(); ++i) names.push_back(name(i));
    for (size_t i = 0; i < paths.size(); ++i) {
      if (std::count(names.begin(), names.end(), names[i]) > 1 && depth[i] < parts[i].size()) {
        ++depth[i];
        grew = true;
      }
    }
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string n = name(i);
    // The same path named twice: numbered from its second appearance.
    const auto before = std::count_if(names.begin(), names.end(), [&](const std::string& m) {
      return m == n || m.rfind(n + " (", 0) == 0;
    });
    if (before > 0) n += fmt::format(" ({})", before + 1);
    names.push_back(std::move(n));
  }
  return names;
}

PpViewData BuildPipelineView(const std::vector<std::string>& paths, const JobRequest& request,
                             const ProjectionOptions& options, const IterationChoice& choice) {
  PpViewData view(paths.size() == 1 ? "Pipeline schedule: " + BaseName(paths[0])
                                    : "Pipeline schedules");
  // Two runs called pp8, or one config for two GPUs (MI300X/x.yaml, MI325X/x.yaml), are told
  // apart by their directories.
  const std::vector<std::string> names = DistinctViewNames(paths);
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      view.AddMeasured(ReadPrimusDump(path), names[i], path, choice);
    } else {
      AddConfig(view, path, names[i], request, options);
    }
  }
  return view;
}

}  // namespace sextant
