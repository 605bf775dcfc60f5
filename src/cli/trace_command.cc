// sextant trace report | diff | merge: PyTorch profiler (Kineto) trace analysis.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "pipeline/pp_dump_reader.h"
#include "report/console_table.h"
#include "report/csv_writer.h"
#include "report/html_writer.h"
#include "report/json_table.h"
#include "report/xlsx_writer.h"
#include "trace/kernel_name.h"
#include "trace/kineto_reader.h"
#include "trace/report_json.h"
#include "trace/trace_diff.h"
#include "trace/trace_merge.h"
#include "trace/trace_report.h"
#include "trace/trace_runner.h"
#include "trace/tracelens_format.h"
#include "trace/tracelens_jax.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> traces;
  std::string gpu_arch, xlsx, csv_dir, html;
  std::string format = "sextant";  // names of the --csv files / --xlsx sheets and their columns
  std::vector<std::string> captures;
  bool json = false;
  bool mpi = false;
  unsigned threads = 0;
  size_t top = 10;
};

// A piece of a report on standard output; a write that fails (a full disk, a closed pipe) ends
// the command there.
void WriteStandardOutput(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::ferror(stdout)) {
    ThrowUserError(fmt::format("writing standard output: {}",
                               errno != 0 ? std::strerror(errno) : "write failed"));
  }
}

void WarnAboutLeftovers(const std::string& dir, const std::vector<std::string>& names) {
  const std::string warning = LeftoverCsvWarning(dir, names);
  if (!warning.empty()) std::fprintf(stderr, "sextant: warning: %s\n", warning.c_str());
}

std::vector<const Table*> Pointers(const std::vector<Table>& tables) {
  std::vector<const Table*> out;
  for (const auto& t : tables) out.push_back(&t);
  return out;
}

// --format tracelens: TraceLens's file, sheet and column names (trace/tracelens_format.h), one
// report per trace, as TraceLens writes them: per rank for Kineto traces, per file for an XLA
// profile (its JAX report spans the file's GPUs).
struct TraceLensReport {
  std::string label;        // its directory inside --csv
  std::string sheet_label;  // its sheet-name suffix: short, Excel's names hold 31 characters
  std::vector<Table> tables;
};

// Built from the ranks' own tables (CombineReports shows them whole before their rows move
// into the combined tables). Unless `keep_activities` (--json writes them too), the XPlane
// GPUs' xla_activities tables are taken from them and freed as they are read.
std::vector<TraceLensReport> TraceLensReports(std::vector<RankReport>& ranks,
                                              bool keep_activities) {
  std::vector<TraceLensReport> reports;
  std::map<int64_t, int> seen;  // two files of one rank (two runs' rank 0) get rank0, rank0_2
  std::map<std::string, int> seen_files;
  std::map<int64_t, size_t> xplane_files;  // command-line position -> index in `reports`
  std::vector<std::vector<RankReport*>> xplane_devices;
  for (RankReport& rank : ranks) {
    if (rank.xplane) {
      auto [it, added] = xplane_files.try_emplace(rank.argument, xplane_devices.size());
      if (added) {
        xplane_devices.emplace_back();
        // Named after the file (its host), as TraceLens names its report.
        std::string label = std::filesystem::path(rank.file).filename().string();
        if (label.ends_with(".xplane.pb")) label.resize(label.size() - 10);
        const int copy = ++seen_files[label];
        reports.push_back({copy == 1 ? label : fmt::format("{}_{}", label, copy),
                           fmt::format("f{}", rank.argument + 1),
                           {}});
      }
      xplane_devices[it->second].push_back(&rank);
      continue;
    }
    const int copy = ++seen[rank.rank];
    const std::string label =
        copy == 1 ? fmt::format("rank{}", rank.rank) : fmt::format("rank{}_{}", rank.rank, copy);
    reports.push_back({label, label, TraceLensTables(rank)});
  }
  size_t file = 0;
  for (TraceLensReport& r : reports) {
    if (!r.tables.empty()) continue;
    const std::vector<RankReport*>& devices = xplane_devices[file++];
    if (keep_activities) {
      r.tables = TraceLensJaxTables(std::vector<const RankReport*>(devices.begin(), devices.end()));
      continue;
    }
    std::vector<Table> activities;
    for (RankReport* device : devices) {
      std::vector<Table>& tables = device->tables;
      for (auto t = tables.begin(); t != tables.end();) {
        if (t->name() != "xla_activities") {
          ++t;
          continue;
        }
        activities.push_back(std::move(*t));
        t = tables.erase(t);
      }
    }
    r.tables = TraceLensJaxTablesFromActivities(std::move(activities));
  }
  return reports;
}

// One rank's tables go straight into the directory / workbook, as TraceLens writes one report
// per trace; several ranks get a directory (rank<N>/) or a sheet suffix (_rank<N>) each.
void WriteTraceLensFormat(std::vector<TraceLensReport> reports, const TraceReport& report,
                          const ReportArgs& args, const std::vector<std::string>& inputs) {
  const bool several = reports.size() > 1;
  // Across ranks, TraceLens's multi-rank collective report: its files beside the rank
  // directories, its sheets under their own names.
  std::vector<Table> multi_rank = TraceLensMultiRankTables(report);
  if (!args.csv_dir.empty()) {
    // One output, written whole or not at all: the per-report folders inside the directory.
    std::vector<CsvFolder> folders;
    if (several) folders.push_back({"", Pointers(multi_rank)});
    for (const TraceLensReport& r : reports)
      folders.push_back({several ? r.label : "", Pointers(r.tables)});
    WarnAboutLeftovers(args.csv_dir, WriteCsvFolders(folders, args.csv_dir, inputs));
  }
  std::vector<Table> sheets;
  for (Table& t : multi_rank) sheets.push_back(std::move(t));
  for (TraceLensReport& r : reports) {
    for (Table& t : r.tables) {
      if (!several) {
        sheets.push_back(std::move(t));
        continue;
      }
      // Excel's 31-character sheet names: shorten the table's name, never the report label.
      const std::string suffix = "_" + r.sheet_label;
      const size_t room = suffix.size() < 31 ? 31 - suffix.size() : 0;
      Table renamed(t.name().substr(0, room) + suffix, t.title(), t.columns());
      for (const auto& row : t.rows()) renamed.AddRow(row);
      sheets.push_back(std::move(renamed));
    }
  }
  if (!args.xlsx.empty()) WriteXlsx(Pointers(sheets), args.xlsx, inputs);
}

// A pipeline dump's config.json and pp_rank_N.json are JSON but not traces: say what they are
// and what reads them, not "no traceEvents array".
std::vector<std::string> RefusePipelineDumpFiles(std::vector<std::string> files) {
  for (const std::string& file : files) {
    if (const std::string dump = PipelineDumpOfFile(file); !dump.empty()) {
      ThrowUserError(fmt::format(
          "{}: one file of the pipeline dump {}, not a profiler trace: `sextant pp view {}` "
          "shows the dump",
          file, dump, dump));
    }
  }
  return files;
}

void RunReport(ReportArgs args) {
  // Directories stand for their trace files; a capture folder or its execution_details.json
  // for the capture traces it holds.
  TraceReportInputs files = ResolveTraceReportInputs(args.traces, args.captures);
  RefusePipelineDumpFiles(files.traces);
  args.traces = files.traces;
  args.captures = files.captures;
  ReportOptions options;
  options.gpu_arch = args.gpu_arch;
  options.capture_traces = args.captures;
  // The tables the outputs asked for write, and no more.
  options.every_table = args.json || !args.csv_dir.empty() || !args.xlsx.empty();
  options.page = !args.html.empty();
  // Before the analysis, which can take minutes; the writers check again.
  std::vector<std::string> inputs = args.traces;
  inputs.insert(inputs.end(), args.captures.begin(), args.captures.end());
  if (args.format == "tracelens" && args.csv_dir.empty() && args.xlsx.empty()) {
    std::fprintf(stderr,
                 "sextant: warning: --format tracelens names the --csv files and --xlsx sheets; "
                 "without either it changes nothing\n");
  }
  for (const std::string& out : {args.html, args.xlsx}) CheckOutputFile(out, inputs);
  if (!args.html.empty()) RefuseOtherFormatName(args.html, ".html");
  if (!args.xlsx.empty()) RefuseOtherFormatName(args.xlsx, ".xlsx");
  CheckOutputDirectory(args.csv_dir);
  std::vector<TraceLensReport> tracelens;
  std::function<void(std::vector<RankReport>&)> read_rank_tables;
  if (args.format == "tracelens") {
    read_rank_tables = [&](std::vector<RankReport>& sorted) {
      tracelens = TraceLensReports(sorted, /*keep_activities=*/args.json);
    };
  }
  TraceReport report;
  if (args.mpi) {
    bool root = true;
    std::vector<RankReport> ranks = AnalyzeTraceFilesMpi(args.traces, options, args.threads, &root);
    if (!root) return;  // rank 0 writes every output
    report = CombineReports(std::move(ranks), /*keep_rank_tables=*/false, read_rank_tables);
  } else {
    report = BuildTraceReport(files, options, args.threads, read_rank_tables);
  }
  // Once, on stderr (the console report on stdout does not repeat them).
  for (const auto& r : report.ranks) {
    for (const auto& w : r.warnings) {
      if (report.ranks.size() > 1) {
        std::fprintf(stderr, "sextant: warning: rank %lld (%s): %s\n",
                     static_cast<long long>(r.rank), r.file.c_str(), w.c_str());
      } else {
        std::fprintf(stderr, "sextant: warning: %s\n", WarningAboutFile(r.file, w).c_str());
      }
    }
  }
  if (args.format == "tracelens") {
    WriteTraceLensFormat(std::move(tracelens), report, args, inputs);
  } else {
    if (!args.csv_dir.empty()) {
      WarnAboutLeftovers(args.csv_dir,
                         WriteCsvDirectory(Pointers(report.tables), args.csv_dir, inputs));
    }
    if (!args.xlsx.empty()) WriteXlsx(Pointers(report.tables), args.xlsx, inputs);
  }
  if (!args.html.empty()) WriteReportHtml(report, args.html, inputs);
  if (args.json) {
    // Row by row: the report is never held as a JSON tree nor as one string.
    JsonStream json(WriteStandardOutput);
    WriteReportJson(report, json);
    WriteStandardOutput("\n");
  } else {
    std::fputs(ReportToConsole(report, args.top).c_str(), stdout);
  }
}

struct DiffArgs {
  std::string base, next, html, csv_dir;
  bool json = false;
  size_t top = 30;
};

// One trace of a file for `trace diff`: a Kineto trace, or the GPU of an XPlane profile (JAX)
// that ran the most kernel time, said in a warning when the profile holds several.
TraceData ReadTraceToCompare(const std::string& path) {
  std::vector<TraceData> traces = ReadTraceFile(path);
  if (traces.size() == 1) return std::move(traces.front());
  auto kernel_ns = [](const TraceData& t) {
    int64_t ns = 0;
    for (const GpuEvent& g : t.gpu)
      if (g.kind == GpuKind::kKernel) ns += g.dur_ns;
    return ns;
  };
  size_t best = 0;
  for (size_t i = 1; i < traces.size(); ++i)
    if (kernel_ns(traces[i]) > kernel_ns(traces[best])) best = i;
  std::fprintf(stderr,
               "sextant: warning: %s holds %zu GPUs: GPU %lld, which ran the most kernel time, "
               "is compared\n",
               path.c_str(), traces.size(), static_cast<long long>(traces[best].rank));
  return std::move(traces[best]);
}

// How each `trace diff` table is named on the HTML page and in --json (SPEC §1.3's keys).
struct DiffTableName {
  std::string_view table, heading, json_key;
};
constexpr DiffTableName kDiffTableNames[] = {
    {"timeline_diff", "GPU timeline", "timeline"},
    {"rank_timeline_diff", "GPU time per rank", "ranks"},
    {"straggler_diff", "Waiting at collectives per rank", "stragglers"},
    {"collective_sync_diff", "Collectives across ranks", "collective_sync"},
    {"kernel_category_diff", "Kernel categories", "kernel_categories"},
    {"kernel_diff", "Kernels", "kernels"},
    {"op_diff", "Ops", "ops"},
    {"op_shape_diff", "Ops by shape", "op_shapes"},
    {"roofline_diff", "Roofline", "roofline"}};

const DiffTableName* FindDiffTableName(std::string_view table) {
  for (const DiffTableName& n : kDiffTableNames)
    if (n.table == table) return &n;
  return nullptr;
}

// Names in the order a person numbers them: "rank2" before "rank10".
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      std::string_view x(a.data() + i, ei - i), y(b.data() + j, ej - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// Two runs given as directories (or one trace each): their traces paired in file-name order,
// each pair compared, the mean rank reported.
TraceDiff DiffRuns(const DiffArgs& args, std::vector<Table>* extra, std::string* base_gpu,
                   std::string* new_gpu) {
  std::vector<std::string> base_files =
      RefusePipelineDumpFiles(ExpandTraceDirectories({args.base}));
  std::vector<std::string> new_files = RefusePipelineDumpFiles(ExpandTraceDirectories({args.next}));
  if (base_files.size() == 1 && new_files.size() == 1) {
    TraceData base = ReadTraceToCompare(base_files[0]);
    TraceData next = ReadTraceToCompare(new_files[0]);
    *base_gpu = base.device_name;
    *new_gpu = next.device_name;
    return DiffTraces(base, next);  // its warnings include the readers', by side
  }
  if (base_files.size() != new_files.size()) {
    throw UserError(fmt::format(
        "trace diff compares two runs rank by rank: {} holds {} trace{} and {} holds {}; give "
        "directories of the same ranks, or one trace each",
        args.base, base_files.size(), base_files.size() == 1 ? "" : "s", args.next,
        new_files.size()));
  }
  std::sort(base_files.begin(), base_files.end(), NaturalLess);
  std::sort(new_files.begin(), new_files.end(), NaturalLess);
  RankDiffAccumulator ranks;
  // Pairs by the rank each trace records (distributedInfo), else by file-name order. Traces
  // are read a pair at a time; one whose partner has not been read yet waits for it, so runs
  // named alike keep one pair in memory and differently named runs at most one side.
  std::map<int64_t, TraceData> waiting_base, waiting_new;
  bool by_position = false;
  for (size_t i = 0; i < base_files.size(); ++i) {
    TraceData base = ReadTraceToCompare(base_files[i]);
    TraceData next = ReadTraceToCompare(new_files[i]);
    if (i == 0) {
      *base_gpu = base.device_name;
      *new_gpu = next.device_name;
    }
    if (by_position || base.rank < 0 || next.rank < 0) {
      // A side without recorded ranks: file-name order (and the rank, where one side has it).
      if (!waiting_base.empty() || !waiting_new.empty()) {
        throw UserError(fmt::format(
            "trace diff: {} records no rank (distributedInfo) while earlier traces were paired "
            "by rank; give runs whose traces all record their rank, or none",
            base.rank < 0 ? base_files[i] : new_files[i]));
      }
      by_position = true;
      const int64_t rank = base.rank >= 0 ? base.rank : static_cast<int64_t>(i);
      ranks.AddCollectives(ExtractCollectives(base, rank), ExtractCollectives(next, rank));
      ranks.Add(rank, DiffTraces(base, next));
      continue;
    }
    const int64_t base_rank = base.rank, new_rank = next.rank;
    for (auto [waiting, rank, file, run] :
         {std::tuple{&waiting_base, base_rank, &base_files[i], &args.base},
          std::tuple{&waiting_new, new_rank, &new_files[i], &args.next}}) {
      if (waiting->count(rank) > 0 || ranks.Has(rank)) {
        throw UserError(
            fmt::format("trace diff: {} holds rank {} twice ({} is one)", *run, rank, *file));
      }
    }
    waiting_base.emplace(base_rank, std::move(base));
    waiting_new.emplace(new_rank, std::move(next));
    for (int64_t rank : {base_rank, new_rank}) {
      auto b = waiting_base.find(rank);
      auto n = waiting_new.find(rank);
      if (b == waiting_base.end() || n == waiting_new.end()) continue;
      ranks.AddCollectives(ExtractCollectives(b->second, rank),
                           ExtractCollectives(n->second, rank));
      ranks.Add(rank, DiffTraces(b->second, n->second));
      waiting_base.erase(b);
      waiting_new.erase(n);
    }
  }
  for (const auto& [waiting, other] :
       {std::pair{&waiting_base, &args.next}, std::pair{&waiting_new, &args.base}}) {
    if (waiting->empty()) continue;
    const auto& [rank, trace] = *waiting->begin();
    throw UserError(fmt::format(
        "trace diff: rank {} ({}) has no trace of the same rank in {}; the two runs must hold "
        "the same ranks",
        rank, trace.path, *other));
  }
  TraceDiff diff = ranks.Mean();
  diff.base_path = args.base;
  diff.new_path = args.next;
  extra->push_back(ranks.RankTimelineTable());
  for (Table& t : ranks.CrossRankTables()) extra->push_back(std::move(t));
  return diff;
}

void RunDiff(const DiffArgs& args) {
  if (args.next.empty()) {
    throw UserError(
        fmt::format("trace diff compares two traces: give the trace to compare with {} after it "
                    "(sextant trace diff BASE NEW)",
                    args.base));
  }
  CheckOutputFile(args.html, {args.base, args.next});
  CheckOutputDirectory(args.csv_dir);
  std::vector<Table> rank_tables;
  std::string base_gpu, new_gpu;
  TraceDiff diff = DiffRuns(args, &rank_tables, &base_gpu, &new_gpu);
  for (const auto& w : diff.warnings) std::fprintf(stderr, "sextant: warning: %s\n", w.c_str());
  // The per-rank timeline (several ranks) follows the mean rank's.
  auto with_ranks = [&](std::vector<Table> tables) {
    tables.insert(tables.begin() + 1, rank_tables.begin(), rank_tables.end());
    return tables;
  };
  std::vector<Table> tables = with_ranks(DiffTables(diff, 0));
  const std::vector<std::string> inputs = {args.base, args.next};
  if (!args.csv_dir.empty()) {
    WarnAboutLeftovers(args.csv_dir, WriteCsvDirectory(Pointers(tables), args.csv_dir, inputs));
  }
  if (!args.html.empty()) {
    // The page says what the console says first: which traces, on which GPUs, and the
    // warnings (different GPUs, iteration counts) that the numbers below must be read with.
    Table traces("traces", "Traces compared",
                 {{"role", "role", 0}, {"file", "file", 0}, {"gpu", "GPU", 0}});
    traces.AddRow({std::string("base"), args.base, base_gpu});
    traces.AddRow({std::string("new"), args.next, new_gpu});
    Table warnings("warnings", "Warnings", {{"warning", "warning", 0, true}});
    for (const auto& w : diff.warnings) warnings.AddRow({w});
    std::vector<const Table*> header = {&traces};
    if (!warnings.empty()) header.push_back(&warnings);
    // One section per comparison, so the page opens with links to each (the file names are in
    // the Traces table, not in a heading that would run across the page).
    std::vector<HtmlSection> sections = {{.heading = "Traces", .tables = header}};
    for (const Table& t : tables) {
      const DiffTableName* n = FindDiffTableName(t.name());
      sections.push_back({.heading = n ? std::string(n->heading) : t.title(), .tables = {&t}});
    }
    HtmlPage page("Trace diff: " + args.base + " vs " + args.next, std::move(sections));
    page.cell_text = PersonCellText;
    WriteHtmlPage(args.html, page, inputs);
  }
  if (args.json) {
    nlohmann::json out;
    out["base"] = args.base;
    out["new"] = args.next;
    for (const Table& t : tables) {
      const DiffTableName* n = FindDiffTableName(t.name());
      out[n ? std::string(n->json_key) : t.name()] = TableRowsToJson(t);
    }
    out["per_iteration"] = diff.per_iteration;
    out["warnings"] = diff.warnings;
    std::printf("%s\n", out.dump(1).c_str());
    return;
  }
  std::printf("base: %s\nnew:  %s\n\n", args.base.c_str(), args.next.c_str());
  std::vector<Table> shown = with_ranks(DiffTables(diff, args.top));
  for (Table& t : shown) {
    if (t.name() != "rank_timeline_diff" || t.size() <= args.top) continue;
    const size_t all = t.size();
    t.Truncate(args.top);
    t.AddNote(fmt::format("{} of {} ranks shown; --json, --csv and --html hold every rank",
                          args.top, all));
  }
  // Input types stay in --json, --csv and --html: the console has room for the dims.
  for (const auto& t : shown) {
    std::printf("%s\n", RenderConsoleTable(ForConsole(WithoutColumns(t, {"types"})), 70).c_str());
  }
}

struct MergeArgs {
  std::vector<std::string> traces;
  std::string output;
  bool json = false;
};

void RunMerge(const MergeArgs& args) {
  MergeSummary s =
      MergeTraces(RefusePipelineDumpFiles(ExpandTraceDirectories(args.traces)), args.output);
  for (const auto& w : s.warnings) std::fprintf(stderr, "sextant: warning: %s\n", w.c_str());
  if (args.json) {
    nlohmann::json out = {{"output", args.output},      {"files", s.files},
                          {"events", s.events_written}, {"processes", s.processes},
                          {"threads", s.threads},       {"warnings", s.warnings}};
    std::printf("%s\n", out.dump(1).c_str());
  } else {
    std::printf("merged %zu traces into %s: %zu events, %zu processes, %zu threads\n", s.files,
                args.output.c_str(), s.events_written, s.processes, s.threads);
  }
}

}  // namespace

void AddTraceCommands(CLI::App& app) {
  auto* trace = app.add_subcommand("trace", "Analyse PyTorch profiler (Kineto) traces");
  trace->require_subcommand(1);

  auto report_args = std::make_shared<ReportArgs>();
  auto* report = trace->add_subcommand(
      "report",
      "GPU timeline, kernels, ops, roofline, communication, idle time and launches per rank");
  report
      ->add_option("traces", report_args->traces,
                   "trace files (.json, .json.gz, .json.zst, .xplane.pb), one per rank, or "
                   "directories of them")
      ->required()
      ->check(CLI::ExistingPath);
  report->add_option("--gpu-arch", report_args->gpu_arch,
                     "GPU for roofline peaks (e.g. H100, MI300X)");
  report->add_option("--xlsx", report_args->xlsx, "write an Excel workbook, one sheet per table");
  report->add_option("--csv", report_args->csv_dir,
                     "write one CSV file per table into this directory");
  report->add_option("--html", report_args->html, "write a self-contained HTML report");
  report
      ->add_option("--format", report_args->format,
                   "names of the --csv files, --xlsx sheets and their columns: sextant (every "
                   "table) or tracelens (TraceLens's names, for the tables that match its rows)")
      ->check(CLI::IsMember({"sextant", "tracelens"}));
  report->add_flag("--json", report_args->json, "print the result as JSON");
  report
      ->add_option("--capture", report_args->captures,
                   "graph-capture trace(s) of CUDA/HIP-graph replays: replayed kernels take "
                   "the ops that recorded them (repeat for several); a capture_traces folder "
                   "or its execution_details.json stands for the traces it lists")
      ->allow_extra_args(false)
      ->check(CLI::ExistingPath);
  report->add_flag("--mpi", report_args->mpi,
                   "spread the files over MPI processes (run under mpirun)");
  report
      ->add_option("--threads", report_args->threads,
                   "threads for parallel analysis (default: all cores)")
      ->check(WholeNumberBetween(0, 4096));
  report
      ->add_option("--top", report_args->top,
                   "kernel and op rows per rank on the console (default 10); --json, --csv "
                   "and --xlsx hold every row")
      ->check(AtLeast(1));
  report->callback([report_args] { RunReport(*report_args); });

  auto diff_args = std::make_shared<DiffArgs>();
  auto* diff = trace->add_subcommand("diff", "Compare two traces op by op and kernel by kernel");
  diff->add_option("base", diff_args->base,
                   "baseline trace, or a directory of one run's rank traces")
      ->required()
      ->check(CLI::ExistingPath);
  // Not required for CLI11: RunDiff says what a lone trace is missing.
  diff->add_option("new", diff_args->next,
                   "trace (or directory of rank traces) to compare with the baseline (required)")
      ->check(CLI::ExistingPath);
  diff->add_option("--html", diff_args->html, "write a self-contained HTML report");
  diff->add_option("--csv", diff_args->csv_dir, "write one CSV file per table into this directory");
  diff->add_option("--top", diff_args->top,
                   "rows shown per console table (default 30); --json, --csv and --html hold "
                   "every row")
      ->check(AtLeast(1));
  diff->add_flag("--json", diff_args->json, "print the result as JSON");
  diff->callback([diff_args] { RunDiff(*diff_args); });

  auto merge_args = std::make_shared<MergeArgs>();
  auto* merge =
      trace->add_subcommand("merge", "Merge rank traces into one Perfetto-loadable trace");
  merge
      ->add_option("traces", merge_args->traces,
                   "trace files, one per rank, or directories of them")
      ->required()
      ->check(CLI::ExistingPath);
  merge->add_option("-o,--output", merge_args->output, "output file (.json, .json.gz or .json.zst)")
      ->required();
  merge->add_flag("--json", merge_args->json, "print a JSON summary");
  merge->callback([merge_args] { RunMerge(*merge_args); });
}

}  // namespace sextant::cli
