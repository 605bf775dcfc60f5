// Short kernels: kernels so brief that launching them costs about as much as running them,
// the usual sign of an unfused chain of small ops or a launch-bound loop. TraceLens's short
// kernel study (Reporting/generate_perf_report_pytorch.py, get_dfs_short_kernels), with its
// definitions so that its two tables can be compared row by row:
//  - short = a kernel (not a copy or a fill) shorter than 10 us;
//  - short_kernel_histogram: their durations in 100 equal bins between the shortest and the
//    longest (numpy.histogram's bins: the last one closed on the right);
//  - short_kernels_summary: count, total and mean per (launching op, its Input Dims, Input
//    Strides, Concrete Inputs, kernel name), as Python reprs; kernels whose op lacks one of
//    those records are not in it (pandas groupby drops missing keys). A trace without CPU ops
//    groups by kernel name alone. Largest total first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

struct ShortKernelBin {
  double start_us = 0, end_us = 0;
  int64_t count = 0;
};

struct ShortKernelGroup {
  std::string parent_op, input_dims, input_strides, concrete_inputs;  // "" without CPU ops
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
};

struct ShortKernelStudy {
  double threshold_us = 10;
  int bins = 100;                         // of the histogram, when there are short kernels
  int64_t kernels = 0;                    // short kernels in the trace
  int64_t total_ns = 0;                   // their GPU time
  std::vector<ShortKernelBin> histogram;  // empty without short kernels
  std::vector<ShortKernelGroup> groups;
};

ShortKernelStudy StudyShortKernels(const TraceData& trace, double threshold_us = 10,
                                   int bins = 100);

}  // namespace sextant
