// What `sextant serve` shows: one view per file or directory the user named (and per
// recognised file inside a named directory), each built on its first request and then kept in
// the page cache (server/page_cache.h).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "job/job_builder.h"
#include "projection/projection_options.h"
#include "server/page_cache.h"
#include "server/pp_view_data.h"

namespace sextant {

// Why a view cannot be shown, once that is known, shared by the threads that build and check
// it and the index that lists it.
class ViewStatus {
 public:
  void Fail(const std::string& reason);
  std::string failure() const;  // "" while no failure is known
 private:
  mutable std::mutex mu_;
  std::string failure_;
};

struct View {
  View(std::string name_, std::string kind_, std::string path_,
       std::function<std::shared_ptr<const ViewContent>()> build_ = nullptr)
      : name(std::move(name_)),
        kind(std::move(kind_)),
        path(std::move(path_)),
        build(std::move(build_)) {}

  std::string name;  // as listed in the index
  std::string kind;  // "pipeline dump", "experiment config", "trace", "memory snapshot"
  std::string path;  // as named (or found inside a named directory)
  // The page and its data: built on the first call and kept while the page cache holds them
  // (a UserError is kept for good and thrown on every call).
  std::function<std::shared_ptr<const ViewContent>()> build;
  // A check far cheaper than `build` that throws the UserError `build` would throw for the
  // most common reasons a view cannot be shown (a config's job is built and validated, not
  // projected: ~10 ms). Null where there is none.
  std::function<void()> check;
  // A failure of `build` is recorded here by the view itself; one of `check` by its caller
  // (ViewServer::WarmUp), and `build` then fails with it without building.
  std::shared_ptr<ViewStatus> status = std::make_shared<ViewStatus>();
};

// The kind of a path by its content and name ("" when not recognised): a directory holding
// config.json and pp_rank_0.json is a pipeline dump; .yaml/.yml/.toml an experiment config;
// .pickle/.pkl a memory snapshot; .json(.gz|.zst) and .pb traces, but for a capture folder's
// execution_details.json.
std::string ViewKindOf(const std::string& path);

// The views of the named paths. A named directory that is not a pipeline dump is searched (up
// to 4 levels, 1000 entries) for files of a known kind; symbolic links that lead outside it are
// skipped. A path named twice is one view. Traces are grouped as `trace report` reads them: the
// traces directly inside a searched folder are one view of several ranks when each records its
// own rank of one run (distributedInfo), and the traces beside a capture folder (named, or
// found in a named folder) are read with it as their --capture. What is not shown is said in
// `*notes`. UserError if a named path does not exist.
std::vector<View> FindViews(const std::vector<std::string>& paths, std::vector<std::string>* notes);

// The names of the runs of `paths` in a pipeline view: each path's last component, with as many
// of its directories as it takes to tell it from the others ("a/pp8" and "b/pp8").
std::vector<std::string> DistinctViewNames(const std::vector<std::string>& paths);

// The pipeline view of measured dumps and experiment configs (simulated with `options`; a
// schedule of "all" simulates every schedule the layout can run), as `pp view` shows it.
// `request` is the job request every config is built with (its config_path is replaced); the
// job's warnings become notes of the view.
PpViewData BuildPipelineView(const std::vector<std::string>& paths, const JobRequest& request,
                             const ProjectionOptions& options, const IterationChoice& choice);

}  // namespace sextant
