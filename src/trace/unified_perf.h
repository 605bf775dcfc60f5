// TraceLens's unified_perf_summary: one table of every op that either has a perf model (its
// GEMMs, convolutions, attention, norms, reductions and element-wise ops, priced with FLOPs
// and bytes) or launches GPU work itself, so that each kernel is counted once, under the
// outermost op that explains it. Kernels no such op covers (an op's own kernel next to child
// ops, a launch outside any op) become "<parent>-><kernel> (Synthetic Op)" rows. Rows group
// calls by name, category, process and thread names and argument records (and the
// recompute flag), with statistics of CPU duration, kernel time and achieved TFLOP/s and
// TB/s, largest total kernel time first.
//
// Source: AMD-AGI/TraceLens @171dd747 TreePerf/tree_perf.py (collect_unified_perf_events,
// build_df_unified_perf_table, summarize_df_unified_perf_table). Differences, deliberate
// (docs/trace.md): ops whose perf model Sextant does not have (triton kernels, vendor
// extension ops) are plain launcher rows; no "Compute Spec"; a backward op paired with a
// modelled forward op by autograd is a plain launcher row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/perf_sheets.h"

namespace sextant {

// One position of the group's kernel sequence (TraceLens lines up each call's kernels by
// position, taking names from the first call).
struct UnifiedPerfKernel {
  std::string name;
  int64_t stream = 0;
  CallStats us;  // over the calls; std is the population's (numpy's default)
};

struct UnifiedPerfRow {
  std::string name;  // the op, or "<parent>-><kernel> (Synthetic Op)"
  std::string category;
  bool recompute = false;
  uint32_t thread = 0;  // index into TraceData::threads
  // The argument records as TraceLens groups them (Python tuples; empty when absent).
  std::string input_dims, input_types, input_strides, concrete_inputs;
  int32_t first_cpu = -1;  // the group's first call (index into trace.cpu)
  CallStats duration_us;   // the calls' CPU time
  bool has_perf_model = false;
  // One call's FLOPs and bytes (NaN without a perf model or a byte count), and the
  // parameters the model read, as a Python dict ("{'M': 141, ...}").
  double gflops = 0, mib = 0, flops_per_byte = 0;
  std::string perf_params;
  CallStats kernel_us;  // each call's GPU busy time (the union of its kernels)
  CallStats tflops, tbps;
  // Shortest total first (TraceLens's order); calls whose kernel count differs from the
  // first call's are left out of it, as TraceLens leaves them out.
  std::vector<UnifiedPerfKernel> kernels;
};

// Over the GPU activities `events` (the timeline's); `recompute_cpu` holds one flag per
// trace.cpu event, or is empty. A trace with no op has no rows.
std::vector<UnifiedPerfRow> SummarizeUnifiedPerf(const TraceData& trace,
                                                 const std::vector<uint32_t>& events,
                                                 const std::vector<uint8_t>& recompute_cpu);

}  // namespace sextant
