// `sextant memory snapshot` (allocator snapshot analysis) and `sextant memory watch` (GPU
// memory and utilisation sampling while a command runs).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "snapshot/gpu_sampler.h"
#include "snapshot/memory_snapshot.h"
#include "snapshot/process_watch.h"
#include "snapshot/snapshot_analysis.h"
#include "snapshot/snapshot_compare.h"
#include "snapshot/snapshot_report.h"
#include "snapshot/watch_report.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant::cli {
namespace {

std::string Dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

struct SnapshotArgs {
  std::string file;
  std::string compare;
  std::string html;
  bool json = false;
  size_t top = 10;
};

void RunSnapshot(const SnapshotArgs& args) {
  CheckOutputFile(args.html, {args.file, args.compare});
  MemorySnapshot snapshot = LoadMemorySnapshot(args.file);
  SnapshotAnalysis analysis = AnalyzeSnapshot(snapshot);
  SnapshotReportOptions options;
  options.top_sites = args.top;
  std::unique_ptr<SnapshotComparison> comparison;
  std::unique_ptr<SnapshotAnalysis> compared;
  if (!args.compare.empty()) {
    // The file given first is the base; --compare names the new one.
    MemorySnapshot other = LoadMemorySnapshot(args.compare);
    compared = std::make_unique<SnapshotAnalysis>(AnalyzeSnapshot(other));
    comparison = std::make_unique<SnapshotComparison>(CompareSnapshots(analysis, *compared));
  }
  if (!args.html.empty()) {
    WriteFileAtomically(args.html,
                        SnapshotHtml(snapshot, analysis, comparison.get(), options, compared.get()),
                        {args.file, args.compare});
  }
  if (args.json) {
    nlohmann::json j = SnapshotJson(snapshot, analysis, options);
    if (comparison) j["comparison"] = ComparisonJson(*comparison, options);
    std::cout << Dump(j);
    return;
  }
  std::cout << SnapshotText(snapshot, analysis, options);
  if (comparison) std::cout << "\n" << ComparisonText(*comparison, options);
  if (!args.html.empty()) std::cout << "\nHTML report written to " << args.html << "\n";
}

struct WatchArgs {
  int interval_ms = 500;
  std::string output;
  std::string sysfs_root = "/sys/class/drm";
  bool json = false;
  std::vector<std::string> command;
};

int RunWatch(const WatchArgs& args) {
  if (args.command.empty()) ThrowUserError("memory watch: give the command to run after --");
  if (args.interval_ms < 1) ThrowUserError("memory watch: --interval-ms must be at least 1");
  WatchOutputFormat format = WatchOutputFormat::kNone;
  if (!args.output.empty()) format = WatchFormatForPath(args.output);
  // Before the command runs, not after hours of sampling: a path that cannot be written.
  CheckOutputFile(args.output, {});
  std::unique_ptr<GpuSampler> sampler = OpenGpuSampler(args.sysfs_root);
  if (!sampler) {
    std::fprintf(stderr,
                 "sextant: memory watch: no GPU found (no NVML, no amdsmi, no %s/card*/device/"
                 "mem_info_vram_*); running the command without sampling\n",
                 args.sysfs_root.c_str());
  }
  WatchResult result = WatchCommand(args.command, sampler.get(), args.interval_ms);
  if (!result.start_error.empty()) {
    // Nothing ran, so there is nothing to write; 126/127 as a shell gives them.
    std::fprintf(stderr, "sextant: memory watch: %s\n", result.start_error.c_str());
    return result.exit_status;
  }
  bool written = true;
  if (format != WatchOutputFormat::kNone) {
    try {
      WriteFileAtomically(args.output, RenderWatch(result, format));
    } catch (const UserError& e) {
      // The file system changed under the run (disk full, directory removed): the samples
      // still reach the console below, and the command's status is kept when it failed.
      std::fprintf(stderr, "sextant: error: %s\n", e.what());
      written = false;
    }
  }
  if (args.json) {
    std::cout << Dump(WatchJson(result));
  } else if (sampler) {
    std::fprintf(stderr, "%s", WatchSummaryText(result).c_str());
  }
  return written || result.exit_status != 0 ? result.exit_status : 1;
}

}  // namespace

void AddMemoryCommands(CLI::App& app) {
  auto* memory = app.add_subcommand("memory", "GPU memory: allocator snapshots and sampling");
  memory->require_subcommand(1);

  auto snapshot_args = std::make_shared<SnapshotArgs>();
  auto* snap = memory->add_subcommand(
      "snapshot", "Analyse a PyTorch allocator snapshot (torch.cuda.memory._snapshot() pickle)");
  snap->add_option("file", snapshot_args->file, "snapshot .pickle (or .pickle.gz)")->required();
  snap->add_option("--compare", snapshot_args->compare,
                   "a second snapshot to compare with (the first file is the base)");
  snap->add_option("--html", snapshot_args->html, "write a self-contained HTML report here");
  snap->add_option("--top", snapshot_args->top,
                   "call sites to list per device (the rest are summed in one row)")
      ->capture_default_str()
      ->check(AtLeast(1));
  snap->add_flag("--json", snapshot_args->json, "print the result as JSON");
  snap->callback([snapshot_args] { RunSnapshot(*snapshot_args); });

  auto watch_args = std::make_shared<WatchArgs>();
  auto* watch = memory->add_subcommand(
      "watch", "Run a command and sample GPU memory used/total and utilisation per device");
  watch->add_option("--interval-ms", watch_args->interval_ms, "sampling interval")
      ->capture_default_str()
      ->check(WholeNumberBetween(1, 3'600'000));  // up to an hour between samples
  watch->add_option("-o,--output", watch_args->output,
                    "write samples to FILE (.csv, .json or .html by extension)");
  watch
      ->add_option("--sysfs-root", watch_args->sysfs_root,
                   "where the AMD DRM sysfs tree is (for tests and containers)")
      ->capture_default_str();
  watch->add_flag("--json", watch_args->json, "print the samples as JSON on stdout");
  watch->add_option("command", watch_args->command, "the command to run, after --")->required();
  watch->callback([watch_args] {
    // The command's own exit status is ours, as with `time` or `timeout`.
    SetExitStatus(RunWatch(*watch_args));
  });
}

}  // namespace sextant::cli
