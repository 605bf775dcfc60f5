#include "parallel/parallel_plan.h"

#include <algorithm>

namespace sextant {

int ParallelPlan::ExpertDataParallel() const {
  const int denom = etp * ep * pp;
  return denom > 0 ? std::max(1, WorldSize() / denom) : 1;
}

}  // namespace sextant
