#include "projection/zero_bubble_memory_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "memory/memory_model.h"

namespace sextant {

int ZeroBubbleInFlightLimit(const Job& job) {
  const double capacity = static_cast<double>(job.cluster.gpu.hbm_bytes);
  const int64_t m = job.training.NumMicroBatches(job.parallel.dp);
  if (capacity <= 0 || m < 1) return 0;
  // Memory is affine in the in-flight count: project one and two micro-batches in flight on
  // every rank; the difference is one micro-batch's activations, the rest is fixed state.
  const size_t pp = static_cast<size_t>(std::max(1, job.parallel.pp));
  const MemoryReport one = ProjectMemory(job, InFlightTable(pp, std::vector<double>{1.0}));
  const MemoryReport two = ProjectMemory(job, InFlightTable(pp, std::vector<double>{2.0}));
  int64_t limit = m;
  for (size_t r = 0; r < one.stages.size() && r < two.stages.size(); ++r) {
    const double per_micro_batch =
        static_cast<double>(two.stages[r].total_bytes - one.stages[r].total_bytes);
    if (per_micro_batch <= 0) continue;
    const double fixed = static_cast<double>(one.stages[r].total_bytes) - per_micro_batch;
    const double fits = std::floor((kAtRiskFraction * capacity - fixed) / per_micro_batch);
    limit = std::min<int64_t>(limit, static_cast<int64_t>(std::max(1.0, fits)));
  }
  return static_cast<int>(std::clamp<int64_t>(limit, 1, m));
}

}  // namespace sextant
