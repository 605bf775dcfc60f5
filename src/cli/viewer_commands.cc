// `sextant pp view` (the pipeline-schedule viewer) and `sextant serve` (the web UI over every
// file Sextant reads), both served by server/view_server.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/projection_flags.h"
#include "pipeline/pp_dump_reader.h"
#include "server/pp_view_page.h"
#include "server/view_server.h"
#include "server/views.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant::cli {
namespace {

struct ServeFlags {
  std::string host = "127.0.0.1";
  int port = 8988;
};

void AddServeFlags(CLI::App* cmd, ServeFlags& f) {
  cmd->add_option("--port", f.port,
                  "port to listen on (default 8988, Primus's viewer port; 0: any)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", f.host, "address to listen on (default 127.0.0.1: this machine only)");
}

// Serves until interrupted; says where on stdout (flushed, so a script can read the URL).
void Serve(std::vector<View> views, std::vector<std::string> notes, const ServeFlags& f) {
  ViewServer server(std::move(views), std::move(notes));
  const int port = server.Bind(f.host, f.port);
  if (!ViewServer::IsLoopback(f.host)) {
    std::fprintf(stderr,
                 "sextant: warning: listening on %s, not loopback: every machine that can reach "
                 "this address can read these views\n",
                 f.host.c_str());
  }
  const std::string host = f.host.find(':') != std::string::npos ? "[" + f.host + "]" : f.host;
  std::printf("Serving on http://%s:%d/ (Ctrl-C to stop)\n", host.c_str(), port);
  std::fflush(stdout);
  server.WarmUp();
  server.Run();
}

struct PpViewArgs {
  std::vector<std::string> inputs;
  std::string iteration;
  std::string html;
  ServeFlags serve;
};

void RunPpView(PpViewArgs args, const ProjectionOptions& options, const CLI::App* command) {
  if (!options.chrome_trace.empty() || !options.pp_dump.empty()) {
    ThrowUserError(
        "--chrome-trace and --pp-dump export a projected step: use `projection performance` "
        "(pp view shows schedules; --html writes the view)");
  }
  if (!options.config.empty()) args.inputs.push_back(options.config);
  if (args.inputs.empty()) {
    ThrowUserError("pp view needs a dump directory or an experiment config (or --config)");
  }
  for (const std::string& in : args.inputs) {
    std::error_code ec;
    if (!std::filesystem::exists(in, ec)) {
      // "--num_layers 8" leaves "8" among the inputs: overrides are --key=value here.
      ThrowUserError(
          fmt::format("{}: no such file or directory{}", in,
                      command->remaining().empty()
                          ? ""
                          : " (configuration overrides take the --key=value form after pp view)"));
    }
  }
  for (const std::string& in : args.inputs) {
    // config.json and pp_rank_N.json are JSON, but the dump is read as a whole.
    if (const std::string dump = PipelineDumpOfFile(in); !dump.empty()) {
      ThrowUserError(fmt::format(
          "{}: one file of the pipeline dump {}: pp view reads the dump's directory (sextant "
          "pp view {})",
          in, dump, dump));
    }
    // A profiler trace or an allocator snapshot would otherwise be read as a YAML config.
    const std::string kind = ViewKindOf(in);
    if (kind == "trace" || kind == "memory snapshot") {
      ThrowUserError(fmt::format(
          "{}: a {}: pp view reads Primus pipeline dumps and experiment configs; use `sextant "
          "{}` (or `sextant serve`, which shows every kind)",
          in, kind == "trace" ? "profiler trace" : "memory snapshot",
          kind == "trace" ? "trace report" : "memory snapshot"));
    }
  }
  if (!args.iteration.empty() &&
      std::none_of(args.inputs.begin(), args.inputs.end(), [](const std::string& in) {
        std::error_code ec;
        return std::filesystem::is_directory(in, ec);
      })) {
    // A config is simulated for one step: there is no other iteration to pick.
    ThrowUserError(
        fmt::format("--iteration {}: picks an iteration of a measured dump; an experiment config "
                    "is simulated for one step (give a dump directory, or leave --iteration out)",
                    args.iteration));
  }
  // Before reading the dumps; WriteFileAtomically checks against every file read below.
  CheckOutputFile(args.html, args.inputs);
  JobRequest request = ToJobRequest(options, command);
  const PpViewData data = BuildPipelineView(args.inputs, request, options, {args.iteration});
  const nlohmann::json view = data.ToJson();
  if (options.json) {  // --json, one of the projection flags: the view's data
    std::cout << view.dump(1) << "\n";
    return;
  }
  std::cout << RenderPpViewText(view);
  if (!args.html.empty()) {
    // The files read: configs, and every file of a dump directory.
    std::vector<std::string> inputs;
    for (const std::string& in : args.inputs) {
      std::error_code ec;
      if (std::filesystem::is_directory(in, ec)) {
        for (const auto& entry : std::filesystem::directory_iterator(in, ec)) {
          inputs.push_back(entry.path().string());
        }
      } else {
        inputs.push_back(in);
      }
    }
    for (const std::string* p : {&options.hardware_config, &options.calibration}) {
      if (!p->empty()) inputs.push_back(*p);
    }
    WriteFileAtomically(args.html, RenderPpViewPage(view), inputs);
    std::cout << "\nHTML view written to " << args.html << "\n";
    return;
  }
  // Built already: the one page is held here, outside the page cache.
  auto page = std::make_shared<const ViewContent>(ViewContent{
      RenderPpViewPage(view), view.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  View v(data.runs().size() == 1 ? data.runs()[0]["name"].get<std::string>() : "pipeline schedules",
         "pipeline view", args.inputs.front(), [page] { return page; });
  std::cout << "\n";
  Serve({std::move(v)}, {}, args.serve);
}

}  // namespace

void AddViewerCommands(CLI::App& app) {
  auto* pp =
      app.add_subcommand("pp", "Pipeline-schedule dumps: view measured and simulated schedules");
  pp->require_subcommand(1);
  auto args = std::make_shared<PpViewArgs>();
  auto opts = std::make_shared<ProjectionOptions>();
  auto* view = pp->add_subcommand(
      "view",
      "Per-rank pipeline timelines of Primus dumps (config.json + pp_rank_N.json) and of "
      "experiment configs simulated with the projection's flags; served on 127.0.0.1:8988 or "
      "written with --html");
  view->add_option("inputs", args->inputs,
                   "dump directories and/or experiment configs (overrides: --key=value)");
  view->add_option("--iteration", args->iteration,
                   "dump iteration shown first: a key (7), or all (default: the median by time, "
                   "after the first)");
  view->add_option("--html", args->html, "write the view as one self-contained HTML file");
  AddServeFlags(view, args->serve);
  AddProjectionFlags(view, *opts);
  // Exports of a projected step belong to `projection performance`: left out of this help
  // (RunPpView still says where to go if they are given).
  for (const char* flag : {"--chrome-trace", "--pp-dump"}) view->get_option(flag)->group("");
  view->callback([args, opts, view] { RunPpView(*args, *opts, view); });

  auto flags = std::make_shared<ServeFlags>();
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* serve = app.add_subcommand(
      "serve",
      "Web UI over the named files: pipeline dumps and configs (schedules, memory per stage, "
      "scaling), traces and memory snapshots; each page also exports as one HTML file");
  serve->add_option("paths", *paths, "files and directories to serve")->required();
  AddServeFlags(serve, *flags);
  serve->callback([flags, paths] {
    std::vector<std::string> notes;
    std::vector<View> views = FindViews(*paths, &notes);
    for (const std::string& n : notes) std::fprintf(stderr, "sextant: note: %s\n", n.c_str());
    if (views.empty()) ThrowUserError("nothing to serve: no file of a kind Sextant reads");
    Serve(std::move(views), std::move(notes), *flags);
  });
}

}  // namespace sextant::cli
