// Achievable fractions of a GPU's peak: what the compute cost models multiply the ideal
// (tile- and wave-quantised, roofline) time by. Each fraction is looked up by size class,
// because small kernels reach a smaller share of peak than large ones. Defaults come from
// published figures per vendor; measured GEMM timings re-fit the GEMM classes (Calibrate).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hardware/gpu_spec.h"
#include "util/dtype.h"

namespace sextant {

// The least fraction of peak a class may run at: the floor of a fit and of a table read back.
// The smallest of the shipped tables is 0.05 (Hopper FP8 gradient GEMMs under 1 GFLOP); a
// thousandth would make a 1 ms kernel take a second, which only a damaged or hand-edited file
// says.
inline constexpr double kMinEfficiencyFraction = 1e-3;

// A step function of size: `fractions[i]` applies from `thresholds[i]` (inclusive) up to
// the next threshold. thresholds[0] is 0, thresholds ascend, fractions lie in (0, 1].
struct SizeClassTable {
  std::vector<double> thresholds;
  std::vector<double> fractions;

  double Lookup(double size) const;
  int ClassOf(double size) const;  // index into thresholds/fractions
};

class EfficiencyTable {
 public:
  // Published defaults for the GPU's vendor (see docs/cost-models.md for every source).
  static EfficiencyTable Default(const GpuSpec& gpu);
  // Every fraction 1: the cost models then give their ideal (roofline) times. Used by
  // calibration, which divides ideal by measured time.
  static EfficiencyTable Ideal();

  // Achieved fraction of the dtype's dense peak for a GEMM of `flops` floating-point
  // operations (2·M·N·K·batch), after tile and wave quantisation. Dtypes without a table
  // of their own use the bf16 table.
  double GemmFraction(DType dtype, double flops) const;
  // The same for a backward-pass (input- or weight-gradient) GEMM: Transformer Engine and
  // torchao run those low-precision GEMMs with the split (promoted) accumulator, the forward
  // one with fast accumulation. Dtypes without a gradient table of their own use GemmFraction.
  double GradientGemmFraction(DType dtype, double flops) const;
  // Flash-attention kernels: fraction of the dtype's dense peak, forward and backward.
  double attention_forward_fraction() const { return attention_forward_fraction_; }
  double attention_backward_fraction() const { return attention_backward_fraction_; }
  // Memory-bound kernels: fraction of HBM bandwidth by bytes moved by one kernel.
  double HbmFraction(double bytes) const { return hbm_.Lookup(bytes); }

  const SizeClassTable& GemmTable(DType dtype) const;
  // Whether `dtype` has a GEMM table of its own (the others read bf16's).
  bool HasOwnGemmTable(DType dtype) const { return gemm_.count(dtype) > 0; }
  void SetGemmTable(DType dtype, SizeClassTable table);
  // The backward-pass table of `dtype`, when it has one.
  const SizeClassTable* GradientGemmTable(DType dtype) const;
  void SetAttentionFractions(double forward, double backward);
  void SetHbmTable(SizeClassTable table) { hbm_ = std::move(table); }
  const SizeClassTable& hbm_table() const { return hbm_; }

  // Shortest time any kernel takes (launch ramp-up and drain): every GEMM, attention call and
  // memory-bound kernel costs at least this.
  double min_kernel_seconds() const { return min_kernel_seconds_; }
  void set_min_kernel_seconds(double seconds) { min_kernel_seconds_ = seconds; }

  // Whether GEMM kernels overlap a tile's epilogue with the next tile's main loop
  // (persistent, warp-specialised kernels), so per-tile prologue/epilogue is paid once per
  // launch instead of once per wave.
  bool overlapped_epilogue() const { return overlapped_epilogue_; }
  void set_overlapped_epilogue(bool overlapped) { overlapped_epilogue_ = overlapped; }

  std::string source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

  // {"source":..., "gemm":{"bf16":[{"min_gflop":..,"fraction":..},...]}, "attention":{...},
  //  "hbm":[{"min_mb":..,"fraction":..}]}
  std::string ToJson() const;
  // Reads what ToJson writes (the "table" of a calibration file). Throws UserError naming
  // `file` and the key for anything missing, of the wrong type or out of range (fractions in
  // (0, 1], class starts ascending from 0).
  static EfficiencyTable FromJson(std::string_view text, const std::string& file);
  // The same from an already parsed document; `where` prefixes every key in messages.
  static EfficiencyTable FromJsonValue(const nlohmann::json& json, const std::string& file,
                                       const std::string& where);

 private:
  std::map<DType, SizeClassTable> gemm_;
  std::map<DType, SizeClassTable> gradient_gemm_;
  double attention_forward_fraction_ = 1.0;
  double attention_backward_fraction_ = 1.0;
  SizeClassTable hbm_;
  bool overlapped_epilogue_ = false;
  double min_kernel_seconds_ = 0;
  std::string source_;
};

// GEMM size classes used by the default tables and by calibration, in GFLOP.
const std::vector<double>& GemmSizeClassesGflop();

}  // namespace sextant
