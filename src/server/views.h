// What `sextant serve` shows: one view per file or directory the user named (and per
// recognised file inside a named directory), each built on its first request and then kept,
// so a large trace is read once however often its page is asked for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "job/job_builder.h"
#include "projection/projection_options.h"
#include "server/pp_view_data.h"

namespace sextant {

struct ViewContent {
  std::string html;     // the page, self-contained (also what the export downloads)
  nlohmann::json json;  // the data behind it
};

struct View {
  std::string name;  // as listed in the index
  std::string kind;  // "pipeline dump", "experiment config", "trace", "memory snapshot"
  std::string path;  // as named (or found inside a named directory)
  std::function<ViewContent()> build;
};

// The kind of a path by its content and name ("" when not recognised): a directory holding
// config.json and pp_rank_0.json is a pipeline dump; .yaml/.yml/.toml an experiment config;
// .pickle/.pkl a memory snapshot; .json(.gz|.zst) and .pb traces.
std::string ViewKindOf(const std::string& path);

// The views of the named paths. A named directory that is not a pipeline dump is searched (up
// to 4 levels, 1000 entries) for files of a known kind; symbolic links that lead outside it are
// skipped. What is not shown is said in `*notes`. UserError if a named path does not exist.
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
