// Unit constants and human formatting. Bytes are int64_t everywhere; binary prefixes
// (GiB = 2^30) for memory, decimal (GB/s = 1e9 B/s) for bandwidth, as vendors quote them.
#pragma once

#include <cstdint>
#include <string>

namespace sextant {

inline constexpr int64_t kKiB = int64_t{1} << 10;
inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kGBps = 1e9;   // bytes/s
inline constexpr double kTBps = 1e12;  // bytes/s
inline constexpr double kUs = 1e-6;    // seconds

// ceil(a / b) for a >= 0: tiles, waves, per-rank shares. A non-positive b (no division, e.g.
// a GPU whose unit count is unknown) leaves a as it is.
inline constexpr int64_t CeilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

inline double ToGiB(int64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(kGiB);
}

// "1.50 GiB", "512.0 MiB", "12 B": the largest binary unit that keeps the value >= 1.
std::string FormatBytes(int64_t bytes);
// "1.23 B", "456.7 M": parameter counts with decimal suffixes (K, M, B, T).
std::string FormatCount(double count);

}  // namespace sextant
