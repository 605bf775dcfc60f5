// How many micro-batches' activations each pipeline rank holds at its peak, per model chunk,
// for schedules whose peak has a closed form. The projection layer replaces these with counts
// from the event simulator (pipeline/) when it runs one.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/schedule_kind.h"

namespace sextant {

// Result indexed by chunk (0 .. vpp-1). Throws UserError for a V-shape schedule without VPP 2.
//  1f1b / zerobubble (ZB-H1): min(pp - rank, m)                       (Narayanan et al. 2021)
//  interleaved: min(m·v, 2·(pp - rank - 1) + (v - 1)·pp + 1) chunk-micro-batches, filled
//               chunk by chunk in groups of pp (Megatron's warm-up count); rank 0 totals
//               L·(1 + (p-1)/(p·v)) layers, Megatron's interleaving penalty
//  gpipe: m;  ZB-H2: min(2·(pp - rank) - 1, m)  (Qi et al. 2023, "Zero Bubble Pipeline
//  Parallelism") zbv-formatted / zbv-greedy-half / zbv-greedy-min: pp, pp/2, pp/3 per chunk (ZB-V
//  paper) dualpipev: (pp + 1) chunk-micro-batches per rank (DeepSeek DualPipe README)
std::vector<double> AnalyticInFlight(ScheduleKind schedule, int pp, int vpp, int64_t micro_batches,
                                     int rank);

}  // namespace sextant
