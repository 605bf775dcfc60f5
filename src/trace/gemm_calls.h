// TraceLens's GEMM sheet: every call of a GEMM primitive (aten::mm, addmm, bmm, baddbmm,
// _scaled_mm) grouped by the problem it solves and its operands' layout: name, M, N, K, batch,
// bias, the strides of A and B, their dtypes. Per group: FLOPs and bytes of one call (the
// roofline model, roofline.h), and the statistics over calls of the GPU time of the call's
// kernels and the TFLOP/s and TB/s it achieved.
//
// Unlike the roofline table, which prices the outermost modelled op (aten::linear), this
// looks at the primitive that runs (the addmm inside it), as TraceLens does: a TraceLens
// user's GEMM sheet reads the same rows. Source: AMD-AGI/TraceLens @171dd747
// PerfModel/perf_model.py (aten_mm, aten_addmm, aten_bmm, aten_baddbmm, aten_scaled_mm
// get_param_details) and TreePerf/tree_perf.py (summarize_df_perf_metrics: group by name and
// parameters; first FLOPs/bytes; mean/median/std/min/max of the per-call rates and times).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/op_breakdown.h"

namespace sextant {

// Mean, median, sample standard deviation (n - 1; NaN for one value), min and max, over the
// values that are numbers (a call with no kernel time has no rate).
struct CallStats {
  double mean = 0, median = 0, std = 0, min = 0, max = 0, sum = 0;
  int64_t n = 0;
};
CallStats SummarizeCalls(std::vector<double> values);

struct GemmCallGroup {
  std::string name;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool bias = false;
  std::string stride_a, stride_b;  // Python tuples, "None" when strides were not recorded
  std::string dtype_a_b;           // "('c10::BFloat16', 'c10::BFloat16')"
  bool recompute = false;
  // The first call's argument records, as TraceLens shows them (Python lists).
  std::string input_dims, input_types, input_strides, concrete_inputs;
  double gflops = 0;    // one call
  double bytes = 0;     // one call
  CallStats kernel_us;  // GPU time of each call's kernels (its subtree's)
  CallStats tflops;     // per call
  CallStats tbps;       // per call
};

// Largest total kernel time first. `recompute_cpu` (one flag per trace.cpu event, or empty)
// splits groups by activation recomputation, as TraceLens's recompute detection does.
std::vector<GemmCallGroup> SummarizeGemmCalls(const TraceData& trace, const OpKernelTimes& times,
                                              const std::vector<uint8_t>& recompute_cpu);

}  // namespace sextant
