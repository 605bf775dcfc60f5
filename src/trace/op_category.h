// TraceLens's op-category taxonomy (its ops_summary_by_category sheet): each op that launches
// GPU work directly gets one category from its name (GEMM, CONV_fwd, NORM_bwd, SDPA_fwd,
// InferenceAttention, RMSNorm, RoPE_fwd, MoE_unfused, elementwise, reduce, triton, ...), or,
// for an op the taxonomy does not name, from its first kernel (an ATen elementwise, reduce
// or multi_tensor_apply kernel), else "other". Sextant's own kernel categories
// (kernel_category.h) answer a different question, where GPU time goes by kind of kernel;
// this one lets a TraceLens user's spreadsheets and scripts read Sextant's table.
//
// Source: AMD-AGI/TraceLens @171dd747 (the version that wrote the corpus's reference
// reports): PerfModel/torch_op_mapping.py (op_to_perf_model_class_map, the element-wise,
// norm and reduce lists, CATEGORY_ONLY_OP_MAPPING, OP_CATEGORY_PATTERNS, the kernel-name
// fallback), the `category` of each perf-model class in PerfModel/perf_model.py and
// PerfModel/extensions/*, and the pseudo-op tables of extensions/pseudo_ops_perf_utils.py.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_store.h"
#include "trace/op_breakdown.h"
#include "trace/perf_sheets.h"

namespace sextant {

// The category of an op launching GPU work; `first_kernel` is the name of the first kernel
// it launched ("" if unknown).
std::string_view TraceLensOpCategory(std::string_view op_name, std::string_view first_kernel);

// TraceLens's category of a kernel of an XLA profile (its JAX report, JaxOpKeys.ClassCategories
// in TraceLens/util.py): the first category whose patterns the kernel's name contains, replaced
// by the first one its XLA op (`hlo_op`) contains unless the name says flash attention, else
// "Uncategorized Events/XLA". GEMM, FA BWD, FA FWD, FA V3, Conv, TE or
// "Communication rccl/nccl".
std::string_view TraceLensJaxCategory(std::string_view kernel, std::string_view hlo_op);

// An op call that launches GPU work itself (TraceLens's kernel launcher): the innermost op
// around the runtime calls of its kernels, or a runtime call with no op around it.
// Collective kernels do not make a launcher, as in TraceLens.
struct KernelLauncher {
  int32_t cpu = -1;        // index into trace.cpu
  bool recompute = false;  // launched inside activation recomputation (recompute.h)
  std::string_view category;
  int64_t direct_ns = 0;  // its direct, non-collective kernels
};

// Over the GPU activities `events` (the timeline's); `recompute_cpu` holds one flag per
// trace.cpu event, or is empty. A trace with no op at all has no launchers.
std::vector<KernelLauncher> FindKernelLaunchers(const TraceData& trace,
                                                const std::vector<uint32_t>& events,
                                                const std::vector<uint8_t>& recompute_cpu);

struct OpCategoryStats {
  std::string category;
  bool recompute = false;
  int64_t count = 0;  // launcher calls
  int64_t direct_kernel_ns = 0;
};

// TraceLens's ops_summary_by_category: one row per category and recompute flag, largest
// direct kernel time first.
std::vector<OpCategoryStats> SummarizeOpCategories(const std::vector<KernelLauncher>& launchers);

struct LauncherOpStats {
  std::string name;
  bool recompute = false;
  int64_t count = 0;
  int64_t direct_kernel_ns = 0;
  int64_t subtree_kernel_ns = 0;        // the calls' subtrees (OpKernelTimes)
  std::vector<std::string> categories;  // sorted
};

// TraceLens's ops_summary: the launchers by op name (and recompute flag), largest direct
// kernel time first.
std::vector<LauncherOpStats> SummarizeLauncherOps(const TraceData& trace,
                                                  const std::vector<KernelLauncher>& launchers,
                                                  const OpKernelTimes& times);

struct LauncherArgsStats {
  std::string name;
  std::string category;
  bool recompute = false;
  uint32_t thread = 0;  // index into TraceData::threads (TraceLens groups by thread name)
  // The argument records as TraceLens groups them (Python tuples, perf_sheets' PythonRepr).
  std::string input_dims, input_types, input_strides, concrete_inputs;
  CallStats direct_us, subtree_us;  // over the group's calls
};

// TraceLens's ops_unique_args: the launchers grouped by name, category, thread and argument
// records (and recompute flag), largest summed direct kernel time first.
std::vector<LauncherArgsStats> SummarizeLauncherArgs(const TraceData& trace,
                                                     const std::vector<KernelLauncher>& launchers,
                                                     const OpKernelTimes& times);

}  // namespace sextant
