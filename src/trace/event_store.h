// The compact in-memory form of one profiler trace (one rank): interned strings, CPU events
// per thread, GPU activities per stream, the links between them, iterations, collective
// metadata and device facts. Built by ReadKinetoTrace (kineto_reader.h), read by analyses.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/xla_hlo.h"

namespace sextant {

// Interns strings; id 0 is the empty string. Views stay valid while the pool lives.
class StringPool {
 public:
  StringPool();
  uint32_t Intern(std::string_view text);
  std::string_view Get(uint32_t id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  // One slot of the open-addressing index: a string's id (0 = empty slot: the empty string
  // is never looked up) and 32 bits of its hash, so that most misses skip the comparison.
  struct Slot {
    uint32_t tag = 0;
    uint32_t id = 0;
  };
  void Grow();

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  std::vector<std::string_view> views_;
  std::vector<Slot> slots_;  // a power of two in size, at most half full
};

enum class CpuKind : uint8_t {
  kOp,          // cat cpu_op (2021: Operator)
  kAnnotation,  // cat user_annotation (ProfilerStep#N, nccl:all_reduce, ...)
  kRuntime,     // cat cuda_runtime / cuda_driver (2021: Runtime), hip* names on ROCm
};

enum class GpuKind : uint8_t { kKernel, kMemcpy, kMemset };

struct CpuEvent {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t external_id = -1;
  // Runtime calls: the correlation id that links them to the GPU activities they launched.
  // Ops: the autograd sequence number (args "Sequence number"), shared by a forward op and
  // the backward node autograd made of it. No event has both, so they share one field (the
  // event store is most of a large trace's memory); -1 if not recorded. Read through
  // correlation() and sequence().
  int64_t link_id = -1;
  uint32_t name = 0;
  uint32_t thread = 0;      // index into TraceData::threads
  uint32_t args = 0;        // its argument record: TraceData::Args (0: none recorded)
  int32_t parent = -1;      // enclosing CPU event on the same thread (filled by BuildLinks)
  int32_t collective = -1;  // index into TraceData::collectives
  CpuKind kind = CpuKind::kOp;
  bool launch_flow = false;   // an ac2g flow starts here (Kineto draws it to the GPU activity)
  bool graph_launch = false;  // cudaGraphLaunch/hipGraphLaunch: replays many kernels (BuildLinks)
  int64_t end_ns() const { return ts_ns + dur_ns; }
  int64_t correlation() const { return kind == CpuKind::kRuntime ? link_id : -1; }
  int64_t sequence() const { return kind == CpuKind::kOp ? link_id : -1; }
};
// One per CPU event of a trace (millions in a long profile), and most analyses scan them all:
// growing it is a decision.
static_assert(sizeof(CpuEvent) == 56);

// The argument texts of a CPU event, as interned strings (0 if absent). Only some analyses
// read them, and calls of an op mostly repeat a few shapes: each distinct record is kept once
// (CpuArgsPool) and an event holds its index, instead of five fields in every event.
struct CpuArgs {
  uint32_t input_dims = 0;       // raw JSON text of args "Input Dims" (interned), 0 if absent
  uint32_t input_types = 0;      // raw JSON text of args "Input type"
  uint32_t input_strides = 0;    // raw JSON text of args "Input Strides"
  uint32_t concrete_inputs = 0;  // raw JSON text of args "Concrete Inputs"
  uint32_t launched_kernel = 0;  // runtime calls: args "kernel", the kernel's name (ROCm)
  bool operator==(const CpuArgs&) const = default;
};

// Interns CpuArgs records; id 0 is the record without arguments.
class CpuArgsPool {
 public:
  CpuArgsPool();
  uint32_t Intern(const CpuArgs& args);
  const CpuArgs& Get(uint32_t id) const { return records_[id]; }
  size_t size() const { return records_.size(); }

 private:
  void Grow();

  std::vector<CpuArgs> records_;
  std::vector<uint32_t> slots_;  // record ids by hash (0 = empty slot): a power of two, half full
};

struct GpuEvent {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t stream = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
  int64_t bytes = -1;  // memcpy/memset size when recorded
  uint32_t name = 0;
  int32_t device = 0;
  int32_t collective = -1;  // metadata on the kernel itself, or inherited from its launcher
  int32_t launcher = -1;    // index of the runtime CpuEvent that launched it (BuildLinks)
  int32_t op = -1;          // innermost cpu_op enclosing the launcher (BuildLinks)
  GpuKind kind = GpuKind::kKernel;
  bool own_collective = false;  // `collective` was recorded on the kernel, not its launcher
  int64_t end_ns() const { return ts_ns + dur_ns; }
};

// Collective arguments recorded by PyTorch on record_param_comms ops and NCCL/RCCL kernels.
struct CollectiveMeta {
  uint32_t name = 0;  // "allreduce", "allgather", "_allgather_base", ...
  uint32_t dtype = 0;
  uint32_t pg_name = 0;
  uint32_t pg_desc = 0;
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int64_t group_size = -1;
  int64_t seq = -1;
  uint64_t comms_id = 0;  // may exceed INT64_MAX
  bool has_comms_id = false;
  // As recorded (a string such as "[0, 1, 2, 3]" or a JSON list's compact text); 0 if absent.
  uint32_t pg_ranks = 0;
  uint32_t in_split = 0;
  uint32_t out_split = 0;
};

struct ThreadInfo {
  int64_t pid = 0;
  int64_t tid = 0;
};

struct Iteration {
  int64_t step = -1;  // N of ProfilerStep#N
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

// A Python frame that reruns forward ops during backward (activation checkpointing).
struct RecomputeRegion {
  uint32_t thread = 0;  // index into TraceData::threads
  int64_t ts_ns = 0;
  int64_t end_ns = 0;
};

// One device activity of an XLA profile (XPlane) as TraceLens's JAX report sees it through
// xprof's trace viewer: its track, exact times, the XLA op (HLO instruction) that ran it and
// that instruction's printed operands (trace/xla_hlo.h), kept once per trace in
// TraceData::xla_hlo. One per device event (millions in a long profile): names are interned.
struct XlaActivity {
  int64_t pid = 0;             // 1 + the device plane's id
  int64_t tid = 0;             // the line's display id, else its id
  int64_t ts_ps = 0;           // absolute
  int64_t dur_ps = 0;          // at least 1 ps, as xprof writes it
  int64_t launch_ps = -1;      // the host event with the same correlation id (absolute); -1 if none
  int64_t launch_end_ps = -1;  // where that host event (the launch call) ends
  uint32_t name = 0;           // xprof's event name (interned)
  uint32_t hlo_op = 0;         // the hlo_op stat (interned), 0 ("") if none
  uint32_t hlo_module = 0;     // the hlo_module stat (interned)
  int32_t hlo = -1;  // index into TraceData::xla_hlo: the instruction, if found in its module's HLO
  GpuKind kind = GpuKind::kKernel;
  bool hlo_found() const { return hlo >= 0; }
};
static_assert(sizeof(XlaActivity) <= 72);

struct TraceData {
  std::string path;
  int64_t rank = -1;  // distributedInfo.rank, -1 if absent
  int64_t world_size = -1;
  std::string device_name;   // deviceProperties[0].name
  int64_t warp_size = 0;     // 64 on AMD GPUs, 32 on NVIDIA
  int64_t base_time_ns = 0;  // baseTimeNanoseconds (0 for absolute-time traces)
  // Whether base_time_ns plus a timestamp is a time another file's can be compared with:
  // not in an XPlane profile (its clock is the profiler's own) nor in a Kineto file cut short
  // before its baseTimeNanoseconds (written at the end of the file).
  bool clock_comparable = true;
  bool rocm = false;  // hip* runtime names or warp size 64

  StringPool strings;
  std::vector<ThreadInfo> threads;
  std::vector<CpuEvent> cpu;
  CpuArgsPool cpu_args;  // the argument records CpuEvent::args refers to
  std::vector<GpuEvent> gpu;
  std::vector<CollectiveMeta> collectives;
  std::vector<Iteration> iterations;
  std::vector<RecomputeRegion> recompute_regions;
  // XLA profiles only: every activity of this device plane, in the plane's line order.
  std::vector<XlaActivity> xla;
  // The instructions `xla` refers to, once each, shared with the file's other devices.
  std::vector<std::shared_ptr<const HloInstructionText>> xla_hlo;
  int64_t xla_pid = -1;  // 1 + the device plane's id (TraceLens's gpu_pid)
  // Profiler metadata ('M' events): process_name and process_labels per pid, thread_name per
  // (pid, tid), as interned strings. Kineto writes "python3" / "CPU" / "thread 25286
  // (python3)"; traces without metadata leave them empty.
  std::map<int64_t, uint32_t> process_names;
  std::map<int64_t, uint32_t> process_labels;
  std::map<std::pair<int64_t, int64_t>, uint32_t> thread_names;

  // Complete ('X') events by category that the reader does not analyse (MTIA, CUPTI range
  // counters, ...): at most 64 categories.
  std::map<std::string, size_t> unread_categories;
  bool has_launch_flows = false;        // the trace has CPU->GPU flow events at all
  size_t graph_kernels_attributed = 0;  // graph-replayed kernels given a captured op

  size_t input_bytes = 0;        // decompressed JSON size
  size_t total_events = 0;       // every element of traceEvents, kept or not
  size_t events_with_phase = 0;  // of those, the ones with a "ph" (every real trace event)
  size_t chunks = 0;             // simdjson passes over the event array (1 unless read in chunks)
  bool truncated = false;
  // A text cut short and read up to its last complete event: where that event ends (bytes of
  // the decompressed text); 0 otherwise, or when the cut could not be placed.
  size_t cut_short_at = 0;
  std::vector<std::string> warnings;

  std::string_view Name(uint32_t id) const { return strings.Get(id); }
  const CpuArgs& Args(const CpuEvent& ev) const { return cpu_args.Get(ev.args); }
  // The metadata names of a thread (index into `threads`) and of its process; "" if unnamed.
  std::string_view ThreadName(uint32_t thread) const;
  std::string_view ProcessName(uint32_t thread) const;
  std::string_view ProcessLabel(uint32_t thread) const;
};

// A test of a name (is this kernel a collective, has this op a perf model), made once per
// distinct name: a flag per string id, where a hash map looked up per event costs more than
// the test itself over a million events.
class NameTest {
 public:
  NameTest(const TraceData& trace, bool (*test)(std::string_view))
      : trace_(trace), test_(test), flags_(trace.strings.size(), -1) {}
  bool operator()(uint32_t name) {
    int8_t& flag = flags_[name];
    if (flag < 0) flag = test_(trace_.Name(name)) ? 1 : 0;
    return flag == 1;
  }

 private:
  const TraceData& trace_;
  bool (*test_)(std::string_view);
  std::vector<int8_t> flags_;
};

// Sorts events, nests CPU events per thread, links runtime calls to GPU activities
// (correlation id, else External id) and GPU activities to their launching cpu_op, attaches
// collective metadata to communication kernels, and collects ProfilerStep#N iterations.
void BuildLinks(TraceData& trace);

// The nearest op above CPU event `idx` (its parent, or the parent's parent, ... skipping
// runtime calls and annotations); -1 when none. Needs BuildLinks's parents.
int32_t EnclosingOp(const TraceData& trace, int32_t idx);

// cudaGraphLaunch / hipGraphLaunch (with or without a version suffix).
bool IsGraphLaunchName(std::string_view name);

// The profiler clock at the trace's first CPU or GPU event (its base time plus the first
// timestamp); INT64_MIN for a trace without events.
int64_t FirstEventClockNs(const TraceData& trace);

// A reader's warning as the user reads it: prefixed with the file it is about, unless it
// already starts with that path (a JSON error located in the file).
std::string WarningAboutFile(const std::string& path, const std::string& warning);

// Ranks of one run start their profilers within seconds of each other; first events further
// apart than this are traces of different runs, whose timelines do not line up.
inline constexpr int64_t kOneRunStartSpreadNs = int64_t{3600} * 1000000000;

}  // namespace sextant
