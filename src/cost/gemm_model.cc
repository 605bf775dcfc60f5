#include "cost/gemm_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/csv_reader.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/json_input.h"
#include "util/units.h"

namespace sextant {

namespace {

bool IsLowPrecision(DType d) { return d == DType::kFP8 || d == DType::kMXFP8 || d == DType::kFP4; }

// Split-K factors tried when the output grid is too small to fill the GPU; each split keeps
// at least kMinSplitDepth of K so the main loop still amortises its prologue.
constexpr int kSplitFactors[] = {1, 2, 4, 8, 16};
constexpr int64_t kMinSplitDepth = 256;
// K depth of one main-loop step of a macro tile (MT_K in Origami's candidate list).
constexpr double kTileDepth = 64;

struct Problem {
  int64_t m;
  int64_t k;
  int64_t count;  // identical problems (batch)
};

// The roofline of one launch over `problems` (all with the same N). Tiles of different depth
// share the waves; a wave's time is the mean tile work, so uniform problems reduce to
// waves x one tile's work.
GemmEstimate EvaluateLaunch(const GpuSpec& gpu, const EfficiencyTable& table,
                            const std::vector<Problem>& problems, int64_t n, DType dtype,
                            GemmPass pass) {
  if (gpu.compute_units <= 0) {
    ThrowUserError(
        fmt::format("GPU {}: compute_units must be positive for the GEMM model", gpu.name));
  }
  if (gpu.hbm_bandwidth <= 0) {
    ThrowUserError(
        fmt::format("GPU {}: hbm_bandwidth must be positive for the GEMM model", gpu.name));
  }
  const double peak = gpu.PeakTflops(dtype) * 1e12;
  const double per_cu_peak = peak / gpu.compute_units;
  const double in_bytes = DTypeBytes(dtype);
  const double out_bytes = IsLowPrecision(dtype) ? 2.0 : in_bytes;
  const int64_t cache = std::max(gpu.l2_bytes, gpu.last_level_cache_bytes);

  double flops = 0;
  int64_t max_k = 0;
  for (const Problem& p : problems) {
    flops += 2.0 * p.m * n * p.k * p.count;
    if (p.m > 0) max_k = std::max(max_k, p.k);
  }

  GemmEstimate best;
  best.flops = flops;
  if (flops <= 0) return best;  // nothing to do: no kernel time
  const double efficiency = pass == GemmPass::kGradient ? table.GradientGemmFraction(dtype, flops)
                                                        : table.GemmFraction(dtype, flops);
  double best_seconds = std::numeric_limits<double>::infinity();
  for (const MacroTile& tile : CandidateMacroTiles()) {
    for (int split : kSplitFactors) {
      if (split > 1 && max_k / split < kMinSplitDepth) break;
      int64_t tiles = 0;
      double tile_depth = 0;  // summed K depth over all tiles
      int64_t deepest = 0;
      for (const Problem& p : problems) {
        const int64_t t = CeilDiv(p.m, tile.m) * CeilDiv(n, tile.n) * p.count * split;
        tiles += t;
        tile_depth += static_cast<double>(t) * CeilDiv(p.k, split);
        if (t > 0) deepest = std::max(deepest, CeilDiv(p.k, split));
      }
      if (tiles == 0) continue;
      const int64_t waves = CeilDiv(tiles, gpu.compute_units);
      const double depth = tile_depth / tiles;
      // Tiles of unequal depth balance across waves, but no launch is shorter than its
      // deepest tile.
      const double loop_depth = std::max(waves * depth, static_cast<double>(deepest));
      const double mainloop = 2.0 * tile.m * tile.n * loop_depth / per_cu_peak;
      // Prologue and epilogue of each tile (Origami's L_prologue / L_epilogue terms): load
      // the first K slice of A and B and store the C tile, at one CU's share of HBM.
      const double overhead =
          (tile.m * tile.n * out_bytes + (tile.m + tile.n) * kTileDepth * in_bytes) /
          (gpu.hbm_bandwidth / gpu.compute_units);
      // Persistent warp-specialised kernels (CUTLASS 3 / cuBLAS on Hopper and later) run one
      // tile's epilogue under the next tile's main loop: the overhead is paid once, not per
      // wave.
      const double exposed_overhead = table.overlapped_epilogue() ? overhead : waves * overhead;
      const double compute = (mainloop + exposed_overhead) / efficiency;
      double bytes = 0;
      const int64_t concurrent = std::min<int64_t>(tiles, gpu.compute_units);
      for (const Problem& p : problems) {
        if (p.m <= 0 || p.k <= 0) continue;
        const int64_t per_problem =
            std::max<int64_t>(1, concurrent / std::max<int64_t>(1, p.count));
        bytes +=
            p.count * GemmHbmBytes({p.m, n, p.k, 1}, tile, per_problem, in_bytes, out_bytes, cache);
        // Split-K partial sums in fp32: written by every split, read back by the reduction.
        if (split > 1) bytes += p.count * 2.0 * split * p.m * n * 4.0;
      }
      const double memory = bytes / (gpu.hbm_bandwidth * table.HbmFraction(bytes));
      const double seconds = std::max({compute, memory, table.min_kernel_seconds()});
      if (seconds < best_seconds) {
        best_seconds = seconds;
        best.seconds = seconds;
        best.hbm_bytes = bytes;
        best.compute_seconds = compute;
        best.memory_seconds = memory;
        best.tile = tile;
        best.tiles = tiles;
        best.waves = waves;
        best.wave_efficiency = flops / (waves * gpu.compute_units * 2.0 * tile.m * tile.n * depth);
        best.efficiency = efficiency;
        best.memory_bound = memory > compute;
        best.launch_bound = table.min_kernel_seconds() > std::max(compute, memory);
      }
    }
  }
  return best;
}

}  // namespace

const std::vector<MacroTile>& CandidateMacroTiles() {
  // Origami's candidate list for hipBLASLt (research/primus-projection.md §3.4) minus the
  // K depths, which do not change the roofline here.
  static const std::vector<MacroTile> kTiles = {{256, 256}, {256, 128}, {128, 256}, {128, 128},
                                                {128, 64},  {64, 128},  {64, 64}};
  return kTiles;
}

double GemmHbmBytes(const GemmShape& shape, MacroTile tile, int64_t concurrent, double in_bytes,
                    double out_bytes, int64_t l2_bytes) {
  const double a = static_cast<double>(shape.m) * shape.k * in_bytes;
  const double b = static_cast<double>(shape.k) * shape.n * in_bytes;
  const double c = static_cast<double>(shape.m) * shape.n * out_bytes;
  if (a + b <= static_cast<double>(l2_bytes)) return (a + b + c) * shape.batch;
  // A wave of W concurrent tiles covers a near-square block of r x c output tiles; it reads
  // r tile-rows of A and c tile-columns of B once. A is therefore read once per block column
  // and B once per block row.
  const int64_t tiles_m = CeilDiv(shape.m, tile.m);
  const int64_t tiles_n = CeilDiv(shape.n, tile.n);
  const int64_t w = std::clamp<int64_t>(concurrent, 1, tiles_m * tiles_n);
  const int64_t rows = std::min<int64_t>(
      tiles_m, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(w)))));
  const int64_t cols = std::min<int64_t>(tiles_n, CeilDiv(w, rows));
  const double a_reads = static_cast<double>(CeilDiv(tiles_n, cols));
  const double b_reads = static_cast<double>(CeilDiv(tiles_m, rows));
  return (a * a_reads + b * b_reads + c) * shape.batch;
}

GemmModel::GemmModel(GpuSpec gpu, EfficiencyTable table)
    : gpu_(std::move(gpu)), table_(std::move(table)) {}

GemmEstimate GemmModel::Estimate(const GemmShape& shape, DType dtype, GemmPass pass) const {
  if (shape.m < 0 || shape.n < 0 || shape.k < 0 || shape.batch < 0) {
    ThrowUserError(fmt::format("GEMM shape {}x{}x{} (batch {}) has a negative dimension", shape.m,
                               shape.n, shape.k, shape.batch));
  }
  return EvaluateLaunch(gpu_, table_, {{shape.m, shape.k, shape.batch}}, shape.n, dtype, pass);
}

GemmEstimate GemmModel::EstimateGrouped(const std::vector<int64_t>& group_m, int64_t n, int64_t k,
                                        DType dtype, GemmPass pass) const {
  // Groups of equal size are one batched problem (balanced routing yields at most two sizes).
  std::map<int64_t, int64_t> count_by_m;
  for (int64_t m : group_m) {
    if (m < 0) ThrowUserError("grouped GEMM: negative group size");
    ++count_by_m[m];
  }
  std::vector<Problem> problems;
  for (const auto& [m, count] : count_by_m) problems.push_back({m, k, count});
  return EvaluateLaunch(gpu_, table_, problems, n, dtype, pass);
}

GemmEstimate GemmModel::EstimateGroupedRaggedK(int64_t m, int64_t n,
                                               const std::vector<int64_t>& group_k, DType dtype,
                                               GemmPass pass) const {
  std::map<int64_t, int64_t> count_by_k;
  for (int64_t k : group_k) {
    if (k < 0) ThrowUserError("grouped GEMM: negative group depth");
    ++count_by_k[k];
  }
  std::vector<Problem> problems;
  for (const auto& [k, count] : count_by_k) problems.push_back({k > 0 ? m : 0, k, count});
  return EvaluateLaunch(gpu_, table_, problems, n, dtype, pass);
}

namespace {

// Runs `estimate` on consecutive rounds of `streams` groups and adds the rounds up.
template <typename RoundEstimate>
GemmEstimate SumOfRounds(const std::vector<int64_t>& groups, int streams, RoundEstimate estimate) {
  if (streams < 1) ThrowUserError("GEMM loop: at least one stream");
  GemmEstimate total;
  double weighted_wave_efficiency = 0;  // each round's, weighted by its time
  for (size_t begin = 0; begin < groups.size(); begin += static_cast<size_t>(streams)) {
    const size_t end = std::min(groups.size(), begin + static_cast<size_t>(streams));
    const std::vector<int64_t> round(groups.begin() + static_cast<std::ptrdiff_t>(begin),
                                     groups.begin() + static_cast<std::ptrdiff_t>(end));
    const GemmEstimate e = estimate(round);
    total.seconds += e.seconds;
    total.flops += e.flops;
    total.hbm_bytes += e.hbm_bytes;
    total.compute_seconds += e.compute_seconds;
    total.memory_seconds += e.memory_seconds;
    total.tiles += e.tiles;
    total.waves += e.waves;
    total.tile = e.tile;
    total.efficiency = e.efficiency;
    total.memory_bound = total.memory_bound || e.memory_bound;
    total.launch_bound = total.launch_bound || e.launch_bound;
    weighted_wave_efficiency += e.wave_efficiency * e.seconds;
  }
  if (total.seconds > 0) total.wave_efficiency = weighted_wave_efficiency / total.seconds;
  return total;
}

}  // namespace

GemmEstimate GemmModel::EstimateGroupLoop(const std::vector<int64_t>& group_m, int64_t n, int64_t k,
                                          DType dtype, GemmPass pass, int streams) const {
  return SumOfRounds(group_m, streams, [&](const std::vector<int64_t>& round) {
    return EstimateGrouped(round, n, k, dtype, pass);
  });
}

GemmEstimate GemmModel::EstimateGroupLoopRaggedK(int64_t m, int64_t n,
                                                 const std::vector<int64_t>& group_k, DType dtype,
                                                 GemmPass pass, int streams) const {
  return SumOfRounds(group_k, streams, [&](const std::vector<int64_t>& round) {
    return EstimateGroupedRaggedK(m, n, round, dtype, pass);
  });
}

// ---- Calibration -------------------------------------------------------------------------

namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    const auto b = cell.find_first_not_of(" \t\r");
    const auto e = cell.find_last_not_of(" \t\r");
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

double ParseNumber(const std::string& text, const SourceLocation& where, const std::string& key) {
  const std::optional<double> v = ParseNumberCell(text);
  if (!v) ThrowUserError(where, key, fmt::format("'{}' is not a number", ShortText(text)));
  return *v;
}

int64_t ParseDim(double v, const SourceLocation& where, const std::string& key) {
  if (v < 1 || v > 1e9 || v != std::floor(v)) {
    ThrowUserError(where, key, fmt::format("{} is not a positive integer dimension", v));
  }
  return static_cast<int64_t>(v);
}

DType ParseDTypeField(const std::string& text, const SourceLocation& where) {
  auto d = ParseDType(text);
  if (!d) ThrowUserError(where, "dtype", fmt::format("unknown dtype '{}'", ShortText(text)));
  return *d;
}

double ParseTimeUs(double us, const SourceLocation& where) {
  if (!(us > 0) || us > 1e9) ThrowUserError(where, "time_us", "must be a positive time in µs");
  return us * 1e-6;
}

// Counts the rows and distinct shapes of a GEMM timing table and refuses the one past
// kMaxGemmTimingRows or kMaxGemmTimingShapes: the calibration fit prices every distinct shape,
// and weighs every row, at each of its few hundred steps.
class DistinctShapes {
 public:
  void Add(const GemmMeasurement& g, const SourceLocation& where, std::string_view key) {
    if (++rows_ > kMaxGemmTimingRows) {
      ThrowUserError(where, key,
                     fmt::format("more than {} GEMM timings: the calibration fit weighs each one "
                                 "at every step; give a sample",
                                 kMaxGemmTimingRows));
    }
    shapes_.insert({g.shape.m, g.shape.n, g.shape.k, g.shape.batch, static_cast<int64_t>(g.dtype)});
    if (shapes_.size() > kMaxGemmTimingShapes) {
      ThrowUserError(where, key,
                     fmt::format("more than {} distinct GEMM shapes (m, n, k, batch, dtype): the "
                                 "calibration fit prices each one at every step; give a sample",
                                 kMaxGemmTimingShapes));
    }
  }

 private:
  size_t rows_ = 0;
  std::set<std::array<int64_t, 5>> shapes_;
};

}  // namespace

std::vector<GemmMeasurement> ParseGemmMeasurementsCsv(const std::string& text_with_bom,
                                                      const std::string& file) {
  // A UTF-8 byte-order mark, as Excel writes CSV: not part of the first column's name.
  const std::string_view text = std::string_view(text_with_bom).starts_with("\xEF\xBB\xBF")
                                    ? std::string_view(text_with_bom).substr(3)
                                    : std::string_view(text_with_bom);
  std::istringstream in{std::string(text)};
  DistinctShapes shapes;
  std::string line;
  int64_t line_no = 0;
  std::map<std::string, size_t> column;
  std::vector<GemmMeasurement> out;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    const std::vector<std::string> cells = SplitCsvLine(line);
    const SourceLocation where{file, line_no, -1, -1};
    if (column.empty()) {
      for (size_t i = 0; i < cells.size(); ++i) column[cells[i]] = i;
      for (const char* key : {"m", "n", "k", "dtype", "time_us"}) {
        if (!column.count(key)) ThrowUserError(where, key, "missing column in the CSV header");
      }
      continue;
    }
    auto cell = [&](const std::string& key) -> std::string {
      const size_t i = column.at(key);
      if (i >= cells.size()) ThrowUserError(where, key, "row has too few cells");
      return cells[i];
    };
    GemmMeasurement g;
    g.line = line_no;
    g.shape.m = ParseDim(ParseNumber(cell("m"), where, "m"), where, "m");
    g.shape.n = ParseDim(ParseNumber(cell("n"), where, "n"), where, "n");
    g.shape.k = ParseDim(ParseNumber(cell("k"), where, "k"), where, "k");
    if (column.count("batch") && !cell("batch").empty()) {
      g.shape.batch = ParseDim(ParseNumber(cell("batch"), where, "batch"), where, "batch");
    }
    g.dtype = ParseDTypeField(cell("dtype"), where);
    g.seconds = ParseTimeUs(ParseNumber(cell("time_us"), where, "time_us"), where);
    shapes.Add(g, where, "");
    out.push_back(g);
  }
  if (column.empty()) ThrowUserError(SourceLocation{file, -1, -1, -1}, "", "empty CSV file");
  return out;
}

std::vector<GemmMeasurement> ParseGemmMeasurementsJson(const std::string& text,
                                                       const std::string& file) {
  // {"gemms": [{...}]} nests three levels.
  const nlohmann::json doc = ParseUntrustedJson(text, file, 8, "a GEMM timing table");
  const nlohmann::json* list = &doc;
  if (doc.is_object()) {
    if (!doc.contains("gemms")) ThrowUserError(SourceLocation{file}, "gemms", "missing array");
    list = &doc["gemms"];
  }
  if (!list->is_array()) ThrowUserError(SourceLocation{file}, "gemms", "must be an array");
  std::vector<GemmMeasurement> out;
  DistinctShapes shapes;
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& e = (*list)[i];
    const SourceLocation where{file, -1, -1, -1};
    const std::string prefix = fmt::format("gemms[{}].", i);
    if (!e.is_object()) ThrowUserError(where, fmt::format("gemms[{}]", i), "must be an object");
    auto number = [&](const char* key) -> double {
      if (!e.contains(key)) ThrowUserError(where, prefix + key, "missing");
      if (!e[key].is_number()) ThrowUserError(where, prefix + key, "must be a number");
      return e[key].get<double>();
    };
    GemmMeasurement g;
    g.line = static_cast<int64_t>(i);
    g.shape.m = ParseDim(number("m"), where, prefix + "m");
    g.shape.n = ParseDim(number("n"), where, prefix + "n");
    g.shape.k = ParseDim(number("k"), where, prefix + "k");
    if (e.contains("batch")) g.shape.batch = ParseDim(number("batch"), where, prefix + "batch");
    if (!e.contains("dtype") || !e["dtype"].is_string()) {
      ThrowUserError(where, prefix + "dtype", "missing or not a string");
    }
    auto d = ParseDType(e["dtype"].get<std::string>());
    if (!d) ThrowUserError(where, prefix + "dtype", "unknown dtype");
    g.dtype = *d;
    const double us = number("time_us");
    if (!(us > 0) || us > 1e9) ThrowUserError(where, prefix + "time_us", "must be positive");
    g.seconds = us * 1e-6;
    shapes.Add(g, where, fmt::format("gemms[{}]", i));
    out.push_back(g);
  }
  return out;
}

std::vector<GemmMeasurement> ReadGemmMeasurements(const std::string& path) {
  const std::string text = ReadFile(path, int64_t{256} << 20);  // a table of GEMMs: MBs at most
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    return ParseGemmMeasurementsJson(text, path);
  }
  return ParseGemmMeasurementsCsv(text, path);
}

}  // namespace sextant
