#include "trace/trace_runner.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "trace/capture_index.h"
#include "trace/graph_capture.h"
#include "trace/kineto_reader.h"
#include "trace/xplane_reader.h"
#include "util/error.h"
#include "util/mpi_gather.h"
#include "util/thread_pool.h"

namespace sextant {

std::vector<TraceData> ReadTraceFile(const std::string& path) {
  std::vector<TraceData> out;
  // A file named as a protobuf goes to the XPlane reader even when its first byte is not
  // XSpace's: "not a valid XPlane profile" says more than "not JSON".
  const bool named_pb =
      path.ends_with(".pb") || path.ends_with(".pb.gz") || path.ends_with(".pb.zst");
  if (!named_pb) {
    // A large Kineto trace is read without holding its whole text.
    if (std::optional<TraceData> streamed = StreamKinetoTrace(path)) {
      out.push_back(std::move(*streamed));
      return out;
    }
  }
  InputText input = InputText::Load(path);
  if (LooksLikeXPlane(input.text()) || named_pb) {
    try {
      return ParseXPlane(input, path);
    } catch (const UserError& e) {
      // "Not a valid XPlane profile" of a file that only its name calls compressed.
      const std::string misnamed = MisnamedCompression(path, input);
      if (misnamed.empty()) throw;
      throw UserError(fmt::format("{} (the file is {})", e.what(), misnamed));
    }
  }
  out.push_back(ParseKinetoTrace(input, path, /*try_chunks=*/false));
  return out;
}

namespace {

// Analyses files[positions[k]] for each k. A trace without a distributedInfo rank is labelled
// by its position in `files`, so one process and many MPI processes label it alike.
std::vector<RankReport> AnalyzeAt(const std::vector<std::string>& files,
                                  const std::vector<size_t>& positions,
                                  const ReportOptions& options, unsigned threads) {
  std::vector<std::vector<RankReport>> per_file(positions.size());
  // Capture traces are read once and shared by every replay trace (read-only).
  std::vector<TraceData> captures(options.capture_traces.size());
  ParallelFor(
      captures.size(), [&](size_t k) { captures[k] = ReadKinetoTrace(options.capture_traces[k]); },
      threads);
  std::vector<const TraceData*> capture_ptrs;
  for (const TraceData& c : captures) capture_ptrs.push_back(&c);
  ParallelFor(
      positions.size(),
      [&](size_t k) {
        for (TraceData& trace : ReadTraceFile(files[positions[k]])) {
          if (!capture_ptrs.empty()) {
            // What the capture traces' reader noticed (cut short, unread events) belongs to
            // every report that uses them; and a trace without graph launches does not.
            for (size_t c = 0; c < captures.size(); ++c) {
              const std::string& path = options.capture_traces[c];
              for (const std::string& w : captures[c].warnings) {
                trace.warnings.push_back(w.starts_with(path)
                                             ? "capture trace " + w
                                             : fmt::format("capture trace {}: {}", path, w));
              }
            }
            if (AttributeGraphReplays(trace, capture_ptrs).launches == 0) {
              trace.warnings.push_back(
                  "--capture: this trace has no graph launches that replayed kernels; the "
                  "capture traces are not used");
            }
          }
          per_file[k].push_back(AnalyzeTrace(trace, options, static_cast<int64_t>(positions[k])));
          per_file[k].back().argument = static_cast<int64_t>(positions[k]);
        }
      },
      threads);
  std::vector<RankReport> reports;
  for (auto& file_reports : per_file) {
    for (RankReport& r : file_reports) reports.push_back(std::move(r));
  }
  return reports;
}

// Each host of a multi-host JAX run writes its own XPlane file, its GPUs numbered from 0: the
// GPUs of the files after the first are numbered on from the highest rank of those before, so
// every GPU has a rank of its own (its tables' rank columns too). One file alone keeps its
// numbers; next to PyTorch traces, whose ranks come from their distributedInfo, the XPlane GPUs
// are numbered on from the highest of those ranks, and each says so.
void NumberXPlaneHosts(std::vector<RankReport>& reports) {
  std::map<int64_t, std::vector<RankReport*>> by_file;  // command-line position -> its GPUs
  int64_t next = 0;
  bool other_traces = false;
  for (RankReport& r : reports) {
    if (r.xplane) {
      by_file[r.argument].push_back(&r);
    } else {
      other_traces = true;
      next = std::max(next, r.rank + 1);
    }
  }
  if (by_file.empty() || (by_file.size() < 2 && !other_traces)) return;
  for (auto& [argument, gpus] : by_file) {
    int64_t highest = next - 1;
    for (RankReport* r : gpus) {
      const int64_t rank = r->rank + next;
      for (Table& t : r->tables) {
        const int column = t.ColumnIndex("rank");
        if (column >= 0) t.SetColumn(static_cast<size_t>(column), Cell{rank});
      }
      if (other_traces) {
        r->warnings.push_back(fmt::format(
            "GPU {} of this XPlane profile is reported as rank {}, after the ranks of the "
            "PyTorch traces given with it",
            r->rank, rank));
      }
      r->rank = rank;
      highest = std::max(highest, rank);
    }
    next = highest + 1;
  }
}

}  // namespace

// A directory stands for the trace files directly inside it (a trace_dir of rank files, as
// HTA and TensorBoard's plugin take it), in name order.
std::vector<std::string> ExpandTraceDirectories(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    std::filesystem::directory_iterator entries(path, ec);
    if (ec) {
      // Not "no trace files": what is in it is unknown (no read permission, say).
      ThrowUserError(SourceLocation{path}, "",
                     fmt::format("a directory that cannot be read ({})", ec.message()));
    }
    for (const auto& entry : entries) {
      const std::string name = entry.path().filename().string();
      // A capture folder's index lists traces; it is not one.
      if (!entry.is_regular_file(ec) || name.starts_with(".") || name == kCaptureIndexName)
        continue;
      if (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".json.zst") ||
          name.ends_with(".xplane.pb")) {
        found.push_back(entry.path().string());
      }
    }
    if (found.empty()) {
      ThrowUserError(SourceLocation{path}, "",
                     "a directory with no trace files directly inside (.json, .json.gz, "
                     ".json.zst, .xplane.pb)");
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

TraceReportInputs ResolveTraceReportInputs(const std::vector<std::string>& traces,
                                           const std::vector<std::string>& captures) {
  TraceReportInputs inputs;
  inputs.traces = ExpandTraceDirectories(traces);
  for (const std::string& c : captures) {
    for (std::string& file : CaptureTraceFiles(c)) inputs.captures.push_back(std::move(file));
  }
  return inputs;
}

TraceReport BuildTraceReport(
    const TraceReportInputs& inputs, ReportOptions options, unsigned threads,
    const std::function<void(std::vector<RankReport>&)>& read_rank_tables) {
  options.capture_traces = inputs.captures;
  return CombineReports(AnalyzeTraceFiles(inputs.traces, options, threads),
                        /*keep_rank_tables=*/false, read_rank_tables);
}

std::vector<RankReport> AnalyzeTraceFiles(const std::vector<std::string>& files,
                                          const ReportOptions& options, unsigned threads) {
  std::vector<size_t> all(files.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<RankReport> reports = AnalyzeAt(files, all, options, threads);
  NumberXPlaneHosts(reports);
  return reports;
}

std::vector<RankReport> AnalyzeTraceFilesMpi(const std::vector<std::string>& files,
                                             const ReportOptions& options, unsigned threads,
                                             bool* is_root) {
  MpiSession mpi;
  *is_root = mpi.IsRoot();
  std::vector<size_t> mine;
  for (size_t i = static_cast<size_t>(mpi.rank()); i < files.size();
       i += static_cast<size_t>(mpi.size())) {
    mine.push_back(i);
  }
  // A failure is reported to process 0 instead of aborting the other processes.
  nlohmann::json payload = nlohmann::json::object();
  try {
    payload["reports"] = nlohmann::json::array();
    for (const RankReport& r : AnalyzeAt(files, mine, options, threads))
      payload["reports"].push_back(r.Serialize());
  } catch (const std::exception& e) {
    payload["error"] = e.what();
  }
  std::vector<std::string> parts = mpi.GatherToRoot(payload.dump());
  std::vector<RankReport> reports;
  for (size_t p = 0; p < parts.size(); ++p) {
    auto part = nlohmann::json::parse(parts[p]);
    if (part.contains("error")) {
      throw UserError(fmt::format("MPI process {}: {}", p, part["error"].get<std::string>()));
    }
    for (const auto& r : part["reports"]) reports.push_back(RankReport::Deserialize(r));
  }
  NumberXPlaneHosts(reports);
  return reports;
}

}  // namespace sextant
