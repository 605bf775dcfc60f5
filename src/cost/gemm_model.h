// Time of one GEMM (or grouped GEMM) on one GPU: macro-tile choice, wave quantisation over
// the CUs/SMs, and a roofline of tensor-core time against HBM traffic with L2 reuse inside a
// wave, scaled by the efficiency table. Calibration re-fits the table from measured GEMMs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cost/efficiency_table.h"
#include "hardware/gpu_spec.h"
#include "util/dtype.h"

namespace sextant {

// C[M,N] = A[M,K] · B[K,N], `batch` independent problems of the same shape.
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
};

struct MacroTile {
  int m = 0;
  int n = 0;
};

struct GemmEstimate {
  double seconds = 0;
  double flops = 0;            // 2·M·N·K·batch (useful work, no padding)
  double hbm_bytes = 0;        // modelled HBM traffic
  double compute_seconds = 0;  // waves x (tile main loop + prologue/epilogue) / fraction
  double memory_seconds = 0;   // hbm_bytes at the achievable bandwidth
  MacroTile tile;
  int64_t tiles = 0;
  int64_t waves = 0;
  double wave_efficiency = 0;  // useful FLOPs / FLOPs the launched waves could do
  double efficiency = 0;       // table fraction applied
  bool memory_bound = false;
  bool launch_bound = false;  // shorter than the table's minimum kernel time
};

// Which pass a GEMM belongs to: backward-pass (input- and weight-gradient) low-precision GEMMs
// use the efficiency table's gradient classes (EfficiencyTable::GradientGemmFraction).
enum class GemmPass { kForward, kGradient };

class GemmModel {
 public:
  GemmModel(GpuSpec gpu, EfficiencyTable table);

  // Inputs in `dtype`, output in bf16 for low-precision inputs (fp8/mxfp8/fp4), else dtype.
  // Throws UserError when the GPU has no peak for the dtype.
  GemmEstimate Estimate(const GemmShape& shape, DType dtype,
                        GemmPass pass = GemmPass::kForward) const;
  double Time(const GemmShape& shape, DType dtype) const { return Estimate(shape, dtype).seconds; }

  // One grouped-GEMM kernel over groups that share N and K but each have their own M
  // (MoE experts with ragged token counts). Tiles of all groups share the waves.
  GemmEstimate EstimateGrouped(const std::vector<int64_t>& group_m, int64_t n, int64_t k,
                               DType dtype, GemmPass pass = GemmPass::kForward) const;

  // The weight-gradient form of the same grouped GEMM: dW_g[M,N] = X_gᵀ · dY_g, where each
  // group's depth K is its token count.
  GemmEstimate EstimateGroupedRaggedK(int64_t m, int64_t n, const std::vector<int64_t>& group_k,
                                      DType dtype, GemmPass pass = GemmPass::kForward) const;

  // The same groups as one GEMM launch per group, `streams` launches at a time on concurrent
  // streams that join at the end (Transformer Engine's GroupedLinear loops over the experts on
  // 4 streams; streams = 1 runs them one after the other). The launches of one round share the
  // GPU's CUs as one grouped launch of those groups would; rounds run back to back, so each
  // pays its own tail wave and launch floor.
  GemmEstimate EstimateGroupLoop(const std::vector<int64_t>& group_m, int64_t n, int64_t k,
                                 DType dtype, GemmPass pass, int streams) const;
  GemmEstimate EstimateGroupLoopRaggedK(int64_t m, int64_t n, const std::vector<int64_t>& group_k,
                                        DType dtype, GemmPass pass, int streams) const;

  const GpuSpec& gpu() const { return gpu_; }
  const EfficiencyTable& table() const { return table_; }

 private:
  GpuSpec gpu_;
  EfficiencyTable table_;
};

// Candidate macro tiles, largest first (the tiles hipBLASLt / CUTLASS kernels commonly use).
const std::vector<MacroTile>& CandidateMacroTiles();

// HBM bytes of one GEMM when the CUs run `concurrent` tiles at a time and tiles of one wave
// share their A rows and B columns through L2 (grouped raster order).
double GemmHbmBytes(const GemmShape& shape, MacroTile tile, int64_t concurrent, double in_bytes,
                    double out_bytes, int64_t l2_bytes);

// ---- Calibration -------------------------------------------------------------------------

struct GemmMeasurement {
  GemmShape shape;
  DType dtype = DType::kBF16;
  double seconds = 0;
  int64_t line = 0;  // where it came from, for messages
};

// The most distinct (m, n, k, batch, dtype) shapes a GEMM timing table may hold: the
// calibration fit prices each distinct shape a few hundred times (rows repeating a shape are
// not priced again).
inline constexpr size_t kMaxGemmTimingShapes = 20'000;
// Rows a GEMM timing table may hold: the fit weighs every row at each of its steps (a
// shape measured several times is several rows).
inline constexpr size_t kMaxGemmTimingRows = 200'000;

// Reads measured GEMM timings. CSV: a header naming at least m,n,k,dtype,time_us (batch
// optional; a UTF-8 byte-order mark is skipped). JSON: {"gemms":[{"m":..,"n":..,"k":..,
// "dtype":"bf16","time_us":..}, ...]} or the bare array. Throws UserError naming file,
// line/offset and key for any bad entry (a quoted value cut to 80 characters), and for a
// table of more than kMaxGemmTimingShapes distinct shapes or kMaxGemmTimingRows rows.
std::vector<GemmMeasurement> ReadGemmMeasurements(const std::string& path);
std::vector<GemmMeasurement> ParseGemmMeasurementsCsv(const std::string& text,
                                                      const std::string& file);
std::vector<GemmMeasurement> ParseGemmMeasurementsJson(const std::string& text,
                                                       const std::string& file);

}  // namespace sextant
