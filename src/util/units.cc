#include "util/units.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace sextant {

std::string FormatBytes(int64_t bytes) {
  const double abs = std::fabs(static_cast<double>(bytes));
  if (abs >= 1024.0 * static_cast<double>(kGiB))
    return fmt::format("{:.2f} TiB", bytes / (1024.0 * static_cast<double>(kGiB)));
  if (abs >= static_cast<double>(kGiB)) return fmt::format("{:.2f} GiB", bytes / double(kGiB));
  if (abs >= static_cast<double>(kMiB)) return fmt::format("{:.1f} MiB", bytes / double(kMiB));
  if (abs >= static_cast<double>(kKiB)) return fmt::format("{:.1f} KiB", bytes / double(kKiB));
  return fmt::format("{} B", bytes);
}

std::string FormatCount(double count) {
  const double abs = std::fabs(count);
  if (abs >= 1e12) return fmt::format("{:.2f} T", count / 1e12);
  if (abs >= 1e9) return fmt::format("{:.2f} B", count / 1e9);
  if (abs >= 1e6) return fmt::format("{:.1f} M", count / 1e6);
  if (abs >= 1e3) return fmt::format("{:.1f} K", count / 1e3);
  return fmt::format("{:.0f}", count);
}

}  // namespace sextant
