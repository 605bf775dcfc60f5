// Per-iteration, per-rank statistics of a Primus pipeline dump, with the definitions of
// Primus's pp_vis viewer so the numbers agree with its console table:
//   iteration time = max over ranks of `total`;
//   F, B, W        = sum of (end - start) of the rank's fwd / bwd / wgrad intervals;
//   bubble ratio   = (iteration time - (F + B + W)) / iteration time.
// The denominator is the slowest rank's time, so a rank's bubble also holds P2P waits and any
// time outside forward/backward calls.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pp_dump.h"

namespace sextant {

struct PrimusDumpRankStats {
  int pp_rank = 0;
  double forward_ms = 0;
  double backward_ms = 0;
  double wgrad_ms = 0;
  double total_ms = 0;  // this rank's own `total`
  double bubble_ratio = 0;
  double memory_gib = 0;
};

struct PrimusDumpIterationStats {
  std::string key;
  double iteration_time_ms = 0;
  double max_memory_gib = 0;
  std::vector<PrimusDumpRankStats> ranks;
};

// One entry per iteration key of rank 0, in its order. A key that some other rank lacks is a
// UserError (the viewer would fail on it too).
std::vector<PrimusDumpIterationStats> AnalysePrimusDump(const PrimusDump& dump);

}  // namespace sextant
