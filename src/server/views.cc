#include "server/views.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

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
#include "trace/capture_index.h"
#include "trace/distributed_info.h"
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

// Builds under the view's lock when the page cache does not hold the page; a failure is kept
// for good, so every request says the same thing, and recorded in `status` for the index. A
// failure the view's check found is not built again.
std::function<std::shared_ptr<const ViewContent>()> Once(std::function<ViewContent()> build,
                                                         std::shared_ptr<ViewStatus> status) {
  struct State {
    std::mutex mu;  // one build of this view at a time
    uint64_t key = PageCache::NewKey();
    std::string error;
  };
  auto state = std::make_shared<State>();
  return [state, status, build = std::move(build)]() -> std::shared_ptr<const ViewContent> {
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->error.empty()) state->error = status->failure();
    if (!state->error.empty()) ThrowUserError(state->error);
    PageCache& cache = PageCache::Shared();
    if (std::shared_ptr<const ViewContent> page = cache.Find(state->key)) return page;
    try {
      auto page = std::make_shared<const ViewContent>(build());
      cache.Insert(state->key, page);
      return page;
    } catch (const UserError& e) {
      state->error = e.what();
      status->Fail(state->error);
      throw;
    }
  };
}

// The data behind a page as /api/N.json sends it: compact, invalid UTF-8 replaced.
std::string JsonText(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A trace view: `path` is a trace file or a folder of one run's rank traces, `capture` a
// capture folder ("" for none). Read exactly as `trace report PATH [--capture CAPTURE] --html`
// reads it.
View MakeTraceView(const std::string& path, const std::string& capture) {
  View v(BaseName(path), "trace", path);
  v.build = Once(
      [path, capture] {
        const std::vector<std::string> captures =
            capture.empty() ? std::vector<std::string>{} : std::vector<std::string>{capture};
        const TraceReport report =
            BuildTraceReport(ResolveTraceReportInputs({path}, captures), ReportOptions{});
        return ViewContent{RenderReportHtml(report), JsonText(ReportToJson(report))};
      },
      v.status);
  return v;
}

View MakeView(const std::string& path, const std::string& kind) {
  if (kind == "trace") return MakeTraceView(path, "");
  View v(BaseName(path), kind, path);
  std::function<ViewContent()> make;
  if (kind == "pipeline dump" || kind == "experiment config") {
    make = [path, kind] {
      PpViewData data =
          BuildPipelineView({path}, JobRequest{}, ProjectionOptions{}, IterationChoice{});
      if (kind == "experiment config") AddLayoutSearch(data, path);
      const nlohmann::json json = data.ToJson();
      return ViewContent{RenderPpViewPage(json), JsonText(json)};
    };
    if (kind == "experiment config") {
      // The job is built and validated first thing in the projection, with the same request:
      // an architecture Sextant does not project, a framework it does not read or a model
      // file that is missing fail here as they would there.
      v.check = [path] {
        JobRequest request;
        request.config_path = path;
        BuildJob(request);
      };
    }
  } else if (kind == "memory snapshot") {
    make = [path] {
      const MemorySnapshot snapshot = LoadMemorySnapshot(path);
      const SnapshotAnalysis analysis = AnalyzeSnapshot(snapshot);
      return ViewContent{SnapshotHtml(snapshot, analysis, nullptr),
                         JsonText(SnapshotJson(snapshot, analysis))};
    };
  }
  v.build = Once(std::move(make), v.status);
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

// A file or folder to show, before the views are assembled from what was found.
struct Found {
  fs::path path;
  std::string kind;
  std::string name;  // as listed
  bool searched;     // found inside a named folder (not named itself)
};

// Returns whether every folder below `root` was searched (none was too deep). Capture folders
// inside it go to `captures`.
bool SearchDirectory(const fs::path& root, std::vector<Found>* out, std::vector<fs::path>* captures,
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
      if (IsCaptureFolder(p.string())) captures->push_back(p);
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
    std::string name = p.lexically_relative(root).string();
    if (name.empty()) name = p.string();
    out->push_back({p, ViewKindOf(p.string()), std::move(name), true});
  }
  return too_deep.empty();
}

fs::path Canonical(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

// The capture folder of the traces in `dir`, as found or named (`captures`), when its capture
// traces all lie inside it (no link out of it): `trace report --capture` reads them. Why one
// cannot be used goes to `notes`.
std::string UsableCaptureFolder(const fs::path& folder, std::vector<std::string>* notes) {
  try {
    const fs::path real = Canonical(folder);
    for (const std::string& file : ResolveTraceReportInputs({}, {folder.string()}).captures) {
      if (Canonical(file).parent_path() != real) {
        notes->push_back(fmt::format("{}: {} is not inside it; the capture traces are not used",
                                     folder.string(), file));
        return "";
      }
    }
  } catch (const UserError& e) {
    notes->push_back(fmt::format("{}: not used as capture traces: {}", folder.string(), e.what()));
    return "";
  }
  return folder.string();
}

// A trace named on its own whose folder also holds capture traces: they are read only when
// named too (the server reads the files it was given), and the note says how.
void NoteUnnamedCaptureFolder(const fs::path& trace, std::vector<std::string>* notes) {
  std::error_code ec;
  const fs::path folder = trace.has_parent_path() ? trace.parent_path() : fs::path(".");
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && IsCaptureFolder(it->path().string())) {
      notes->push_back(fmt::format(
          "{}: its graph replays are shown without the capture traces in {}; name that folder "
          "too (sextant serve {} {}) to read them, as `trace report --capture` does",
          trace.string(), it->path().string(), trace.string(), it->path().string()));
      return;
    }
  }
}

// The views of what was named and found: one per file or dump, but that a file named twice is
// one view; a graph-replay trace takes the capture folder beside it (whose own traces are then
// not listed); and the traces a searched folder holds directly are one multi-rank view when
// they are the ranks of one run, as `trace report FOLDER` reads them.
std::vector<View> AssembleViews(std::vector<Found> found, const std::vector<fs::path>& captures,
                                std::vector<std::string>* notes) {
  // The same path named twice ("f", "./f"), not two names of one file (a link is a name too).
  std::set<fs::path> seen;
  std::erase_if(found, [&](const Found& f) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(f.path, ec);
    return !seen.insert((ec ? f.path : absolute).lexically_normal()).second;
  });
  // Traces by the folder that holds them.
  auto traces_by_folder = [&found] {
    std::map<fs::path, std::vector<size_t>> by_folder;
    for (size_t i = 0; i < found.size(); ++i) {
      if (found[i].kind == "trace") by_folder[Canonical(found[i].path).parent_path()].push_back(i);
    }
    return by_folder;
  };
  std::map<fs::path, std::string> capture_of;  // a folder of replay traces -> its capture folder
  std::set<fs::path> used_captures;
  {
    const auto by_folder = traces_by_folder();
    for (const fs::path& c : captures) {
      const fs::path real = Canonical(c);
      if (by_folder.count(real.parent_path()) == 0 || capture_of.count(real.parent_path()))
        continue;
      const std::string usable = UsableCaptureFolder(c, notes);
      if (usable.empty()) continue;
      capture_of[real.parent_path()] = usable;
      used_captures.insert(real);
    }
  }
  // The capture traces are read with their replay, not listed on their own.
  std::erase_if(found, [&](const Found& f) {
    return f.kind == "trace" && used_captures.count(Canonical(f.path).parent_path()) > 0;
  });
  for (const fs::path& c : used_captures) {
    notes->push_back(
        fmt::format("{}: capture traces, read with the replay traces beside them (as `trace report "
                    "--capture` reads them)",
                    c.string()));
  }
  // Folders whose traces are the ranks of one run: every trace file `trace report FOLDER` reads
  // was found (none was a link out of the named folder), and each records its own rank.
  std::map<size_t, std::vector<size_t>> groups;  // first member -> every member
  for (const auto& [folder, members] : traces_by_folder()) {
    if (members.size() < 2 ||
        !std::all_of(members.begin(), members.end(), [&](size_t i) { return found[i].searched; }))
      continue;
    std::set<fs::path> listed, have;
    try {
      for (const std::string& f : ExpandTraceDirectories({folder.string()}))
        listed.insert(Canonical(f));
    } catch (const UserError&) {
      continue;
    }
    std::vector<std::string> files;
    for (size_t i : members) {
      have.insert(Canonical(found[i].path));
      files.push_back(found[i].path.string());
    }
    if (listed == have && AreRanksOfOneRun(files)) groups[members.front()] = members;
  }
  std::set<size_t> grouped;
  for (const auto& [first, members] : groups) grouped.insert(members.begin(), members.end());
  std::vector<View> views;
  for (size_t i = 0; i < found.size(); ++i) {
    const Found& f = found[i];
    if (f.kind != "trace") {
      View v = MakeView(f.path.string(), f.kind);
      v.name = f.name;
      views.push_back(std::move(v));
      continue;
    }
    const auto capture = capture_of.find(Canonical(f.path).parent_path());
    const std::string capture_folder = capture == capture_of.end() ? "" : capture->second;
    const std::string with_capture = capture_folder.empty() ? "" : " + " + BaseName(capture_folder);
    if (auto group = groups.find(i); group != groups.end()) {
      const fs::path folder = f.path.parent_path();
      View v = MakeTraceView(folder.string(), capture_folder);
      const std::string parent = fs::path(f.name).parent_path().string();
      v.name = fmt::format("{} ({} ranks){}", parent.empty() ? BaseName(folder.string()) : parent,
                           group->second.size(), with_capture);
      views.push_back(std::move(v));
      continue;
    }
    if (grouped.count(i)) continue;
    if (capture_folder.empty() && !f.searched) NoteUnnamedCaptureFolder(f.path, notes);
    View v = MakeTraceView(f.path.string(), capture_folder);
    v.name = f.name + with_capture;
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace

void ViewStatus::Fail(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_.empty()) failure_ = reason;
}

std::string ViewStatus::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

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
  // A capture folder's index lists capture traces; it is not one.
  if (name == kCaptureIndexName) return "";
  for (const char* ext : {".json", ".json.gz", ".json.zst", ".pb", ".pt.trace.json"}) {
    if (EndsWith(name, ext)) return "trace";
  }
  return "";
}

std::vector<View> FindViews(const std::vector<std::string>& named,
                            std::vector<std::string>* notes) {
  std::vector<Found> found;
  std::vector<fs::path> captures;
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
      if (IsCaptureFolder(path)) captures.push_back(path);
      const size_t before = found.size();
      const bool searched_all = SearchDirectory(path, &found, &captures, notes);
      if (found.size() == before && searched_all) {
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
    found.push_back({path, kind, BaseName(path), false});
  }
  return AssembleViews(std::move(found), captures, notes);
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
