// The memory limit the zero-bubble heuristic schedules under. Qi et al. 2024 ("Zero Bubble
// Pipeline Parallelism", §3.1) schedule greedily under a memory limit M_limit; without one the
// heuristic runs every forward first and holds as many micro-batches as GPipe. Sextant gives it
// the number of micro-batches whose activations fit on every pipeline rank below the AT-RISK
// line of the memory model.
#pragma once

#include "job/job.h"

namespace sextant {

// Most micro-batches any rank may hold in flight (forward done, input gradient not yet) so that
// every rank's projected memory stays below kAtRiskFraction of HBM; at least 1, at most the
// micro-batches of the iteration. 0 (no limit) when the GPU's memory size is unknown.
int ZeroBubbleInFlightLimit(const Job& job);

}  // namespace sextant
