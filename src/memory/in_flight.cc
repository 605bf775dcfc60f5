#include "memory/in_flight.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

std::vector<double> AnalyticInFlight(const std::string& schedule, int pp, int vpp,
                                     int64_t micro_batches, int rank) {
  const double m = static_cast<double>(micro_batches);
  std::vector<double> per_chunk(std::max(1, vpp), 0.0);
  const std::string& s = schedule;
  if (s == "1f1b" || s == "auto" || s == "zerobubble" || s == "zb-h1" ||
      s == "zerobubble-heuristic") {
    if (vpp > 1 && (s == "1f1b" || s == "auto")) {
      return AnalyticInFlight("interleaved", pp, vpp, micro_batches, rank);
    }
    per_chunk[0] = std::min<double>(pp - rank, m);
    if (vpp > 1) {
      for (auto& c : per_chunk) c = std::min<double>(pp - rank, m);
    }
    return per_chunk;
  }
  if (s == "interleaved") {
    // Megatron's interleaved warm-up: forwards run chunk 0 for pp micro-batches, then chunk 1,
    // ...; one more forward is in flight in the steady state.
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
  if (s == "gpipe") {
    for (auto& c : per_chunk) c = m;
    return per_chunk;
  }
  if (s == "zb-h2") {
    for (auto& c : per_chunk) c = std::min<double>(2.0 * (pp - rank) - 1.0, m);
    return per_chunk;
  }
  if (s == "zbv-formatted" || s == "zbv-greedy-half" || s == "zbv-greedy-min" || s == "dualpipev") {
    if (vpp != 2) {
      ThrowUserError(
          fmt::format("schedule {} needs 2 virtual stages per rank (VPP=2), got {}", s, vpp));
    }
    double each = std::min<double>(pp, m);
    if (s == "zbv-greedy-half") each = std::min<double>(std::ceil(pp / 2.0), m);
    if (s == "zbv-greedy-min") each = std::min<double>(std::ceil(pp / 3.0), m);
    if (s == "dualpipev") each = std::min<double>((pp + 1) / 2.0, m);
    per_chunk[0] = per_chunk[1] = each;
    return per_chunk;
  }
  ThrowUserError(fmt::format("unknown pipeline schedule '{}'", s));
}

}  // namespace sextant
