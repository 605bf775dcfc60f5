#include "trace/trace_runner.h"

#include <fmt/format.h>

#include "trace/kineto_reader.h"
#include "util/error.h"
#include "util/thread_pool.h"

#ifdef SEXTANT_HAVE_MPI
#include <mpi.h>
#endif

namespace sextant {

std::vector<RankReport> AnalyzeTraceFiles(const std::vector<std::string>& files,
                                          const ReportOptions& options, unsigned threads) {
  std::vector<RankReport> reports(files.size());
  ParallelFor(
      files.size(),
      [&](size_t i) {
        TraceData trace = ReadKinetoTrace(files[i]);
        reports[i] = AnalyzeTrace(trace, options, static_cast<int64_t>(i));
      },
      threads);
  return reports;
}

bool MpiAvailable() {
#ifdef SEXTANT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::vector<RankReport> AnalyzeTraceFilesMpi(const std::vector<std::string>& files,
                                             const ReportOptions& options, bool* is_root) {
#ifdef SEXTANT_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  *is_root = rank == 0;
  // Analyse this process's share; a failure is reported to rank 0 instead of aborting.
  std::vector<std::string> mine;
  std::vector<size_t> positions;
  for (size_t i = static_cast<size_t>(rank); i < files.size(); i += static_cast<size_t>(size)) {
    mine.push_back(files[i]);
    positions.push_back(i);
  }
  nlohmann::json payload = nlohmann::json::object();
  try {
    std::vector<RankReport> local = AnalyzeTraceFiles(mine, options);
    payload["reports"] = nlohmann::json::array();
    for (size_t k = 0; k < local.size(); ++k) {
      if (local[k].rank == static_cast<int64_t>(k))
        local[k].rank = static_cast<int64_t>(positions[k]);
      payload["reports"].push_back(local[k].Serialize());
    }
  } catch (const std::exception& e) {
    payload["error"] = e.what();
  }
  std::string bytes = payload.dump();
  int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<size_t>(size), 0);
  std::string gathered;
  if (rank == 0) {
    int total = 0;
    for (int p = 0; p < size; ++p) {
      offsets[p] = total;
      total += lengths[p];
    }
    gathered.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(bytes.data(), length, MPI_CHAR, gathered.data(), lengths.data(), offsets.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  std::vector<RankReport> reports;
  if (rank != 0) return reports;
  for (int p = 0; p < size; ++p) {
    auto part = nlohmann::json::parse(
        gathered.substr(static_cast<size_t>(offsets[p]), static_cast<size_t>(lengths[p])));
    if (part.contains("error")) {
      throw UserError(fmt::format("MPI process {}: {}", p, part["error"].get<std::string>()));
    }
    for (const auto& r : part["reports"]) reports.push_back(RankReport::Deserialize(r));
  }
  return reports;
#else
  (void)files;
  (void)options;
  *is_root = true;
  ThrowUserError(
      "--mpi: this build of sextant has no MPI support (OpenMPI was not found when it was built)");
#endif
}

}  // namespace sextant
