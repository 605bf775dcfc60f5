#include "projection/measured_kernels.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "cost/gemm_model.h"
#include "projection/calibration_file.h"
#include "trace/op_arguments.h"
#include "trace/op_breakdown.h"
#include "trace/roofline.h"
#include "trace/trace_runner.h"
#include "util/csv_reader.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

// Tables are small; a bigger file named as one is a mistake, not a table.
constexpr int64_t kMaxTableBytes = int64_t{256} << 20;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

double NumberCell(const CsvTable& t, size_t row, const std::string& column) {
  const std::string& text = t.Get(row, column);
  const std::optional<double> v = ParseNumberCell(text);
  if (!v || *v < 0) {
    ThrowUserError(SourceLocation{t.file(), t.line(row)}, column,
                   fmt::format("'{}' is not a non-negative number", text));
  }
  return *v;
}

// Shape dimensions stay integral and far below what would overflow the cost models' products.
int64_t DimCell(const CsvTable& t, size_t row, const std::string& column) {
  const double v = NumberCell(t, row, column);
  if (v != std::floor(v) || v > 1e9) {
    ThrowUserError(SourceLocation{t.file(), t.line(row)}, column,
                   fmt::format("{} is not a tensor dimension", v));
  }
  return static_cast<int64_t>(v);
}

// TraceLens writes the operand types as a Python tuple: "('c10::BFloat16', 'c10::BFloat16')".
std::optional<DType> FirstOperandFormat(std::string_view tuple) {
  const size_t open = tuple.find('\'');
  if (open == std::string_view::npos) return FloatFormat(tuple);
  const size_t close = tuple.find('\'', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  return FloatFormat(tuple.substr(open + 1, close - open - 1));
}

// Per-call kernel time of a TraceLens row: the median of its calls where present.
double TraceLensSeconds(const CsvTable& t, size_t row) {
  for (const char* column : {"Kernel Time (µs)_median", "Kernel Time (µs)_mean"}) {
    if (t.HasColumn(column)) return NumberCell(t, row, column) * 1e-6;
  }
  ThrowUserError(SourceLocation{t.file(), t.line(row)}, "Kernel Time (µs)_median",
                 "missing column in the TraceLens table");
}

int64_t TraceLensCalls(const CsvTable& t, size_t row) {
  return t.HasColumn("name_count") ? DimCell(t, row, "name_count") : 1;
}

std::string RowOrigin(const CsvTable& t, size_t row) {
  return fmt::format("{} ({}:{})", t.HasColumn("name") ? t.Get(row, "name") : std::string("row"),
                     t.file(), t.line(row));
}

void ReadTraceLensGemms(const CsvTable& t, MeasuredKernelFile& out) {
  for (size_t i = 0; i < t.size(); ++i) {
    const std::optional<DType> dtype = FirstOperandFormat(t.Get(i, "param: dtype_A_B"));
    if (!dtype) continue;  // integer GEMMs are not modelled
    MeasuredKernel k;
    k.kind = KernelClass::kGemm;
    k.dtype = *dtype;
    k.gemm = {DimCell(t, i, "param: M"), DimCell(t, i, "param: N"), DimCell(t, i, "param: K"),
              t.HasColumn("param: B") ? DimCell(t, i, "param: B") : 1};
    k.seconds = TraceLensSeconds(t, i);
    k.calls = TraceLensCalls(t, i);
    k.origin = RowOrigin(t, i);
    out.kernels.push_back(std::move(k));
  }
}

void ReadTraceLensAttention(const CsvTable& t, bool backward, MeasuredKernelFile& out) {
  for (size_t i = 0; i < t.size(); ++i) {
    const std::optional<DType> dtype = FirstOperandFormat(t.Get(i, "param: dtype_A_B"));
    // The cost model prices self-attention (one sequence length for queries and keys).
    if (!dtype || DimCell(t, i, "param: N_Q") != DimCell(t, i, "param: N_KV")) {
      ++out.unpriced_ops;
      continue;
    }
    MeasuredKernel k;
    k.kind = backward ? KernelClass::kAttentionBackward : KernelClass::kAttentionForward;
    k.dtype = *dtype;
    k.attention.batch = DimCell(t, i, "param: B");
    k.attention.q_heads = DimCell(t, i, "param: H_Q");
    k.attention.kv_heads = DimCell(t, i, "param: H_KV");
    k.attention.seq = DimCell(t, i, "param: N_Q");
    k.attention.head_dim_qk = DimCell(t, i, "param: d_h_qk");
    k.attention.head_dim_v = DimCell(t, i, "param: d_h_v");
    k.attention.causal = ParseBool(t.Get(i, "param: causal")).value_or(false);
    k.seconds = TraceLensSeconds(t, i);
    k.calls = TraceLensCalls(t, i);
    k.origin = RowOrigin(t, i);
    out.kernels.push_back(std::move(k));
  }
}

void AddGemmTimings(const std::vector<GemmMeasurement>& timings, const std::string& file,
                    MeasuredKernelFile& out) {
  for (const GemmMeasurement& g : timings) {
    MeasuredKernel k;
    k.kind = KernelClass::kGemm;
    k.dtype = g.dtype;
    k.gemm = g.shape;
    k.seconds = g.seconds;
    k.origin = fmt::format("GEMM ({}:{})", file, g.line);
    out.kernels.push_back(std::move(k));
  }
}

// Every op of the trace the roofline prices, one kernel per (op, shapes, types) signature at
// its mean time per call.
void AddTraceKernels(const TraceData& trace, const std::string& file, MeasuredKernelFile& out) {
  const OpKernelTimes times = ComputeOpKernelTimes(trace);
  for (const RooflineRow& row : ComputeRoofline(trace, times, nullptr)) {
    if (row.count <= 0 || row.kernel_ns <= 0) continue;
    const std::vector<std::string> types = ParseStringList(row.input_types);
    // Integer and unknown operand types have no peak to price them against.
    DType dtype = DType::kBF16;
    bool priced = false;
    if (!types.empty()) {
      if (const std::optional<DType> f = FloatFormat(types.front())) {
        dtype = *f;
        priced = true;
      }
    }
    MeasuredKernel k;
    k.seconds = static_cast<double>(row.kernel_ns) * 1e-9 / static_cast<double>(row.count);
    k.calls = row.count;
    k.origin = fmt::format("{} {} ({})", row.name, row.input_dims, file);
    if (row.family == "GEMM") {
      if (!priced) continue;
      k.kind = KernelClass::kGemm;
      k.dtype = dtype;
      k.gemm = {static_cast<int64_t>(row.gemm.m), static_cast<int64_t>(row.gemm.n),
                static_cast<int64_t>(row.gemm.k), static_cast<int64_t>(row.gemm.batch)};
    } else if (row.family == "attention") {
      const AttentionDims& a = row.attention;
      if (!priced || a.seq_q != a.seq_kv) {
        ++out.unpriced_ops;
        continue;
      }
      k.kind = a.backward ? KernelClass::kAttentionBackward : KernelClass::kAttentionForward;
      k.dtype = dtype;
      k.attention.batch = static_cast<int64_t>(a.batch);
      k.attention.q_heads = static_cast<int64_t>(a.q_heads);
      k.attention.kv_heads = static_cast<int64_t>(a.kv_heads);
      k.attention.seq = static_cast<int64_t>(a.seq_q);
      k.attention.head_dim_qk = static_cast<int64_t>(a.head_dim_qk);
      k.attention.head_dim_v = static_cast<int64_t>(a.head_dim_v);
      k.attention.causal = a.causal;
    } else {
      k.kind = KernelClass::kMemoryBound;
      k.bytes = row.bytes_per_call;  // already counts each operand at its own width
      k.dtype = dtype;               // the first operand's type: a label in reports only
    }
    out.kernels.push_back(std::move(k));
  }
}

}  // namespace

MeasuredKernelFile ParseMeasuredKernelTable(std::string_view text, const std::string& file) {
  MeasuredKernelFile out;
  out.file = file;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    AddGemmTimings(ParseGemmMeasurementsJson(std::string(text), file), file, out);
    return out;
  }
  const CsvTable table = CsvTable::Parse(text, file);
  if (table.HasColumn("param: M") && table.HasColumn("param: dtype_A_B")) {
    ReadTraceLensGemms(table, out);
  } else if (table.HasColumn("param: N_Q") && table.HasColumn("param: dtype_A_B")) {
    ReadTraceLensAttention(table, EndsWith(file, "bwd.csv"), out);
  } else {
    AddGemmTimings(ParseGemmMeasurementsCsv(std::string(text), file), file, out);
  }
  return out;
}

MeasuredKernelFile ReadMeasuredKernels(const std::string& path) {
  // A timing table from a trace by its first bytes, without reading a trace whole.
  const std::string head = ReadFileHead(path, 4096);
  if (LooksLikeCalibrationFile(head)) {
    ThrowUserError(SourceLocation{path}, "format",
                   "is a calibration file (what `sextant calibrate -o` writes), not measured "
                   "kernels: a projection takes it with --calibration FILE");
  }
  const size_t first = head.find_first_not_of(" \t\r\n");
  const bool timing_json = EndsWith(path, ".json") && first != std::string::npos &&
                           (head[first] == '[' || head.find("\"gemms\"") != std::string::npos);
  if (EndsWith(path, ".csv") || timing_json) {
    return ParseMeasuredKernelTable(ReadFile(path, kMaxTableBytes), path);
  }
  MeasuredKernelFile out;
  out.file = path;
  out.from_trace = true;
  for (const TraceData& trace : ReadTraceFile(path)) {
    if (out.device_name.empty()) out.device_name = trace.device_name;
    out.truncated = out.truncated || trace.truncated;
    out.warnings.insert(out.warnings.end(), trace.warnings.begin(), trace.warnings.end());
    AddTraceKernels(trace, path, out);
  }
  return out;
}

}  // namespace sextant
