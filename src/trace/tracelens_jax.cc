#include "trace/tracelens_jax.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <type_traits>

#include "trace/intervals.h"
#include "trace/op_arguments.h"
#include "trace/op_category.h"
#include "trace/perf_sheets.h"
#include "trace/xla_hlo.h"

namespace sextant {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kXlaCategory = "Uncategorized Events/XLA";

std::string_view KindName(GpuKind kind) {
  switch (kind) {
    case GpuKind::kKernel: return "kernel";
    case GpuKind::kMemcpy: return "memcpy";
    case GpuKind::kMemset: return "memset";
  }
  return "kernel";
}

// Python's repr of a tuple of ints, of a tuple of tuples, of a tuple of strings.
std::string PyTuple(const std::vector<int64_t>& v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}
std::string PyTupleOf(const std::vector<std::string>& items) {
  if (items.size() == 1) return "(" + items[0] + ",)";
  std::string out = "(";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? ", " : "") + items[i];
  return out + ")";
}

// Which of TraceLens's JAX perf models prices a kernel (jax_op_mapping.py); "rest": none.
std::string_view PerfModel(const std::vector<std::string>& operands, const std::string& target,
                           std::string_view category) {
  if (operands.empty() || target.empty()) return "rest";
  auto has = [&](std::string_view s) { return target.find(s) != std::string::npos; };
  if ((has("matmul") || has("cublas")) && category == "GEMM") return "jax_gemm";
  if (has("te_fused_attn_forward_ffi")) return "jax_te_fused_attn";
  if (has("te_fused_attn_backward_ffi")) return "jax_te_fused_attn_bwd";
  if ((has("cudnn$convForward") || has("cudnn$convBiasActivationForward")) && category == "Conv")
    return "jax_conv";
  if (has("cudnn$convBackward") && category == "Conv") return "jax_conv_bwd";
  return "rest";
}

// Each group's rows, summed the way pandas' groupby sums (Kahan-compensated, in row order).
double KahanSum(const std::vector<double>& values) {
  double sum = 0, compensation = 0;
  for (double v : values) {
    const double y = v - compensation;
    const double t = sum + y;
    compensation = (t - sum) - y;
    sum = t;
  }
  return sum;
}

// CPython's iteration order of a set of small non-negative ints inserted in `keys` order
// (TraceLens lists its GPU pids as list(set(...))): open addressing over 8 slots, linear
// probes then perturbed steps, resized to 4x the entries when 3/5 full.
std::vector<int64_t> PythonSetOrder(const std::vector<int64_t>& keys) {
  std::vector<int64_t> table(8, -1);
  size_t fill = 0;
  auto insert = [](std::vector<int64_t>& t, int64_t key) {
    const size_t mask = t.size() - 1;
    size_t i = static_cast<size_t>(key) & mask;
    uint64_t perturb = static_cast<uint64_t>(key);
    while (true) {
      const size_t probes = i + 9 <= mask ? 9 : 0;
      for (size_t j = 0; j <= probes; ++j) {
        if (t[i + j] == key) return false;
        if (t[i + j] < 0) {
          t[i + j] = key;
          return true;
        }
      }
      perturb >>= 5;
      i = (i * 5 + 1 + perturb) & mask;
    }
  };
  for (int64_t key : keys) {
    if (key < 0 || !insert(table, key)) continue;
    ++fill;
    if (fill * 5 < (table.size() - 1) * 3) continue;
    size_t size = 8;
    while (size <= fill * 4) size <<= 1;
    std::vector<int64_t> bigger(size, -1);
    for (int64_t k : table)
      if (k >= 0) insert(bigger, k);
    table = std::move(bigger);
  }
  std::vector<int64_t> order;
  for (int64_t k : table)
    if (k >= 0) order.push_back(k);
  return order;
}

// TraceLens reads an instruction's metadata with a pattern that stops at the first character
// outside letters, digits and _ = " ( ) / space @ . - (so without the closing brace), and keeps
// the custom-call target only where it found metadata.
std::string TraceLensMetadata(const std::string& metadata) {
  if (metadata.empty()) return "";
  const std::string text = "metadata={" + metadata;
  for (size_t i = std::string_view("metadata={").size(); i < text.size(); ++i) {
    const char c = text[i];
    const bool allowed = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '=' ||
                         c == '"' || c == '(' || c == ')' || c == '/' || c == ' ' || c == '@' ||
                         c == '.' || c == '-';
    if (!allowed) return text.substr(0, i);
  }
  return text;
}
std::string TraceLensTarget(const std::string& target, const std::string& metadata) {
  return metadata.empty() || target.empty() ? "" : "custom_call_target=\"" + target + "\"";
}

// One row of a device's xla_activities table, read back, with TraceLens's forms of the
// metadata and the custom-call target.
struct Activity {
  std::string name, kind, category, hlo_op, input_dims, input_type, output, metadata,
      custom_call_target;
  std::vector<std::string> operands;
  bool hlo_found = false;
  int64_t pid = 0, tid = 0, ts_ps = 0, dur_ps = 0, launch_ps = -1, input_bytes = 0;
  int64_t uid = 0;
  // The kernel time of the XLA op call this kernel belongs to: its run of consecutive kernels
  // of one hlo_op on one stream (a ROCm convolution is an Im3d2Col and a GEMM).
  double op_call_us = 0;
  double dur_us() const { return static_cast<double>(dur_ps) / 1e6; }
};

// Appends the rows of one device's xla_activities table to `out`: copied from a table still to
// be written, or moved out of one that is not (its rows then freed once read).
template <typename Rows>  // const std::vector<std::vector<Cell>> or std::vector<...>
void ReadActivityRows(const Table& t, Rows& rows, std::vector<Activity>& out) {
  auto col = [&](const char* key) { return static_cast<size_t>(t.ColumnIndex(key)); };
  const size_t pid = col("pid"), tid = col("tid"), name = col("name"), kind = col("kind"),
               ts = col("ts_ps"), dur = col("dur_ps"), launch = col("launch_ps"),
               hlo_op = col("hlo_op"), category = col("op_category"), found = col("hlo_found"),
               dims = col("input_dims"), type = col("input_type"), ops = col("operands"),
               output = col("output"), metadata = col("metadata"),
               target = col("custom_call_target"), bytes = col("total_input_bytes");
  out.reserve(out.size() + rows.size());
  for (auto& row : rows) {
    Activity a;
    auto text = [&](size_t c) -> std::string {
      if constexpr (std::is_const_v<Rows>) {
        return std::get<std::string>(row[c]);
      } else {
        return std::move(std::get<std::string>(row[c]));
      }
    };
    auto integer = [&](size_t c) { return std::get<int64_t>(row[c]); };
    a.pid = integer(pid);
    a.tid = integer(tid);
    a.name = text(name);
    a.kind = text(kind);
    a.ts_ps = integer(ts);
    a.dur_ps = integer(dur);
    a.launch_ps = integer(launch);
    a.hlo_op = text(hlo_op);
    a.category = text(category);
    a.hlo_found = text(found) == "yes";
    a.input_dims = text(dims);
    a.input_type = text(type);
    a.output = text(output);
    const std::string metadata_text = text(metadata);
    a.metadata = TraceLensMetadata(metadata_text);
    a.custom_call_target = TraceLensTarget(text(target), metadata_text);
    a.input_bytes = integer(bytes);
    const std::string joined = text(ops);
    for (size_t p = 0; p < joined.size();) {
      size_t space = joined.find(' ', p);
      if (space == std::string::npos) space = joined.size();
      if (space > p) a.operands.push_back(joined.substr(p, space - p));
      p = space + 1;
    }
    out.push_back(std::move(a));
  }
}

// The activities of a file's devices in TraceLens's order, numbered, with their op call's time.
std::vector<Activity> SortedActivities(std::vector<Activity> out) {
  // xprof's trace viewer lists events by pid, thread, time (longer first on a tie); TraceLens
  // numbers them in that order (its UID). The derived lines xprof adds to a device (XLA Ops,
  // XLA Modules, ...) come after the streams and are not counted here.
  std::stable_sort(out.begin(), out.end(), [](const Activity& a, const Activity& b) {
    return std::tie(a.pid, a.tid, a.ts_ps, b.dur_ps) < std::tie(b.pid, b.tid, b.ts_ps, a.dur_ps);
  });
  for (size_t i = 0; i < out.size(); ++i) out[i].uid = static_cast<int64_t>(i);
  for (size_t begin = 0; begin < out.size();) {
    size_t end = begin + 1;
    while (end < out.size() && !out[begin].hlo_op.empty() && out[end].kind == out[begin].kind &&
           out[end].pid == out[begin].pid && out[end].tid == out[begin].tid &&
           out[end].hlo_op == out[begin].hlo_op) {
      ++end;
    }
    double us = 0;
    for (size_t i = begin; i < end; ++i) us += out[i].dur_us();
    for (size_t i = begin; i < end; ++i) out[i].op_call_us = us;
    begin = end;
  }
  return out;
}

std::vector<Activity> ReadActivities(const std::vector<const RankReport*>& devices) {
  std::vector<Activity> out;
  for (const RankReport* r : devices) {
    for (const Table& t : r->tables)
      if (t.name() == "xla_activities") ReadActivityRows(t, t.rows(), out);
  }
  return SortedActivities(std::move(out));
}

std::vector<Activity> ReadActivities(std::vector<Table> tables) {
  std::vector<Activity> out;
  for (Table& t : tables) {
    std::vector<std::vector<Cell>> rows = t.TakeRows();
    ReadActivityRows(t, rows, out);
  }
  return SortedActivities(std::move(out));
}

// TraceLens's JAX GPU timeline of one device, in picoseconds.
struct JaxTimeline {
  int64_t computation = 0, exposed_comm = 0, exposed_memcpy = 0, busy = 0, idle = 0, total = 0,
          comm = 0, memcpy = 0;
};

bool StartsWithLower(std::string_view name, std::string_view prefix) {
  if (name.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) != prefix[i]) return false;
  return true;
}

// TraceGPUEventAnalyser over one JAX device: the stream threads (tid < 100), copies by name,
// communication by an "nccl" prefix (RCCL's kernels carry it too), the rest computation.
JaxTimeline DeviceTimeline(const std::vector<Activity>& all, int64_t pid) {
  // Picoseconds in intervals.h's arithmetic (it is unit-free).
  std::vector<Interval> comp, comm, mem, every;
  for (const Activity& a : all) {
    if (a.pid != pid || a.tid >= 100) continue;
    const Interval iv{a.ts_ps, a.ts_ps + a.dur_ps};
    every.push_back(iv);
    if (StartsWithLower(a.name, "copy") || StartsWithLower(a.name, "memcpy") ||
        StartsWithLower(a.name, "memset")) {
      mem.push_back(iv);
    } else if (a.name.starts_with("nccl")) {
      comm.push_back(iv);
    } else {
      comp.push_back(iv);
    }
  }
  comp = MergeIntervals(std::move(comp));
  comm = MergeIntervals(std::move(comm));
  mem = MergeIntervals(std::move(mem));
  every = MergeIntervals(std::move(every));
  JaxTimeline t;
  if (every.empty()) return t;
  t.total = every.back().end - every.front().begin;
  t.computation = TotalLength(comp);
  t.comm = TotalLength(comm);
  t.exposed_comm = TotalLength(SubtractIntervals(comm, comp));
  t.memcpy = TotalLength(mem);
  t.exposed_memcpy = TotalLength(SubtractIntervals(SubtractIntervals(mem, comp), comm));
  t.busy = TotalLength(every);
  t.idle = t.total - t.busy;
  return t;
}

std::vector<std::pair<std::string_view, double>> TimelineRows(const JaxTimeline& t) {
  auto d = [](int64_t ps) { return static_cast<double>(ps); };
  return {{"computation_time", d(t.computation)},
          {"exposed_comm_time", d(t.exposed_comm)},
          {"exposed_memcpy_time", d(t.exposed_memcpy)},
          {"busy_time", d(t.busy)},
          {"idle_time", d(t.idle)},
          {"total_time", d(t.total)},
          {"total_comm_time", d(t.comm)},
          {"total_memcpy_time", d(t.memcpy)}};
}

// kernel_details of one kernel: TraceLens's dict of the event and its HLO instruction.
std::string KernelDetails(const Activity& a) {
  std::string operands = "'NA'";
  if (a.hlo_found) {
    operands = "[";
    for (size_t i = 0; i < a.operands.size(); ++i)
      operands += (i > 0 ? ", " : "") + PyString(a.operands[i]);
    operands += "]";
  }
  // xprof prints the duration with %.17g: a whole number reaches Python as an int.
  const double dur = a.dur_us();
  const std::string dur_text = dur == std::floor(dur) && std::abs(dur) < 1e15
                                   ? fmt::format("{}", static_cast<int64_t>(dur))
                                   : PyNumber(dur);
  return fmt::format(
      "[{{'name': {}, 'dur': {}, 'custom_call_target': {}, 'operands': {}, 'outputs': 'NA', "
      "'metadata': {}}}]",
      PyString(a.name), dur_text,
      a.custom_call_target.empty() ? "'NA'" : PyString(a.custom_call_target), operands,
      a.metadata.empty() ? "'NA'" : PyString(a.metadata));
}

std::vector<Column> LauncherColumns(bool with_bytes) {
  std::vector<Column> c = {{"name", "name", 0},
                           {"UID", "UID", 0},
                           {"op category", "op category", 0},
                           {"total_direct_kernel_time", "total_direct_kernel_time", 3},
                           {"direct_kernel_count", "direct_kernel_count", 0},
                           {"pid", "pid", 0},
                           {"tid", "tid", 0},
                           {"Input Dims", "Input Dims", 0},
                           {"Input type", "Input type", 0},
                           {"Input Strides", "Input Strides", 0},
                           {"Concrete Inputs", "Concrete Inputs", 0},
                           {"kernel_details", "kernel_details", 0},
                           {"GPU_kernel_launch_latency", "GPU_kernel_launch_latency", 3}};
  if (with_bytes) c.push_back({"total_input_bytes", "total_input_bytes", 0});
  return c;
}

std::vector<Cell> LauncherRow(const Activity& a, bool with_bytes) {
  const double latency =
      a.launch_ps >= 0 ? static_cast<double>(a.ts_ps - a.launch_ps) / 1e6 : kNoValue;
  std::vector<Cell> row = {
      a.name, a.uid,        a.category,   a.dur_us(),        int64_t{1},        a.pid,
      a.tid,  a.input_dims, a.input_type, std::string("()"), std::string("()"), KernelDetails(a),
      latency};
  if (with_bytes) row.push_back(a.input_bytes);
  return row;
}

// get_df_kernel_launchers_summary (by name) or _by_category: sums, shares of the whole and
// per GPU, largest first (ties in key order).
Table LauncherSummary(const std::string& table_name, const std::string& key_header,
                      const std::vector<std::pair<std::string, const Activity*>>& rows,
                      bool with_us_sum) {
  std::map<std::string, std::vector<double>> groups;
  std::set<int64_t> pids;
  for (const auto& [key, a] : rows) {
    groups[key].push_back(a->dur_us());
    pids.insert(a->pid);
  }
  struct Group {
    std::string key;
    double sum;
    int64_t count;
  };
  std::vector<Group> sorted;
  for (const auto& [key, durations] : groups)
    sorted.push_back({key, KahanSum(durations), static_cast<int64_t>(durations.size())});
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Group& a, const Group& b) { return a.sum > b.sum; });
  double total_ms = 0;
  for (const Group& g : sorted) total_ms += g.sum / 1000;
  std::vector<Column> columns = {{key_header, key_header, 0}};
  if (with_us_sum)
    columns.push_back({"total_direct_kernel_time_sum", "total_direct_kernel_time_sum", 3});
  for (const char* c : {"Count", "total_direct_kernel_time_ms", "Percentage (%)",
                        "Cumulative Percentage (%)", "time ms per gpu"}) {
    columns.push_back({c, c, std::string_view(c) == "Count" ? 0 : 4});
  }
  Table t(table_name, table_name, columns);
  double cumulative = 0;
  const double gpus = static_cast<double>(std::max<size_t>(pids.size(), 1));
  for (const Group& g : sorted) {
    const double ms = g.sum / 1000;
    const double share = total_ms > 0 ? ms / total_ms * 100 : 0;
    cumulative += share;
    std::vector<Cell> row = {g.key};
    if (with_us_sum) row.push_back(g.sum);
    for (Cell c : std::vector<Cell>{g.count, ms, share, cumulative, ms / gpus}) row.push_back(c);
    t.AddRow(std::move(row));
  }
  return t;
}

// The duration statistics of a group as TraceLens's kernel_details_summary writes them
// (numpy: population std).
std::string DetailsSummary(const Activity& first, const std::vector<double>& durations, bool full) {
  const CallStats s = SummarizeCalls(durations);
  const double n = static_cast<double>(s.n);
  const double population_std = s.n > 1 ? s.std * std::sqrt((n - 1) / n) : 0.0;
  auto np = [](double v) { return fmt::format("np.float64({})", PyNumber(v)); };
  std::string head = fmt::format("'name': {}", PyString(first.name));
  if (full) {
    const std::string operands = [&] {
      if (!first.hlo_found) return std::string("'NA'");
      std::string o = "[";
      for (size_t i = 0; i < first.operands.size(); ++i)
        o += (i > 0 ? ", " : "") + PyString(first.operands[i]);
      return o + "]";
    }();
    head +=
        fmt::format(", 'custom_call_target': {}, 'operands': {}, 'outputs': 'NA', 'metadata': {}",
                    first.custom_call_target.empty() ? "'NA'" : PyString(first.custom_call_target),
                    operands, first.metadata.empty() ? "'NA'" : PyString(first.metadata));
  }
  return fmt::format(
      "[{{{}, 'count': {}, 'total_duration_us': {}, 'mean_duration_us': {}, "
      "'median_duration_us': {}, 'std_dev_duration_us': {}, 'min_duration_us': {}, "
      "'max_duration_us': {}}}]",
      head, s.n, np(s.sum), np(s.mean), np(s.median), np(population_std), np(s.min), np(s.max));
}

Table UniqueArgs(const std::vector<const Activity*>& kernels) {
  struct Group {
    const Activity* first;
    std::vector<double> durations;
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (const Activity* a : kernels) {
    const std::string key = a->name + '\x1f' + a->input_dims + '\x1f' + a->input_type;
    auto [it, added] = index.try_emplace(key, groups.size());
    if (added) groups.push_back({a, {}});
    groups[it->second].durations.push_back(a->dur_us());
  }
  std::vector<std::pair<CallStats, size_t>> stats;
  for (size_t g = 0; g < groups.size(); ++g) {
    CallStats s = SummarizeCalls(groups[g].durations);
    s.sum = KahanSum(groups[g].durations);
    s.mean = s.sum / static_cast<double>(s.n);
    stats.push_back({s, g});
  }
  std::stable_sort(stats.begin(), stats.end(), [&](const auto& a, const auto& b) {
    if (a.first.sum != b.first.sum) return a.first.sum > b.first.sum;
    return groups[a.second].first->uid < groups[b.second].first->uid;
  });
  double total = 0;
  for (const auto& s : stats) total += s.first.sum;
  std::vector<Column> columns;
  for (const char* c :
       {"name", "Input Dims", "Input type", "Input Strides", "Concrete Inputs", "operation_count",
        "total_direct_kernel_time_mean", "total_direct_kernel_time_median",
        "total_direct_kernel_time_std", "total_direct_kernel_time_min",
        "total_direct_kernel_time_max", "total_direct_kernel_time_sum", "ex_UID",
        "kernel_details_summary", "Percentage (%)", "Cumulative Percentage (%)"}) {
    columns.push_back({c, c, 3});
  }
  Table t("kernel_launchers_unique_args", "kernel_launchers_unique_args", columns);
  double cumulative = 0;
  for (const auto& [s, g] : stats) {
    const Activity& a = *groups[g].first;
    const double share = total > 0 ? s.sum / total * 100 : 0;
    cumulative += share;
    t.AddRow({a.name, a.input_dims, a.input_type, std::string("()"), std::string("()"), s.n, s.mean,
              s.median, s.std, s.min, s.max, s.sum, a.uid,
              DetailsSummary(a, groups[g].durations, true), share, cumulative});
  }
  return t;
}

int64_t ElementCount(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// op_conv: TraceLens's JAX convolution sheet, one row per convolution and shapes.
Table ConvSheet(const std::vector<const Activity*>& convs) {
  struct Call {
    const Activity* a;
    JaxConvCall conv;
    std::vector<std::string> params;
  };
  std::vector<Call> calls;
  for (const Activity* a : convs) {
    const std::vector<HloShape> in = ParseHloShapes(a->operands);
    const std::vector<HloShape> out = ParseHloShapes({a->output});
    if (in.size() < 2 || out.empty() || in[0].dims.size() < 3 || in[0].dims.size() > 5) continue;
    Call c{a, {}, {}};
    c.conv.backward = PerfModel(a->operands, a->custom_call_target, a->category) == "jax_conv_bwd";
    c.conv.input = in[0].dims;
    c.conv.filter = in[1].dims;
    c.conv.output = out[0].dims;
    c.conv.bias = in.size() == 3;
    const std::string type = in[0].type;
    c.conv.bytes_per_element = type == "f32"                       ? 4
                               : (type == "f16" || type == "bf16") ? 2
                               : type.starts_with("f8")            ? 1
                                                                   : 0;
    // TraceLens's parameters: the kernel window is the filter's spatial dimensions.
    const std::vector<int64_t> window(
        c.conv.filter.begin() + std::min<size_t>(2, c.conv.filter.size()), c.conv.filter.end());
    c.params = {fmt::format("conv{}d", c.conv.input.size() - 2),
                PyTuple(c.conv.input),
                PyTuple(window),
                PyTuple(c.conv.output),
                c.conv.bias ? "True" : "False",
                c.conv.bytes_per_element > 0 ? std::to_string(c.conv.bytes_per_element) : "None",
                "False"};
    calls.push_back(std::move(c));
  }
  std::vector<Column> columns = {{"name", "name", 0}};
  for (const char* p : {"convNd", "input_shape", "filter_shape", "output_shape", "bias",
                        "bytes_per_element", "transposed_conv"}) {
    const std::string h = std::string("param: ") + p;
    columns.push_back({h, h, 0});
  }
  for (const char* c : {"GFLOPS_first",
                        "Data Moved (MB)_first",
                        "FLOPS/Byte_first",
                        "TB/s_mean",
                        "TB/s_median",
                        "TB/s_std",
                        "TB/s_min",
                        "TB/s_max",
                        "TFLOPS/s_mean",
                        "TFLOPS/s_median",
                        "TFLOPS/s_std",
                        "TFLOPS/s_min",
                        "TFLOPS/s_max",
                        "kernel_details__summarize_kernel_stats",
                        "Input Dims_first",
                        "Input type_first",
                        "Kernel Time (µs)_mean",
                        "Kernel Time (µs)_median",
                        "Kernel Time (µs)_std",
                        "Kernel Time (µs)_min",
                        "Kernel Time (µs)_max",
                        "Kernel Time (µs)_sum",
                        "name_count",
                        "UID_first"}) {
    columns.push_back({c, c, 4});
  }
  Table t("op_conv", "op_conv", columns);
  std::map<std::vector<std::string>, std::vector<const Call*>> groups;
  for (const Call& c : calls) {
    std::vector<std::string> key = {c.a->name};
    key.insert(key.end(), c.params.begin(), c.params.end());
    groups[key].push_back(&c);
  }
  struct Row {
    std::vector<Cell> cells;
    double sum;
    int64_t uid;
  };
  std::vector<Row> rows;
  for (const auto& [key, members] : groups) {
    const Call& first = *members.front();
    const double flops = JaxConvFlops(first.conv);
    const double bytes = JaxConvBytes(first.conv);
    std::vector<double> us, tbps, tflops;
    for (const Call* c : members) {
      us.push_back(c->a->dur_us());
      // The op's FLOPs and bytes over the time of all its kernels, not of this one alone.
      const double d = c->a->op_call_us;
      tflops.push_back(d > 0 ? flops / 1e12 / (d / 1e6) : kNoValue);
      tbps.push_back(d > 0 && bytes > 0 ? bytes / 1e12 / (d / 1e6) : kNoValue);
    }
    const CallStats k = SummarizeCalls(us), b = SummarizeCalls(tbps), f = SummarizeCalls(tflops);
    std::vector<Cell> cells = {first.a->name};
    for (const std::string& p : first.params) cells.push_back(p);
    cells.push_back(flops / 1e9);
    cells.push_back(bytes > 0 ? bytes / (1024.0 * 1024.0) : kNoValue);
    cells.push_back(bytes > 0 ? flops / bytes : kNoValue);
    for (const CallStats* s : {&b, &f}) {
      for (double v : {s->mean, s->median, s->std, s->min, s->max}) cells.push_back(v);
    }
    cells.push_back(DetailsSummary(*first.a, us, false));
    cells.push_back(first.a->input_dims);
    cells.push_back(first.a->input_type);
    for (double v :
         {KahanSum(us) / static_cast<double>(k.n), k.median, k.std, k.min, k.max, KahanSum(us)}) {
      cells.push_back(v);
    }
    cells.push_back(k.n);
    cells.push_back(first.a->uid);
    rows.push_back({std::move(cells), KahanSum(us), first.a->uid});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.sum != b.sum ? a.sum > b.sum : a.uid < b.uid;
  });
  for (Row& r : rows) t.AddRow(std::move(r.cells));
  return t;
}

}  // namespace

double JaxConvFlops(const JaxConvCall& c) {
  if (c.filter.size() < 3 || c.output.empty()) return kNoValue;
  // filter [out channels, in channels per group, window...]: each output element is a dot
  // product over in channels x window (one multiply and one add each).
  const double macs_per_output = static_cast<double>(ElementCount(c.filter, 1));
  const double outputs = static_cast<double>(ElementCount(c.output));
  const double forward = 2 * macs_per_output * outputs + (c.bias ? outputs : 0);
  // Backward: the input gradient and the weight gradient each cost the forward's products.
  return c.backward ? 2 * (forward - (c.bias ? outputs : 0)) + (c.bias ? outputs : 0) : forward;
}

double JaxConvBytes(const JaxConvCall& c) {
  if (c.bytes_per_element <= 0) return kNoValue;
  const double elements =
      static_cast<double>(ElementCount(c.input) + ElementCount(c.filter) + ElementCount(c.output)) +
      (c.bias && c.output.size() > 1 ? static_cast<double>(c.output[1]) : 0);
  // Backward reads the output gradient, input and filter and writes both gradients.
  return (c.backward ? 2 : 1) * elements * c.bytes_per_element;
}

Table XlaActivitiesTable(int64_t rank, const TraceData& trace) {
  Table t("xla_activities",
          "XLA device activities (XPlane), with the HLO instruction that ran each kernel",
          {{"rank", "rank", 0},
           {"pid", "pid", 0},
           {"tid", "tid", 0},
           {"name", "name", 0},
           {"kind", "kind", 0},
           {"ts_ps", "start (ps)", 0},
           {"dur_ps", "duration (ps)", 0},
           {"launch_ps", "host launch (ps)", 0},
           {"hlo_op", "XLA op", 0},
           {"hlo_module", "XLA module", 0},
           {"op_category", "op category", 0},
           {"hlo_found", "HLO found", 0},
           {"input_dims", "Input Dims", 0},
           {"input_type", "Input type", 0},
           {"operands", "operands", 0},
           {"output", "output", 0},
           {"metadata", "metadata", 0},
           {"custom_call_target", "custom call target", 0},
           {"total_input_bytes", "input bytes", 0}});
  static const HloInstructionText kNoInstruction;
  for (const XlaActivity& x : trace.xla) {
    const HloInstructionText& hlo = x.hlo_found() ? *trace.xla_hlo[x.hlo] : kNoInstruction;
    const std::vector<std::string>& operand_texts = hlo.operands;
    const std::string name(trace.Name(x.name)), hlo_op(trace.Name(x.hlo_op));
    const std::string category =
        x.kind == GpuKind::kKernel ? std::string(TraceLensJaxCategory(name, hlo_op)) : "";
    // Input Dims and types: every operand shape TraceLens's pattern reads (the first three for
    // Transformer Engine's fused attention); its byte count over all operand shapes.
    std::vector<HloShape> shapes = ParseHloShapes(operand_texts);
    std::string operands;
    for (const std::string& o : operand_texts) operands += (operands.empty() ? "" : " ") + o;
    if (PerfModel(operand_texts, TraceLensTarget(hlo.custom_call_target, hlo.metadata), category)
            .starts_with("jax_te_fused_attn") &&
        shapes.size() > 3) {
      shapes.resize(3);
    }
    std::vector<std::string> dims, types;
    for (const HloShape& s : shapes) {
      dims.push_back(PyTuple(s.dims));
      types.push_back(PyString(s.type));
    }
    int64_t bytes = 0;
    for (const HloShape& s : ParseHloShapes(operand_texts))
      bytes += ElementCount(s.dims) * HloTypeBytes(s.type);
    t.AddRow({rank, x.pid, x.tid, name, std::string(KindName(x.kind)), x.ts_ps, x.dur_ps,
              x.launch_ps, hlo_op, std::string(trace.Name(x.hlo_module)), category,
              std::string(x.hlo_found() ? "yes" : "no"),
              operand_texts.empty() ? "()" : PyTupleOf(dims),
              operand_texts.empty() ? "()" : PyTupleOf(types), operands, hlo.output, hlo.metadata,
              hlo.custom_call_target, bytes});
  }
  return t;
}

namespace {

std::vector<Table> JaxReport(const std::vector<Activity>& all) {
  std::vector<int64_t> pids;  // first appearance in the trace viewer's order: ascending
  for (const Activity& a : all)
    if (pids.empty() || pids.back() != a.pid) pids.push_back(a.pid);
  pids = PythonSetOrder(pids);

  std::vector<Table> out;
  Table timeline("gpu_timeline", "gpu_timeline",
                 {{"type", "type", 0},
                  {"time ms", "time ms", 6},
                  {"percent", "percent", 4},
                  {"gpu_pid", "gpu_pid", 0}});
  std::vector<JaxTimeline> per_gpu;
  for (int64_t pid : pids) {
    per_gpu.push_back(DeviceTimeline(all, pid));
    const double total = static_cast<double>(per_gpu.back().total);
    for (const auto& [type, ps] : TimelineRows(per_gpu.back())) {
      timeline.AddRow({std::string(type), ps / 1e9, total > 0 ? ps / total * 100 : 0.0, pid});
    }
  }
  out.push_back(std::move(timeline));

  Table averages("gpu_events_averages", "gpu_events_averages",
                 {{"type", "type", 0}, {"time ms", "time ms", 6}, {"percent", "percent", 4}});
  if (!per_gpu.empty()) {
    std::vector<double> sums(8, 0.0);
    for (const JaxTimeline& t : per_gpu) {
      const auto rows = TimelineRows(t);
      for (size_t i = 0; i < rows.size(); ++i) sums[i] += rows[i].second;
    }
    const auto names = TimelineRows(per_gpu.front());
    const double n = static_cast<double>(per_gpu.size());
    const double total = sums[5] / n;
    for (size_t i = 0; i < names.size(); ++i) {
      const double avg = sums[i] / n;
      averages.AddRow(
          {std::string(names[i].first), avg / 1e9, total > 0 ? avg / total * 100 : 0.0});
    }
  }
  out.push_back(std::move(averages));

  std::vector<const Activity*> kernels;
  for (const Activity& a : all)
    if (a.kind == "kernel") kernels.push_back(&a);
  Table launchers("kernel_launchers", "kernel_launchers", LauncherColumns(false));
  for (const Activity* a : kernels) launchers.AddRow(LauncherRow(*a, false));
  out.push_back(std::move(launchers));

  std::vector<std::pair<std::string, const Activity*>> by_name, by_category, xla_by_base;
  std::vector<const Activity*> xla;
  for (const Activity* a : kernels) {
    by_name.push_back({a->name, a});
    by_category.push_back({a->category, a});
    if (a->category == kXlaCategory) {
      xla.push_back(a);
      // "loop_slice_fusion_202" -> "loop_slice_fusion_": TraceLens drops every digit.
      std::string base;
      for (char c : a->name)
        if (!std::isdigit(static_cast<unsigned char>(c))) base += c;
      xla_by_base.push_back({base, a});
    }
  }
  out.push_back(LauncherSummary("kernel_launchers_summary", "name", by_name, true));
  out.push_back(
      LauncherSummary("kernel_launchers_summary_by_category", "op category", by_category, false));
  out.push_back(UniqueArgs(kernels));
  Table xla_perf("df_xla_perf", "df_xla_perf", LauncherColumns(true));
  for (const Activity* a : xla) xla_perf.AddRow(LauncherRow(*a, true));
  out.push_back(std::move(xla_perf));
  out.push_back(LauncherSummary("xla_summary", "name", xla_by_base, true));

  std::vector<const Activity*> convs;
  for (const Activity* a : kernels) {
    const std::string_view model = PerfModel(a->operands, a->custom_call_target, a->category);
    if (a->category == "Conv" && (model == "jax_conv" || model == "jax_conv_bwd"))
      convs.push_back(a);
  }
  if (!convs.empty()) out.push_back(ConvSheet(convs));
  return out;
}

}  // namespace

std::vector<Table> TraceLensJaxTables(const std::vector<const RankReport*>& devices) {
  return JaxReport(ReadActivities(devices));
}

std::vector<Table> TraceLensJaxTablesFromActivities(std::vector<Table> activities) {
  return JaxReport(ReadActivities(std::move(activities)));
}

}  // namespace sextant
