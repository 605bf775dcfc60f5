// Work spread over MPI processes started by `mpirun -np K sextant ...`: each process learns
// its rank, does its share, and process 0 gathers one byte string from every process.
#pragma once

#include <string>
#include <vector>

namespace sextant {

class MpiSession {
 public:
  // Initialises MPI (once per process). Throws UserError when this build has no MPI.
  MpiSession();
  ~MpiSession();  // finalises MPI
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool IsRoot() const { return rank_ == 0; }

  // Collective: every process passes its part; process 0 receives all parts in rank order,
  // the others an empty list.
  std::vector<std::string> GatherToRoot(const std::string& part) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace sextant
