#include "trace/xplane_reader.h"

#include <google/protobuf/stubs/logging.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <set>
#include <unordered_map>

#include "trace/protobuf_wire_scan.h"
#include "trace/xla_hlo.h"
#include "util/error.h"
#include "xplane.pb.h"

namespace sextant {
namespace {

constexpr std::string_view kGpuPlanePrefix = "/device:GPU:";
constexpr std::string_view kHostMetadataPlane = "/host:metadata";

// As in the Kineto reader: no activity lasts 2^40 ns, no timestamp reaches 2^61 ns, so sums
// over millions of hostile events cannot overflow.
constexpr int64_t kMaxDurationPs = (int64_t{1} << 40) * 1000;
constexpr int64_t kMaxTimestampNs = int64_t{1} << 61;

int64_t PsToNs(int64_t ps) { return ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000); }

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if ((text[i] | 0x20) != prefix[i]) return false;
  }
  return true;
}

// "Stream #7(Kernel)" -> 7; other line names keep the line id.
int64_t StreamOf(const xplane::XLine& line) {
  std::string_view name = line.name();
  size_t hash = name.find('#');
  if (name.starts_with("Stream") && hash != std::string_view::npos) {
    int64_t id = 0;
    auto [ptr, ec] = std::from_chars(name.data() + hash + 1, name.data() + name.size(), id);
    if (ec == std::errc() && ptr != name.data() + hash + 1) return id;
  }
  return line.id();
}

// A plane's stats by name, with ref values resolved to the referenced stat's name.
class PlaneStats {
 public:
  explicit PlaneStats(const xplane::XPlane& plane) : plane_(plane) {
    for (const auto& [id, meta] : plane.stat_metadata()) names_[id] = meta.name();
  }
  std::string_view Name(const xplane::XStat& stat) const { return Lookup(stat.metadata_id()); }
  std::string Text(const xplane::XStat& stat) const {
    switch (stat.value_case()) {
      case xplane::XStat::kStrValue: return stat.str_value();
      case xplane::XStat::kRefValue:
        return std::string(Lookup(static_cast<int64_t>(stat.ref_value())));
      case xplane::XStat::kInt64Value: return std::to_string(stat.int64_value());
      case xplane::XStat::kUint64Value: return std::to_string(stat.uint64_value());
      case xplane::XStat::kDoubleValue: return fmt::format("{}", stat.double_value());
      default: return "";
    }
  }
  bool Int(const xplane::XStat& stat, int64_t* out) const {
    if (stat.value_case() == xplane::XStat::kInt64Value) {
      *out = stat.int64_value();
    } else if (stat.value_case() == xplane::XStat::kUint64Value &&
               stat.uint64_value() <= static_cast<uint64_t>(INT64_MAX)) {
      *out = static_cast<int64_t>(stat.uint64_value());
    } else {
      return false;
    }
    return true;
  }
  // "AMD GPU (compute capability 9.4)": a profile names the vendor and architecture only.
  std::string DeviceName() const {
    std::string vendor, major, minor;
    for (const auto& s : plane_.stats()) {
      std::string_view n = Name(s);
      if (n == "device_vendor") vendor = Text(s);
      if (n == "compute_cap_major") major = Text(s);
      if (n == "compute_cap_minor") minor = Text(s);
    }
    if (vendor.empty() && major.empty()) return "";
    std::string name = (vendor.empty() ? std::string("GPU") : vendor + " GPU");
    if (!major.empty()) {
      name += fmt::format(" (compute capability {}{}{})", major, minor.empty() ? "" : ".", minor);
    }
    return name;
  }

 private:
  std::string_view Lookup(int64_t id) const {
    auto it = names_.find(id);
    return it == names_.end() ? std::string_view() : std::string_view(it->second);
  }
  const xplane::XPlane& plane_;
  std::unordered_map<int64_t, std::string> names_;
};

// What the host planes say of the device events: the HLO modules ("/host:metadata", a
// serialized xla.HloProto per compiled program) and when the host launched each correlation id
// ("/host:CPU").
struct HostFacts {
  HloModules hlo;
  // correlation id -> the host launch call's start and end, absolute ps
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> launch_ps;
  // Modules left out for the size of their text, one line each (the first few).
  std::vector<std::string> warnings;
};

// `blobs`: where each bytes value of the host metadata's stats lies in the file `path`.
HostFacts ReadHostPlanes(const xplane::XSpace& space,
                         const std::unordered_map<std::string_view, size_t>& blobs,
                         const std::string& path) {
  HostFacts facts;
  size_t refused_modules = 0;
  for (const xplane::XPlane& plane : space.planes()) {
    PlaneStats stats(plane);
    if (plane.name() == kHostMetadataPlane) {
      for (const auto& [id, meta] : plane.event_metadata()) {
        for (const xplane::XStat& s : meta.stats()) {
          if (stats.Name(s) != "Hlo Proto" || s.value_case() != xplane::XStat::kBytesValue)
            continue;
          const auto at = blobs.find(s.bytes_value());
          const SourceLocation where{path, -1, -1,
                                     at == blobs.end() ? -1 : static_cast<int64_t>(at->second)};
          std::string refused;
          if (facts.hlo.Add(s.bytes_value(), &refused, where) && !refused.empty()) {
            if (++refused_modules <= kMaxXPlaneWarningsOfOneKind)
              facts.warnings.push_back(std::move(refused));
          }
        }
      }
    } else if (plane.name() == "/host:CPU") {
      for (const xplane::XLine& line : plane.lines()) {
        const int64_t line_ps =
            std::clamp<int64_t>(line.timestamp_ns(), -kMaxTimestampNs, kMaxTimestampNs) * 1000;
        for (const xplane::XEvent& ev : line.events()) {
          for (const xplane::XStat& s : ev.stats()) {
            int64_t id = 0;
            if (stats.Name(s) == "correlation_id" && stats.Int(s, &id)) {
              const int64_t start =
                  line_ps + std::clamp<int64_t>(ev.offset_ps(), 0, kMaxDurationPs);
              facts.launch_ps[id] = {
                  start, start + std::clamp<int64_t>(ev.duration_ps(), 0, kMaxDurationPs)};
            }
          }
        }
      }
    }
  }
  if (refused_modules > kMaxXPlaneWarningsOfOneKind) {
    facts.warnings.push_back(
        fmt::format("... and {} more XLA modules left out for the size of their HLO",
                    refused_modules - kMaxXPlaneWarningsOfOneKind));
  }
  return facts;
}

// A profile's size budget (xplane_reader.h), checked on the XSpace wire format before protobuf
// builds anything: every message protobuf would build is counted, and the events of GPU
// planes. A malformed message is refused at its byte offset. The scan also notes where each
// bytes value of the host metadata's events lies (the modules' "Hlo Proto"s), so that a module
// refused later is located in the file.
class WireBudget final : public ProtobufWireScan {
 public:
  WireBudget(const InputText& input, std::string_view bytes, const std::string& path)
      : ProtobufWireScan(bytes, kSchema),
        input_(input),
        path_(path),
        max_gpu_events_(kFreeXPlaneGpuEvents + bytes.size() / kMinBytesPerXPlaneGpuEvent),
        max_messages_(kFreeXPlaneMessages + bytes.size() / kMinBytesPerXPlaneMessage) {}

  void Check() { Walk(kSpace, 0, bytes().size()); }

  // The offset in the file of each bytes value of a "/host:metadata" event's stats, by its
  // contents (the first, of equal ones).
  const std::unordered_map<std::string_view, size_t>& host_blobs() const { return host_blobs_; }

 private:
  enum Type {
    kSpace,
    kPlane,
    kLine,
    kEvent,
    kStat,
    kEventMetaEntry,
    kStatMetaEntry,
    kEventMeta,
    kStatMeta,
  };
  static constexpr int kScalar = kWireScalar;
  static constexpr int kCountedString = kWireCountedString;
  static constexpr WireSchemaField kSchema[] = {
      {kSpace, 1, 2, kPlane, "planes"},
      {kSpace, 2, 2, kCountedString, "errors"},
      {kSpace, 3, 2, kCountedString, "warnings"},
      {kSpace, 4, 2, kCountedString, "hostnames"},
      {kPlane, 1, 0, kScalar, "id"},
      {kPlane, 2, 2, kScalar, "name"},
      {kPlane, 3, 2, kLine, "lines"},
      {kPlane, 4, 2, kEventMetaEntry, "event_metadata"},
      {kPlane, 5, 2, kStatMetaEntry, "stat_metadata"},
      {kPlane, 6, 2, kStat, "stats"},
      {kLine, 1, 0, kScalar, "id"},
      {kLine, 10, 0, kScalar, "display_id"},
      {kLine, 2, 2, kScalar, "name"},
      {kLine, 11, 2, kScalar, "display_name"},
      {kLine, 3, 0, kScalar, "timestamp_ns"},
      {kLine, 9, 0, kScalar, "duration_ps"},
      {kLine, 4, 2, kEvent, "events"},
      {kEvent, 1, 0, kScalar, "metadata_id"},
      {kEvent, 2, 0, kScalar, "offset_ps"},
      {kEvent, 5, 0, kScalar, "num_occurrences"},
      {kEvent, 3, 0, kScalar, "duration_ps"},
      {kEvent, 4, 2, kStat, "stats"},
      {kStat, 1, 0, kScalar, "metadata_id"},
      {kStat, 2, 1, kScalar, "double_value"},
      {kStat, 3, 0, kScalar, "uint64_value"},
      {kStat, 4, 0, kScalar, "int64_value"},
      {kStat, 5, 2, kScalar, "str_value"},
      {kStat, 6, 2, kScalar, "bytes_value"},
      {kStat, 7, 0, kScalar, "ref_value"},
      {kEventMetaEntry, 1, 0, kScalar, "key"},
      {kEventMetaEntry, 2, 2, kEventMeta, "value"},
      {kStatMetaEntry, 1, 0, kScalar, "key"},
      {kStatMetaEntry, 2, 2, kStatMeta, "value"},
      {kEventMeta, 1, 0, kScalar, "id"},
      {kEventMeta, 2, 2, kScalar, "name"},
      {kEventMeta, 4, 2, kScalar, "display_name"},
      {kEventMeta, 3, 2, kScalar, "metadata"},
      {kEventMeta, 5, 2, kStat, "stats"},
      {kEventMeta, 6, 0, kScalar, "child_id"},
      {kEventMeta, 6, 2, kScalar, "child_id"},  // packed
      {kStatMeta, 1, 0, kScalar, "id"},
      {kStatMeta, 2, 2, kScalar, "name"},
      {kStatMeta, 3, 2, kScalar, "description"},
  };

  SourceLocation At(size_t offset) const {
    return SourceLocation{path_, -1, -1, static_cast<int64_t>(offset)};
  }

  [[noreturn]] void Malformed(size_t offset) const override {
    ThrowUserError(At(offset), Key(),
                   input_.truncated()
                       ? "XPlane profile cut short: " + input_.truncation_reason()
                       : std::string("not a valid XPlane profile (XSpace protobuf): the message "
                                     "is malformed or cut short"));
  }

  void Count(size_t offset) override {
    if (!counting_ || ++messages_ <= max_messages_) return;
    ThrowUserError(
        At(offset), Key(),
        fmt::format("XPlane profile of {} bytes holds more than {} protobuf messages "
                    "(planes, lines, events, stats, metadata, unknown fields): at "
                    "most {} plus one per {} bytes of the file; real profiles take "
                    "10 or more bytes per message",
                    bytes().size(), max_messages_, kFreeXPlaneMessages, kMinBytesPerXPlaneMessage));
  }

  void Begin(int type, size_t begin, size_t end) override {
    if (type != kPlane) return;
    // The plane's name first (protobuf writes it before the lines; the last one counts).
    std::string_view name;
    counting_ = false;
    for (size_t pos = begin; pos < end;) {
      Field f = Next(pos, end);
      if (f.number == 2 && f.wire == 2) name = bytes().substr(f.begin, f.end - f.begin);
    }
    counting_ = true;
    plane_name_ = name;
  }
  void End(int type) override {
    if (type == kPlane) plane_name_ = {};
  }

  void Entered(const WireSchemaField& field, size_t index, size_t offset, size_t begin,
               size_t end) override {
    if (field.type == kPlane && index >= kMaxXPlanePlanes) {
      ThrowUserError(At(offset), Key(),
                     fmt::format("XPlane profile with more than {} planes, where a host writes "
                                 "one per device it profiles",
                                 kMaxXPlanePlanes));
    }
    if (field.type == kEvent && plane_name_.starts_with(kGpuPlanePrefix) &&
        ++gpu_events_ > max_gpu_events_) {
      ThrowUserError(
          At(offset), Key(),
          fmt::format("XPlane profile of {} bytes holds more than {} events on its GPU planes "
                      "(this one \"{}\"): at most {} plus one per {} bytes of the file; real "
                      "device events take 27 or more bytes each",
                      bytes().size(), max_gpu_events_, ShortText(plane_name_, 40),
                      kFreeXPlaneGpuEvents, kMinBytesPerXPlaneGpuEvent));
    }
    if (field.type == kStat && field.in == kEventMeta && plane_name_ == kHostMetadataPlane) {
      // A stat's value is the last one written (a oneof).
      std::string_view value;
      size_t at = 0;
      counting_ = false;
      for (size_t pos = begin; pos < end;) {
        const Field f = Next(pos, end);
        if (f.number == 6 && f.wire == 2) {
          value = bytes().substr(f.begin, f.end - f.begin);
          at = f.begin;
        }
      }
      counting_ = true;
      if (value.data() != nullptr) host_blobs_.try_emplace(value, at);
    }
  }

  const InputText& input_;
  const std::string& path_;
  const size_t max_gpu_events_;
  const size_t max_messages_;
  size_t messages_ = 0;
  size_t gpu_events_ = 0;
  bool counting_ = true;         // false while a message is scanned ahead of its walk
  std::string_view plane_name_;  // of the plane being scanned
  std::unordered_map<std::string_view, size_t> host_blobs_;
};

// What a GPU plane's tables lack, one warning of each kind (empty if none): the file's
// warnings of one kind are collapsed once every GPU is read.
enum GpuWarningKind { kNoHlo, kNoLaunches, kTimesClamped, kGpuWarningKinds };
using GpuWarnings = std::array<std::string, kGpuWarningKinds>;
// What the line counting the GPUs past kMaxXPlaneWarningsOfOneKind says of each kind.
constexpr std::array<std::string_view, kGpuWarningKinds> kGpuWarningSummaries = {
    "kernels of XLA ops whose module's HLO the profile does not hold",
    "no host launch event carries the kernels' correlation ids",
    "events with a negative or over-long start offset or duration, clamped",
};

TraceData ReadGpuPlane(const xplane::XPlane& plane, int64_t ordinal, const std::string& path,
                       size_t input_bytes, const HostFacts& host, GpuWarnings& warnings) {
  TraceData t;
  t.xla_pid = plane.id() + 1;
  t.clock_comparable = false;  // not the epoch-based clock of Kineto's baseTimeNanoseconds
  t.path = path;
  t.rank = ordinal;
  t.input_bytes = input_bytes;
  PlaneStats stats(plane);
  t.device_name = stats.DeviceName();
  t.rocm = t.device_name.starts_with("AMD");
  t.warp_size = t.rocm ? 64 : 32;
  std::unordered_map<int64_t, uint32_t> event_names;
  std::unordered_map<int64_t, uint32_t> display_names;  // xprof's event names
  for (const auto& [id, meta] : plane.event_metadata()) {
    event_names[id] = t.strings.Intern(meta.name().empty() ? meta.display_name() : meta.name());
    display_names[id] =
        t.strings.Intern(meta.display_name().empty() ? meta.name() : meta.display_name());
  }
  const uint32_t unnamed = t.strings.Intern("(unnamed)");
  std::unordered_map<const HloInstructionText*, int32_t> hlo_index;  // into t.xla_hlo
  size_t plane_events = 0;
  for (const xplane::XLine& line : plane.lines()) plane_events += line.events_size();
  t.gpu.reserve(plane_events);
  t.xla.reserve(plane_events);
  std::unordered_map<int64_t, uint32_t> op_thread;  // stream -> thread of its XLA ops
  size_t out_of_range = 0;  // events with a negative or impossibly long offset or duration
  int64_t next_op_id = 0;
  for (const xplane::XLine& line : plane.lines()) {
    const int64_t stream = StreamOf(line);
    const int64_t line_ns =
        std::clamp<int64_t>(line.timestamp_ns(), -kMaxTimestampNs, kMaxTimestampNs);
    // xprof's trace viewer: a thread per line, numbered by its display id (else its id).
    const int64_t tid =
        static_cast<uint32_t>(line.display_id() != 0 ? line.display_id() : line.id());
    // In time order, so that the kernels of one XLA op call (a convolution's Im3d2Col and GEMM,
    // a custom call's kernels) are consecutive on their stream.
    std::vector<const xplane::XEvent*> events;
    for (const xplane::XEvent& ev : line.events()) events.push_back(&ev);
    std::stable_sort(events.begin(), events.end(),
                     [](const auto* a, const auto* b) { return a->offset_ps() < b->offset_ps(); });
    std::string run_hlo_op;  // the XLA op of the run of kernels the last kernel belongs to
    int64_t run_op_id = -1;
    for (const xplane::XEvent* event : events) {
      const xplane::XEvent& ev = *event;
      ++t.total_events;
      const int64_t offset_ps = std::clamp<int64_t>(ev.offset_ps(), 0, kMaxDurationPs);
      const int64_t dur_ps = std::clamp<int64_t>(ev.duration_ps(), 0, kMaxDurationPs);
      if (offset_ps != ev.offset_ps() || dur_ps != ev.duration_ps()) ++out_of_range;
      GpuEvent g;
      // Both ends rounded to the nanosecond, so unions of touching events stay exact.
      g.ts_ns = line_ns + PsToNs(offset_ps);
      g.dur_ns = line_ns + PsToNs(offset_ps + dur_ps) - g.ts_ns;
      g.stream = stream;
      g.device = static_cast<int32_t>(ordinal);
      auto name_it = event_names.find(ev.metadata_id());
      g.name = name_it != event_names.end() ? name_it->second : unnamed;
      std::string_view name = t.Name(g.name);
      // TraceLens's JaxGPUEventAnalyser: names starting "copy"/"memcpy" are copies.
      if (StartsWithNoCase(name, "memcpy") || StartsWithNoCase(name, "copy")) {
        g.kind = GpuKind::kMemcpy;
      } else if (StartsWithNoCase(name, "memset")) {
        g.kind = GpuKind::kMemset;
      }
      std::string hlo_op, hlo_module;
      for (const xplane::XStat& s : ev.stats()) {
        std::string_view stat = stats.Name(s);
        if (stat == "correlation_id") {
          stats.Int(s, &g.correlation);
        } else if (stat == "hlo_module") {
          hlo_module = stats.Text(s);
        } else if (stat == "hlo_op") {
          hlo_op = stats.Text(s);
        } else if (stat == "bytes_transferred" || stat == "memcpy_bytes") {
          stats.Int(s, &g.bytes);
        }
      }
      XlaActivity x;
      auto display = display_names.find(ev.metadata_id());
      x.name = display != display_names.end() ? display->second : unnamed;
      x.pid = t.xla_pid;
      x.tid = tid;
      x.ts_ps = line_ns * 1000 + offset_ps;
      x.dur_ps = std::max<int64_t>(dur_ps, 1);
      x.kind = g.kind;
      if (auto l = host.launch_ps.find(g.correlation);
          g.correlation >= 0 && l != host.launch_ps.end())
        std::tie(x.launch_ps, x.launch_end_ps) = l->second;
      x.hlo_op = t.strings.Intern(hlo_op);
      x.hlo_module = t.strings.Intern(hlo_module);
      if (std::shared_ptr<const HloInstructionText> text = host.hlo.Find(hlo_module, hlo_op)) {
        auto [it, added] =
            hlo_index.try_emplace(text.get(), static_cast<int32_t>(t.xla_hlo.size()));
        if (added) t.xla_hlo.push_back(std::move(text));
        x.hlo = it->second;
      }
      t.xla.push_back(std::move(x));
      if (g.kind != GpuKind::kKernel || hlo_op.empty()) {
        run_hlo_op.clear();
      } else if (hlo_op == run_hlo_op) {
        g.external_id = run_op_id;  // the next kernel of the same XLA op call
      } else {
        // The XLA op that ran the kernel stands as its launching op: one zero-length op per
        // call (a run of consecutive kernels of one hlo_op), on a thread per stream (so ops of
        // one stream never overlap), tied to its kernels by a private External id that
        // BuildLinks follows.
        run_hlo_op = hlo_op;
        run_op_id = next_op_id;
        auto [it, added] = op_thread.try_emplace(stream, static_cast<uint32_t>(t.threads.size()));
        if (added) t.threads.push_back({plane.id(), stream});
        CpuEvent op;
        op.ts_ns = g.ts_ns;
        op.dur_ns = 0;
        op.name = t.strings.Intern(hlo_op);
        op.thread = it->second;
        op.kind = CpuKind::kOp;
        op.external_id = next_op_id;
        g.external_id = next_op_id++;
        t.cpu.push_back(op);
      }
      t.gpu.push_back(g);
    }
  }
  // What the tables built on these events lack, said once per device.
  size_t kernels = 0, with_hlo_op = 0, without_hlo = 0, launched = 0;
  std::set<std::string> missing_modules;
  for (const XlaActivity& x : t.xla) {
    if (x.kind != GpuKind::kKernel) continue;
    ++kernels;
    if (x.launch_ps >= 0) ++launched;
    if (x.hlo_op == 0) continue;
    ++with_hlo_op;
    if (!host.hlo.Has(t.Name(x.hlo_module))) {
      ++without_hlo;
      missing_modules.insert(std::string(t.Name(x.hlo_module)));
    }
  }
  if (without_hlo > 0) {
    std::vector<std::string> names;
    for (const std::string& m : missing_modules) {
      if (names.size() == 3) {
        names.push_back("...");
        break;
      }
      names.push_back(ShortText(m));
    }
    warnings[kNoHlo] = fmt::format(
        "GPU {}: {} of {} kernels ran XLA ops of modules whose HLO the profile does not hold "
        "({}: no readable \"Hlo Proto\" in the \"/host:metadata\" plane): their operand shapes are "
        "unknown "
        "(empty Input Dims, no op_conv row)",
        ordinal, without_hlo, with_hlo_op, fmt::join(names, ", "));
  }
  if (kernels > 0 && launched == 0) {
    warnings[kNoLaunches] = fmt::format(
        "GPU {}: no host launch event carries the kernels' correlation ids (\"/host:CPU\" plane "
        "absent or without them): launch delays and GPU_kernel_launch_latency are unknown",
        ordinal);
  }
  if (out_of_range > 0) {
    warnings[kTimesClamped] = fmt::format(
        "GPU {}: {} {} a negative or over-long (> 2^40 ns) start offset or duration, clamped to "
        "[0, 2^40 ns]: the GPU's busy time is not to be trusted",
        ordinal, out_of_range, out_of_range == 1 ? "event has" : "events have");
  }
  BuildLinks(t);
  return t;
}

}  // namespace

bool LooksLikeXPlane(std::string_view head) {
  // 0x0a is also a newline, which JSON may start with: JSON is whitespace then '{' or '['.
  if (head.empty() || head[0] != 0x0a) return false;
  size_t first = head.find_first_not_of(" \t\r\n");
  return first == std::string_view::npos || (head[first] != '{' && head[first] != '[');
}

std::vector<TraceData> ParseXPlane(const InputText& input, const std::string& path) {
  std::string_view bytes = input.text();
  if (bytes.empty()) ThrowUserError(SourceLocation{path}, "", "empty file: not an XPlane profile");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    ThrowUserError(SourceLocation{path}, "",
                   "XPlane profile larger than 2 GiB: protobuf cannot parse it in one piece");
  }
  WireBudget budget(input, bytes, path);
  budget.Check();
  xplane::XSpace space;
  // protobuf logs its own complaints (invalid UTF-8 in a string field) to stderr; the one
  // line below is what the user gets.
  google::protobuf::LogSilencer quiet;
  if (!space.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    ThrowUserError(SourceLocation{path}, "",
                   input.truncated()
                       ? "XPlane profile cut short: " + input.truncation_reason()
                       : std::string("not a valid XPlane profile (XSpace protobuf): the message "
                                     "is malformed or cut short"));
  }
  const HostFacts host = ReadHostPlanes(space, budget.host_blobs(), path);
  std::vector<TraceData> out;
  struct Warned {
    std::vector<size_t> listed;     // the traces given the warning
    size_t more = 0;                // GPUs with it past those
    std::vector<int64_t> ordinals;  // the first of them
  };
  std::array<Warned, kGpuWarningKinds> warned;
  for (const xplane::XPlane& plane : space.planes()) {
    std::string_view name = plane.name();
    if (!name.starts_with(kGpuPlanePrefix)) continue;
    int64_t ordinal = -1;
    std::from_chars(name.data() + kGpuPlanePrefix.size(), name.data() + name.size(), ordinal);
    size_t events = 0;
    for (const auto& line : plane.lines()) events += static_cast<size_t>(line.events_size());
    if (events == 0) continue;
    GpuWarnings w;
    out.push_back(ReadGpuPlane(plane, ordinal, path, bytes.size(), host, w));
    // The first GPUs with a warning of one kind get it; the rest are counted on the last of
    // those.
    for (size_t kind = 0; kind < kGpuWarningKinds; ++kind) {
      if (w[kind].empty()) continue;
      auto& [listed, more, ordinals] = warned[kind];
      if (listed.size() < kMaxXPlaneWarningsOfOneKind) {
        out.back().warnings.push_back(std::move(w[kind]));
        listed.push_back(out.size() - 1);
      } else {
        if (ordinals.size() < 5) ordinals.push_back(ordinal);
        ++more;
      }
    }
  }
  for (size_t kind = 0; kind < kGpuWarningKinds; ++kind) {
    const auto& [listed, more, ordinals] = warned[kind];
    if (more == 0) continue;
    out[listed.back()].warnings.push_back(fmt::format(
        "... and {} more GPU{} ({}{}): {}", more, more == 1 ? "" : "s", fmt::join(ordinals, ", "),
        more > ordinals.size() ? ", ..." : "", kGpuWarningSummaries[kind]));
  }
  if (out.empty()) {
    ThrowUserError(SourceLocation{path}, "",
                   "XPlane profile without GPU events (no /device:GPU:N plane has any)");
  }
  for (const std::string& w : host.warnings) out.front().warnings.push_back(w);
  // What the profiler itself reported, once per file.
  size_t reported = 0;
  for (const auto* list : {&space.warnings(), &space.errors()}) {
    for (const std::string& w : *list) {
      if (reported++ < kMaxXPlaneWarningsOfOneKind)
        out.front().warnings.push_back("profiler: " + ShortText(w, 200));
    }
  }
  if (reported > kMaxXPlaneWarningsOfOneKind) {
    out.front().warnings.push_back(fmt::format("profiler: ... and {} more warnings and errors",
                                               reported - kMaxXPlaneWarningsOfOneKind));
  }
  return out;
}

std::vector<TraceData> ReadXPlane(const std::string& path) {
  return ParseXPlane(InputText::Load(path), path);
}

}  // namespace sextant
