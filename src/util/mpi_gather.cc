#include "util/mpi_gather.h"

#include "util/error.h"

#ifdef SEXTANT_HAVE_MPI
#include <mpi.h>
#endif

namespace sextant {

#ifdef SEXTANT_HAVE_MPI

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::vector<std::string> MpiSession::GatherToRoot(const std::string& part) const {
  // Lengths first, so process 0 can size one buffer for every part.
  int length = static_cast<int>(part.size());
  std::vector<int> lengths(static_cast<size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<size_t>(size_), 0);
  std::string gathered;
  if (rank_ == 0) {
    int total = 0;
    for (int p = 0; p < size_; ++p) {
      offsets[static_cast<size_t>(p)] = total;
      total += lengths[static_cast<size_t>(p)];
    }
    gathered.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(part.data(), length, MPI_CHAR, gathered.data(), lengths.data(), offsets.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> parts;
  if (rank_ != 0) return parts;
  for (int p = 0; p < size_; ++p) {
    parts.push_back(gathered.substr(static_cast<size_t>(offsets[static_cast<size_t>(p)]),
                                    static_cast<size_t>(lengths[static_cast<size_t>(p)])));
  }
  return parts;
}

#else

MpiSession::MpiSession() {
  ThrowUserError(
      "--mpi: this build of sextant has no MPI support (OpenMPI was not found when it was built)");
}

MpiSession::~MpiSession() = default;

std::vector<std::string> MpiSession::GatherToRoot(const std::string& part) const { return {part}; }

#endif

}  // namespace sextant
