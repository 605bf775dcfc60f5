#include "memory/in_flight.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

std::vector<double> AnalyticInFlight(ScheduleKind schedule, int pp, int vpp, int64_t micro_batches,
                                     int rank) {
  const double m = static_cast<double>(micro_batches);
  std::vector<double> per_chunk(std::max(1, vpp), 0.0);
  schedule = ForVirtualStages(schedule, vpp);
  switch (schedule) {
    case ScheduleKind::k1F1B:
    case ScheduleKind::kZeroBubbleH1:
    case ScheduleKind::kZeroBubbleHeuristic:
      for (auto& c : per_chunk) c = std::min<double>(pp - rank, m);
      return per_chunk;
    case ScheduleKind::kInterleaved1F1B: {
      // Megatron's interleaved warm-up: forwards run chunk 0 for pp micro-batches, then chunk
      // 1, ...; one more forward is in flight in the steady state.
      double total = std::min<double>(m * vpp, 2.0 * (pp - rank - 1) + (vpp - 1.0) * pp + 1.0);
      for (int c = 0; c < vpp && total > 0; ++c) {
        const double take = std::min<double>({total, static_cast<double>(pp), m});
        per_chunk[c] = take;
        total -= take;
      }
      // Anything left (small pp) spreads over the chunks again.
      for (int c = 0; total > 0; c = (c + 1) % vpp) {
        const double take = std::min(total, 1.0);
        per_chunk[c] += take;
        total -= take;
      }
      return per_chunk;
    }
    case ScheduleKind::kGPipe:
      for (auto& c : per_chunk) c = m;
      return per_chunk;
    case ScheduleKind::kZeroBubbleH2:
      for (auto& c : per_chunk) c = std::min<double>(2.0 * (pp - rank) - 1.0, m);
      return per_chunk;
    case ScheduleKind::kZbvFormatted:
    case ScheduleKind::kZbvGreedyHalf:
    case ScheduleKind::kZbvGreedyMin:
    case ScheduleKind::kDualPipeV: {
      if (vpp != 2) {
        ThrowUserError(fmt::format("schedule {} needs 2 virtual stages per rank (VPP=2), got {}",
                                   ScheduleKindName(schedule), vpp));
      }
      double each = std::min<double>(pp, m);
      if (schedule == ScheduleKind::kZbvGreedyHalf) each = std::min<double>(std::ceil(pp / 2.0), m);
      if (schedule == ScheduleKind::kZbvGreedyMin) each = std::min<double>(std::ceil(pp / 3.0), m);
      if (schedule == ScheduleKind::kDualPipeV) each = std::min<double>((pp + 1) / 2.0, m);
      per_chunk[0] = per_chunk[1] = each;
      return per_chunk;
    }
  }
  return per_chunk;
}

}  // namespace sextant
