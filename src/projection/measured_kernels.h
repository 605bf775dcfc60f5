// Kernels measured with known shapes, read from what users already have: PyTorch profiler
// traces recorded with record_shapes=True (every GEMM, attention, elementwise and norm op the
// trace roofline can price), TraceLens reports (GEMM.csv, SDPA_fwd.csv, SDPA_bwd.csv) and
// Sextant's own GEMM timing tables (--gemm-timings CSV or JSON). They are what `sextant
// calibrate` fits a GPU's efficiency table to.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cost/efficiency_fit.h"

namespace sextant {

struct MeasuredKernelFile {
  std::string file;
  std::string device_name;  // the trace's GPU ("" for tables, which do not name one)
  std::vector<MeasuredKernel> kernels;
  int unpriced_ops = 0;    // shaped ops of a trace the cost models have no counterpart for
  bool truncated = false;  // a trace that ends early (its kernels are a part)
  // A profiler trace, whose kernels are whatever the run launched; false for a table, whose
  // rows someone chose to measure.
  bool from_trace = false;
  std::vector<std::string> warnings;  // the trace reader's, for the command to print
};

// Recognises the file by name and content: *.csv is a TraceLens report table or a GEMM timing
// table (by its header), a JSON with "gemms" (or a bare list) a GEMM timing table, anything
// else a profiler trace. Throws UserError naming the file for anything unreadable.
MeasuredKernelFile ReadMeasuredKernels(const std::string& path);

// The table forms from text (CSV, or JSON GEMM timings).
MeasuredKernelFile ParseMeasuredKernelTable(std::string_view text, const std::string& file);

}  // namespace sextant
