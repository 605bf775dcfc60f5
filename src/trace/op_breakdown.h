// Operator breakdown: CPU ops (cat cpu_op) aggregated by name and by name + input shapes and
// dtypes, with the GPU time of the kernels they launched. "Direct" kernel time is that of
// kernels launched by runtime calls whose innermost enclosing cpu_op is the op itself;
// "subtree" time adds the kernels of every op nested inside it (TraceLens's
// total_direct_kernel_time / total_subtree_kernel_time).
#pragma once

#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/kernel_category.h"

namespace sextant {

// Per CPU event (index into trace.cpu): kernel time it launched directly / in its subtree,
// over the GPU timeline's activities (TimelineEvents).
struct OpKernelTimes {
  std::vector<int64_t> direct_ns;
  std::vector<int64_t> subtree_ns;
  std::vector<int32_t> kernel_count;  // direct kernels
};
OpKernelTimes ComputeOpKernelTimes(const TraceData& trace);
// The same over GPU activities already selected (a report holds its TimelineEvents).
OpKernelTimes ComputeOpKernelTimes(const TraceData& trace, const std::vector<uint32_t>& events);

struct OpStats {
  std::string name;
  std::string input_dims;   // raw "Input Dims" text ("" when shapes were not recorded)
  std::string input_types;  // raw "Input type" text
  std::string parent;       // most frequent enclosing cpu_op ("" at top level)
  KernelCategory category = KernelCategory::kOther;
  bool category_known = false;
  int64_t count = 0;
  int64_t cpu_ns = 0;  // summed wall time of the op on its CPU thread
  int64_t direct_kernel_ns = 0;
  int64_t subtree_kernel_ns = 0;
  int64_t kernels = 0;  // kernels launched directly
};

// One row per op name (by_shape = false) or per (name, input dims, input types)
// (by_shape = true); only ops with GPU work in their subtree; largest direct time first,
// ties by subtree time.
std::vector<OpStats> SummarizeOps(const TraceData& trace, const OpKernelTimes& times,
                                  bool by_shape);
// Both of SummarizeOps's tables from one pass over the events.
struct OpSummaries {
  std::vector<OpStats> by_shape, by_name;
};
OpSummaries SummarizeOpsByShapeAndName(const TraceData& trace, const OpKernelTimes& times);

// Hierarchical view: ops keyed by their path of enclosing op names ("a > b > c", at most
// `max_depth` levels), with count and kernel times; sorted so parents precede children.
struct OpPathStats {
  std::string path;
  int depth = 0;  // 0 for a top-level op
  int64_t count = 0;
  int64_t direct_kernel_ns = 0;
  int64_t subtree_kernel_ns = 0;
};
std::vector<OpPathStats> SummarizeOpTree(const TraceData& trace, const OpKernelTimes& times,
                                         int max_depth = 4);

}  // namespace sextant
