#include "trace/gpu_peaks.h"

#include <algorithm>
#include <cctype>

namespace sextant {
namespace {

struct Entry {
  std::vector<std::string_view> patterns;  // lower-case substrings, first match wins
  GpuPeak peak;
};

// Sources: NVIDIA A100 datasheet (2021), H100 / H200 product pages (SXM), DGX B200 datasheet
// (per GPU), V100 datasheet; AMD Instinct MI300X / MI325X / MI355X / MI250X / MI210 data
// sheets. TFLOP/s are dense (without structured sparsity).
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      {{"b200"}, {"B200", 2250, 4500, 80, 80, 8.0}},
      {{"h200"}, {"H200 SXM", 989.5, 1979, 67, 67, 4.8}},
      {{"h100 pcie"}, {"H100 PCIe", 756, 1513, 51, 51, 2.0}},
      {{"h100"}, {"H100 SXM", 989.5, 1979, 67, 67, 3.35}},
      {{"a100-sxm4-80gb", "a100 80gb", "a100-80gb"}, {"A100 80GB", 312, 0, 19.5, 19.5, 2.039}},
      {{"a100"}, {"A100 40GB", 312, 0, 19.5, 19.5, 1.555}},
      {{"v100"}, {"V100 SXM2", 125, 0, 15.7, 15.7, 0.9}},
      {{"mi355", "gfx950"}, {"MI355X", 2516.6, 5033.2, 157.3, 157.3, 8.0}},
      {{"mi325"}, {"MI325X", 1307.4, 2614.9, 163.4, 163.4, 6.0}},
      {{"mi300x", "gfx942", "mi300"}, {"MI300X", 1307.4, 2614.9, 163.4, 163.4, 5.3}},
      {{"mi250", "gfx90a"}, {"MI250X", 383, 0, 95.7, 47.9, 3.2768}},
      {{"mi210"}, {"MI210", 181, 0, 45.3, 22.6, 1.6384}},
  };
  return table;
}

}  // namespace

std::optional<GpuPeak> FindGpuPeak(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.empty()) return std::nullopt;
  for (const Entry& e : Table()) {
    for (std::string_view p : e.patterns) {
      if (lower.find(p) != std::string::npos) return e.peak;
    }
  }
  return std::nullopt;
}

const std::vector<GpuPeak>& KnownGpuPeaks() {
  static const std::vector<GpuPeak> peaks = [] {
    std::vector<GpuPeak> out;
    for (const Entry& e : Table()) out.push_back(e.peak);
    return out;
  }();
  return peaks;
}

}  // namespace sextant
