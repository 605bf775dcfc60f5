// TraceLens's per-op-family perf sheets (GEMM, UnaryElementwise, BinaryElementwise, SDPA_fwd,
// SDPA_bwd, Reduce_fwd, Reduce_bwd, Normalization, RMSNorm_fwd, RoPE_fwd, CONV_fwd,
// CONV_bwd): every
// call of an op the family names, grouped by the op's name and the family's parameters (for a
// GEMM: M, N, K, bias, the strides and dtypes of A and B, batch; for an element-wise op: its
// shapes, dtypes and strides) and, where the trace has recompute frames, by activation
// recomputation. Per group: FLOPs and bytes of one call, and the statistics over calls of the
// GPU time of the call's kernels (its subtree's) and of the TFLOP/s and TB/s it achieved.
//
// These look at the op that runs (the addmm inside an aten::linear), as TraceLens does, so a
// TraceLens user's sheets read the same rows; the roofline table (roofline.h) prices the
// outermost modelled op instead. Source: AMD-AGI/TraceLens @171dd747 PerfModel/perf_model.py
// (get_param_details, flops and bytes of aten_mm, aten_addmm, aten_bmm, aten_baddbmm,
// aten_scaled_mm, aten_unary_elementwise, aten_upsample_nearest, aten_binary_elementwise),
// PerfModel/torch_op_mapping.py (which ops each family holds), PerfModel/extensions/ (the ROCm
// inference stacks' GEMMs, RMSNorms and rotary embedding) and TreePerf/tree_perf.py
// (summarize_df_perf_metrics: group by name and parameters, the first call's FLOPs and bytes,
// mean/median/std/min/max of the per-call rates and times).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/event_store.h"
#include "trace/op_breakdown.h"

namespace sextant {

// Mean, median, sample standard deviation (n - 1; NaN for one value), min, max and sum over
// the values that are numbers (a call with no kernel time has no rate). NaN when none is.
struct CallStats {
  double mean = 0, median = 0, std = 0, min = 0, max = 0, sum = 0;
  int64_t n = 0;
};
CallStats SummarizeCalls(std::vector<double> values);

struct PerfSheetGroup {
  std::string name;
  std::vector<std::string> params;  // the sheet's parameters, as TraceLens prints them
  bool recompute = false;
  uint32_t thread = 0;  // the first call's thread (index into TraceData::threads)
  // The first call's argument records, as TraceLens shows them (Python lists).
  std::string input_dims, input_types, input_strides, concrete_inputs;
  double gflops = 0;  // one call
  double bytes = 0;   // one call; NaN where a dtype's size is unknown
  CallStats kernel_us;
  CallStats tflops;
  CallStats tbps;
};

struct PerfSheet {
  std::string_view tracelens_name;  // "GEMM", "UnaryElementwise", "BinaryElementwise"
  std::string_view table;           // Sextant's table: "gemm_calls", ...
  std::string_view title;
  std::vector<std::string_view> params;  // TraceLens's parameter names ("M", "shape_in1", ...)
  std::vector<PerfSheetGroup> groups;    // largest total kernel time first
};

// One call as its family's perf model prices it (TraceLens's compute_perf_metrics).
struct PricedCall {
  std::string_view sheet;               // TraceLens's sheet ("GEMM", ...)
  std::vector<std::string_view> names;  // the family's parameter names
  std::vector<std::string> params;      // their values, as the sheet prints them
  std::string_view optional_param;      // a parameter only some ops have ("" when none)
  double flops = 0;
  double bytes = 0;  // NaN where a dtype's size is unknown
};

// Whether a family names the op (TraceLens's op_to_perf_model_class_map, for the families
// Sextant has).
bool HasPerfModel(std::string_view op_name);
// The call priced by its family; nullopt when no family names the op or its family cannot
// price these arguments (TraceLens's perf model raises).
// `annotation` is the user annotation enclosing the call (StepAnnotations), which the
// inference-attention models read.
std::optional<PricedCall> PriceCall(const TraceData& trace, const CpuEvent& call,
                                    std::string_view annotation = {});
// Whether the op's model reads the enclosing annotation.
bool PerfModelReadsAnnotation(std::string_view op_name);

// (Sextant's table, TraceLens's sheet) of every family, in SummarizePerfSheets' order.
std::vector<std::pair<std::string_view, std::string_view>> PerfSheetNames();

// Every family, in a fixed order, each with its groups (possibly none). `times` are over the
// GPU activities `events` (the report's timeline); `recompute_cpu` (one flag per trace.cpu
// event, or empty) splits groups by activation recomputation. Backward sheets (SDPA_bwd,
// Reduce_bwd) hold the forward calls autograd differentiated (autograd_links.h), priced by
// the backward model, with the kernel time of their backward nodes.
std::vector<PerfSheet> SummarizePerfSheets(const TraceData& trace,
                                           const std::vector<uint32_t>& events,
                                           const OpKernelTimes& times,
                                           const std::vector<uint8_t>& recompute_cpu);

}  // namespace sextant
