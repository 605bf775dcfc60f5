// Fitting a GPU's efficiency table to kernels measured with known shapes (GEMMs, flash
// attention, memory-bound kernels): the measured counterpart of the published defaults in
// efficiency_table.h. Each class of the table is fitted by least absolute deviation on log
// time of the cost model's own prediction (launch floor and HBM roofline included); for
// kernels whose time is the scaled part alone that is the median of ideal / measured time.
// Each kernel informs one thing at most (ClassifyKernel, at the default table): a short kernel
// whose priced work is under a tenth of its time informs the launch floor alone, a kernel whose
// priced work explains its time informs its class alone, and the rest inform nothing. A class
// (or the floor) with fewer such kernels than asked keeps its default: one 3.5 us copy of 0.2 MB
// does not make the HBM run at 1% of its bandwidth, nor does a 41 us GEMM make every launch 18 us.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cost/attention_model.h"
#include "cost/efficiency_table.h"
#include "cost/gemm_model.h"
#include "hardware/gpu_spec.h"
#include "util/dtype.h"

namespace sextant {

enum class KernelClass { kGemm, kAttentionForward, kAttentionBackward, kMemoryBound };
std::string_view KernelClassName(KernelClass kind);  // "GEMM", "attention fwd", ...

// One measured kernel (or op) with the shape the cost models take.
struct MeasuredKernel {
  KernelClass kind = KernelClass::kGemm;
  DType dtype = DType::kBF16;
  GemmShape gemm;            // kGemm
  AttentionShape attention;  // kAttention*
  double bytes = 0;          // kMemoryBound: bytes moved per call
  double seconds = 0;        // per call
  int64_t calls = 1;
  std::string origin;  // where it was measured, for reports: "file: op [dims]"
};

// The cost model's time for the kernel under `table` (GemmModel, AttentionModel or
// MemoryBoundModel, exactly as the projection charges it).
double PredictSeconds(const GpuSpec& gpu, const EfficiencyTable& table, const MeasuredKernel& k);

// Whether the cost models can price the kernel on this GPU (its dtype has a peak there, its
// shape is complete); kernels that cannot are left out of fits and errors.
bool CanPredict(const GpuSpec& gpu, const MeasuredKernel& k);

struct FittedClass {
  KernelClass kind = KernelClass::kGemm;
  DType dtype = DType::kBF16;  // GEMM classes; attention and memory-bound are per GPU
  double min_size = 0;         // class start: GFLOP for GEMMs, MB for memory-bound, 0 otherwise
  int kernels = 0;
  int work_bound = 0;  // of `kernels`, those whose time is mostly work: what the fit used
  bool asked = true;   // false: left at its default by the caller's choice of classes
  double fraction_before = 0;
  // Not fitted: fraction_before, or moved between the fitted classes below and above it so
  // that efficiency does not fall as work grows.
  double fraction_after = 0;
  bool fitted = false;
};

// Prediction error of one op class over a set of kernels: |predicted / measured - 1|.
struct ClassError {
  KernelClass kind = KernelClass::kGemm;
  int kernels = 0;
  double median_before = 0, median_after = 0;
  double mean_before = 0, mean_after = 0;
};

struct EfficiencyFit {
  EfficiencyTable table;
  std::vector<FittedClass> classes;  // every class that had at least one kernel
  std::vector<ClassError> errors;    // on the fitted kernels, per op class
  int usable_kernels = 0;            // kernels the models could price
  // The launch floor (EfficiencyTable::min_kernel_seconds), fitted with the classes.
  double floor_before = 0, floor_after = 0;
  bool floor_fitted = false;
  bool floor_asked = true;
  int floor_kernels = 0;  // kernels whose time is mostly launch and latency: what it used
  // Kernels neither launch- nor work-bound (tiny priced work, several floors long: small-grid
  // reductions, waits): no parameter of the table explains them, so none is fitted to them.
  int unexplained_kernels = 0;
};

// What a kernel's measured time can inform. Work-bound: the work `table` prices explains at
// least kWorkBoundShare of it, or the kernel runs for kSlowWorkFloors launch floors or more
// (slow at its work, whatever the table says of that work): its class. Launch-bound: shorter
// than kLaunchBoundFloors floors: the floor. Unexplained, in between: little priced work yet
// several floors long (a reduction over a small grid, a wait); a 1 MB norm kernel at 20 us is
// not a launch, and taking it for one raised MI300X's floor to 13 us.
inline constexpr double kWorkBoundShare = 0.1;
inline constexpr double kLaunchBoundFloors = 2;
inline constexpr double kSlowWorkFloors = 10;
enum class KernelBound { kWork, kLaunch, kUnexplained };
KernelBound ClassifyKernel(const GpuSpec& gpu, const EfficiencyTable& table,
                           const MeasuredKernel& k);

// The share of `k`'s measured time that the work priced by `table` explains: its predicted
// time with no launch floor over its measured time.
double WorkShare(const GpuSpec& gpu, const EfficiencyTable& table, const MeasuredKernel& k);

inline const std::vector<KernelClass> kAllKernelClasses = {
    KernelClass::kGemm, KernelClass::kAttentionForward, KernelClass::kAttentionBackward,
    KernelClass::kMemoryBound};

// The fewest kernels a class is fitted on unless told otherwise (`sextant calibrate
// --min-kernels`, and always for a projection's --calibration TRACE): one or two kernels fit
// their own shapes exactly and say little of the class (one 559-token SDPA call moved the
// attention class's median error from 73% to 0%).
inline constexpr int kDefaultMinKernelsPerClass = 3;

// Fits `base`'s classes to `kernels` on `gpu`: those of the op classes in `fit_kinds`, and the
// launch floor when `fit_floor`. Classes with fewer than `min_kernels` kernels keep `base`'s
// value. Throws UserError when nothing could be fitted.
EfficiencyFit FitEfficiencyTable(const GpuSpec& gpu, const EfficiencyTable& base,
                                 const std::vector<MeasuredKernel>& kernels,
                                 int min_kernels = kDefaultMinKernelsPerClass,
                                 bool fit_floor = true,
                                 const std::vector<KernelClass>& fit_kinds = kAllKernelClasses);

// Errors of two tables (before, after) on `kernels`, per op class that has kernels.
std::vector<ClassError> CompareTables(const GpuSpec& gpu, const EfficiencyTable& before,
                                      const EfficiencyTable& after,
                                      const std::vector<MeasuredKernel>& kernels);

}  // namespace sextant
