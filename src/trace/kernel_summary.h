// Kernel breakdown: GPU activities grouped by name (and by category), with count, total,
// mean, median, minimum and maximum duration.
#pragma once

#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/kernel_category.h"

namespace sextant {

struct KernelStats {
  std::string name;
  KernelCategory category = KernelCategory::kOther;
  GpuKind kind = GpuKind::kKernel;
  std::string parent_op;  // most frequent launching cpu_op ("" if none was linked)
  int64_t count = 0;
  int64_t total_ns = 0;
  double mean_ns = 0;
  double median_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
};

struct CategoryStats {
  KernelCategory category = KernelCategory::kOther;
  int64_t count = 0;
  int64_t total_ns = 0;
};

// Every distinct GPU activity name, sorted by total time (largest first).
std::vector<KernelStats> SummarizeKernels(const TraceData& trace);

// Kernels (not copies or fills) by launching op, name and stream: TraceLens's kernel_summary
// rows (TreePerf get_df_kernel_summary), with every kernel of the trace, an unlinked one under
// an empty parent op. Largest total first.
struct KernelLaunchStats {
  std::string parent_op;  // innermost cpu_op around the launch, "" if none
  std::string name;
  int64_t stream = 0;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
};
std::vector<KernelLaunchStats> SummarizeKernelsByParent(const TraceData& trace);
// Totals per category over SummarizeKernels' output, largest first.
std::vector<CategoryStats> SummarizeCategories(const std::vector<KernelStats>& kernels);

// Median of a list of values (average of the two middle ones for an even count); reorders.
double Median(std::vector<int64_t>& values);

}  // namespace sextant
