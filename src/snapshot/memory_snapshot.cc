#include "snapshot/memory_snapshot.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "snapshot/pickle_reader.h"
#include "util/error.h"

namespace sextant {

const char* BlockStateName(BlockState state) {
  switch (state) {
    case BlockState::kActiveAllocated: return "active_allocated";
    case BlockState::kActivePendingFree: return "active_pending_free";
    case BlockState::kInactive: return "inactive";
    case BlockState::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* TraceActionName(TraceAction action) {
  switch (action) {
    case TraceAction::kAlloc: return "alloc";
    case TraceAction::kFreeRequested: return "free_requested";
    case TraceAction::kFreeCompleted: return "free_completed";
    case TraceAction::kSegmentAlloc: return "segment_alloc";
    case TraceAction::kSegmentFree: return "segment_free";
    case TraceAction::kSegmentMap: return "segment_map";
    case TraceAction::kSegmentUnmap: return "segment_unmap";
    case TraceAction::kSnapshot: return "snapshot";
    case TraceAction::kOom: return "oom";
    case TraceAction::kUnknown: return "unknown";
  }
  return "unknown";
}

std::vector<int64_t> MemorySnapshot::Devices() const {
  std::set<int64_t> devices;
  for (const auto& s : segments) devices.insert(s.device);
  for (size_t d = 0; d < device_traces.size(); ++d) {
    if (!device_traces[d].empty()) devices.insert(static_cast<int64_t>(d));
  }
  return {devices.begin(), devices.end()};
}

namespace {

TraceAction ParseAction(std::string_view s) {
  if (s == "alloc") return TraceAction::kAlloc;
  if (s == "free_requested") return TraceAction::kFreeRequested;
  if (s == "free_completed") return TraceAction::kFreeCompleted;
  if (s == "segment_alloc") return TraceAction::kSegmentAlloc;
  if (s == "segment_free") return TraceAction::kSegmentFree;
  if (s == "segment_map") return TraceAction::kSegmentMap;
  if (s == "segment_unmap") return TraceAction::kSegmentUnmap;
  if (s == "snapshot") return TraceAction::kSnapshot;
  if (s == "oom") return TraceAction::kOom;
  return TraceAction::kUnknown;
}

BlockState ParseState(std::string_view s) {
  if (s == "active_allocated") return BlockState::kActiveAllocated;
  if (s == "active_pending_free") return BlockState::kActivePendingFree;
  if (s == "inactive") return BlockState::kInactive;
  return BlockState::kUnknown;
}

class Converter {
 public:
  Converter(const PickleDocument& doc, size_t input_bytes, MemorySnapshot& out)
      : doc_(doc),
        out_(out),
        claimed_(doc.containers.size(), 0),
        text_budget_(kBaseTextBudget +
                     kTextBudgetPerInputByte * static_cast<int64_t>(input_bytes)) {
    out_.stacks.emplace_back();  // StackId 0: no frames recorded
  }

  void Convert() {
    PickleValue root = doc_.root;
    // torch.cuda.memory_snapshot() (and PyTorch <= 1.13 _snapshot()) is a bare list of segments.
    if (root.kind == PickleKind::kList) {
      Claim(root);
      const auto& list = doc_.Items(root);
      out_.segments.reserve(list.size());
      for (size_t i = 0; i < list.size(); ++i) ConvertSegment(list[i], fmt::format("[{}]", i));
      return;
    }
    if (root.kind != PickleKind::kDict) {
      Fail("", fmt::format("the top level is a {}, not a dict: not a memory snapshot",
                           PickleKindName(root.kind)));
    }
    const PickleValue* segments = doc_.Find(root, "segments");
    const PickleValue* traces = doc_.Find(root, "device_traces");
    if (!segments && !traces) {
      Fail("", "has neither 'segments' nor 'device_traces': not a memory snapshot");
    }
    if (segments && Claim(*segments)) {
      const auto& list = List(*segments, "segments");
      out_.segments.reserve(list.size());
      for (size_t i = 0; i < list.size(); ++i) {
        ConvertSegment(list[i], fmt::format("segments[{}]", i));
      }
    }
    if (traces && Claim(*traces)) {
      const auto& devices = List(*traces, "device_traces");
      out_.device_traces.resize(devices.size());
      for (size_t d = 0; d < devices.size(); ++d) {
        std::string path = fmt::format("device_traces[{}]", d);
        const auto& entries = List(devices[d], path);
        if (!Claim(devices[d])) continue;  // another device's trace: that device's, not this
        auto& trace = out_.device_traces[d];
        trace.reserve(entries.size());
        for (size_t i = 0; i < entries.size(); ++i) {
          if (Claim(entries[i])) trace.push_back(ConvertEntry(entries[i], d, i));
        }
      }
    }
    if (const PickleValue* settings = doc_.Find(root, "allocator_settings")) {
      if (settings->kind == PickleKind::kDict) {
        const auto& items = doc_.Items(*settings);
        for (size_t i = 0; i + 1 < items.size(); i += 2) {
          std::string key = Render(items[i]);
          std::string value = Render(items[i + 1]);
          Charge(static_cast<int64_t>(key.size() + value.size()), "allocator_settings");
          out_.allocator_settings.emplace_back(std::move(key), std::move(value));
        }
      }
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& key, std::string_view reason) const {
    ThrowUserError(SourceLocation{out_.source}, key, reason);
  }

  // True the first time a segment, block, trace or trace-entry container is met (and for
  // any non-container, which the caller then rejects); false for a repeat, which is tallied.
  bool Claim(PickleValue v) {
    if (!v.IsContainer()) return true;
    if (claimed_[v.index]) {
      ++out_.repeated_references;
      return false;
    }
    claimed_[v.index] = 1;
    return true;
  }

  // Text copied out of the document is bounded: a memo reference can name one long string
  // from millions of small dicts (frames, segments, settings), each copy costing a few input
  // bytes. Real snapshots copy far less text than the file holds.
  static constexpr int64_t kBaseTextBudget = int64_t{64} << 20;
  static constexpr int64_t kTextBudgetPerInputByte = 8;
  void Charge(int64_t bytes, const std::string& path) {
    text_copied_ += bytes;
    if (text_copied_ > text_budget_) {
      Fail(path,
           fmt::format("more than {} bytes of text copied out of a {} byte pickle: memo "
                       "references repeat long strings; not a real allocator snapshot",
                       text_budget_, (text_budget_ - kBaseTextBudget) / kTextBudgetPerInputByte));
    }
  }

  std::string Render(PickleValue v) const {
    if (v.IsText()) return std::string(doc_.Text(v).substr(0, 1 << 16));
    return doc_.Repr(v, 3);
  }

  const std::vector<PickleValue>& List(PickleValue v, const std::string& path) const {
    if (v.kind != PickleKind::kList && v.kind != PickleKind::kTuple) {
      Fail(path, fmt::format("expected a list, found {}", PickleKindName(v.kind)));
    }
    return doc_.Items(v);
  }
  void RequireDict(PickleValue v, const std::string& path) const {
    if (v.kind != PickleKind::kDict) {
      Fail(path, fmt::format("expected a dict, found {}", PickleKindName(v.kind)));
    }
  }
  int64_t Int(PickleValue v, const std::string& path) const {
    if (v.kind == PickleKind::kInt) return v.integer;
    if (v.kind == PickleKind::kBool) return v.boolean ? 1 : 0;
    Fail(path, fmt::format("expected an integer, found {}", PickleKindName(v.kind)));
  }
  // Optional integer key: `fallback` when absent or None.
  int64_t IntKey(PickleValue dict, const char* key, const std::string& path, int64_t fallback) {
    const PickleValue* v = doc_.Find(dict, key);
    if (!v || v->kind == PickleKind::kNone) return fallback;
    return Int(*v, path + "." + key);
  }
  int64_t RequiredIntKey(PickleValue dict, const char* key, const std::string& path) {
    const PickleValue* v = doc_.Find(dict, key);
    if (!v) Fail(path + "." + key, "missing");
    return Int(*v, path + "." + key);
  }
  std::string_view TextKey(PickleValue dict, const char* key) const {
    const PickleValue* v = doc_.Find(dict, key);
    if (!v || !v->IsText()) return {};
    return doc_.Text(*v);
  }
  int64_t Size(PickleValue dict, const char* key, const std::string& path) {
    int64_t v = RequiredIntKey(dict, key, path);
    if (v < 0) Fail(path + "." + key, fmt::format("negative size {}", v));
    return v;
  }

  // Addresses are user-space pointers and sizes real byte counts: both non-negative, their sum
  // representable, and no single size beyond any device (2^48 bytes = 256 TiB). This keeps
  // every later sum of a hostile file's sizes from overflowing.
  void CheckRange(int64_t address, int64_t size, const std::string& path) const {
    constexpr int64_t kMaxSize = int64_t{1} << 48;
    if (address < 0) Fail(path, fmt::format("negative address {}", address));
    if (size < 0 || size > kMaxSize) Fail(path, fmt::format("implausible size {}", size));
    if (address > INT64_MAX - size) Fail(path, "address + size overflows");
  }

  FrameId InternFrame(PickleValue frame, const std::string& path) {
    if (frame.kind == PickleKind::kDict) {
      auto cached = frame_by_container_.find(frame.index);
      if (cached != frame_by_container_.end()) return cached->second;
    } else {
      Fail(path, fmt::format("expected a frame dict, found {}", PickleKindName(frame.kind)));
    }
    std::string_view name = TextKey(frame, "name");
    std::string_view filename = TextKey(frame, "filename");
    const PickleValue* line_value = doc_.Find(frame, "line");
    int64_t line = line_value && line_value->kind == PickleKind::kInt ? line_value->integer : 0;
    std::string key = fmt::format("{}\x1f{}\x1f{}", name, filename, line);
    Charge(static_cast<int64_t>(key.size()), path);
    auto [it, inserted] = frame_by_content_.emplace(key, static_cast<FrameId>(out_.frames.size()));
    if (inserted) {
      Charge(static_cast<int64_t>(key.size()), path);
      out_.frames.push_back(StackFrame{std::string(name), std::string(filename), line});
    }
    frame_by_container_.emplace(frame.index, it->second);
    return it->second;
  }

  StackId InternStack(const PickleValue* frames, const std::string& path) {
    if (!frames || frames->kind == PickleKind::kNone) return 0;
    auto cached = stack_by_container_.find(frames->index);
    if (frames->IsContainer() && cached != stack_by_container_.end()) return cached->second;
    const auto& list = List(*frames, path);
    if (list.empty()) return 0;
    std::vector<FrameId> ids;
    ids.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      ids.push_back(InternFrame(list[i], path));
    }
    std::string key(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(FrameId));
    auto [it, inserted] =
        stack_by_content_.emplace(std::move(key), static_cast<StackId>(out_.stacks.size()));
    if (inserted) out_.stacks.push_back(std::move(ids));
    stack_by_container_.emplace(frames->index, it->second);
    return it->second;
  }

  void ConvertSegment(PickleValue v, const std::string& path) {
    RequireDict(v, path);
    if (!Claim(v)) return;
    SnapshotSegment s;
    s.device = IntKey(v, "device", path, 0);
    if (s.device < 0 || s.device > 4096)
      Fail(path + ".device", fmt::format("bad device {}", s.device));
    s.address = RequiredIntKey(v, "address", path);
    s.total_size = Size(v, "total_size", path);
    CheckRange(s.address, s.total_size, path);
    s.allocated_size = IntKey(v, "allocated_size", path, 0);
    s.active_size = IntKey(v, "active_size", path, 0);
    s.requested_size = IntKey(v, "requested_size", path, 0);
    s.stream = IntKey(v, "stream", path, 0);
    s.segment_type = std::string(TextKey(v, "segment_type"));
    Charge(static_cast<int64_t>(s.segment_type.size()), path + ".segment_type");
    if (const PickleValue* e = doc_.Find(v, "is_expandable")) {
      s.is_expandable =
          e->kind == PickleKind::kBool ? e->boolean : Int(*e, path + ".is_expandable") != 0;
    }
    const PickleValue* blocks = doc_.Find(v, "blocks");
    if (blocks && Claim(*blocks)) {
      const auto& list = List(*blocks, path + ".blocks");
      s.blocks.reserve(list.size());
      int64_t next_address = s.address;  // blocks tile the segment in address order
      for (size_t i = 0; i < list.size(); ++i) {
        std::string bpath = fmt::format("{}.blocks[{}]", path, i);
        RequireDict(list[i], bpath);
        if (!Claim(list[i])) continue;
        SnapshotBlock b;
        b.size = Size(list[i], "size", bpath);
        b.requested_size = IntKey(list[i], "requested_size", bpath, b.size);
        b.address = IntKey(list[i], "address", bpath, next_address);
        CheckRange(b.address, b.size, bpath);
        b.state = ParseState(TextKey(list[i], "state"));
        if (const PickleValue* history = doc_.Find(list[i], "history")) {
          out_.legacy_schema = true;
          const auto& h = List(*history, bpath + ".history");
          if (!h.empty()) {
            std::string hpath = fmt::format("{}.history[{}]", bpath, h.size() - 1);
            RequireDict(h.back(), hpath);
            b.stack = InternStack(doc_.Find(h.back(), "frames"), hpath + ".frames");
          }
        } else {
          b.stack = InternStack(doc_.Find(list[i], "frames"), bpath + ".frames");
        }
        if (__builtin_add_overflow(b.address, b.size, &next_address)) {
          Fail(bpath, "address + size overflows");
        }
        s.blocks.push_back(b);
      }
    }
    out_.segments.push_back(std::move(s));
  }

  TraceEntry ConvertEntry(PickleValue v, size_t device, size_t index) {
    std::string path;  // built only on the error path: entries are many
    auto where = [&] { return fmt::format("device_traces[{}][{}]", device, index); };
    if (v.kind != PickleKind::kDict) {
      Fail(where(), fmt::format("expected a dict, found {}", PickleKindName(v.kind)));
    }
    TraceEntry e;
    const PickleValue* action = doc_.Find(v, "action");
    if (!action || !action->IsText()) Fail(where() + ".action", "missing or not a string");
    e.action = ParseAction(doc_.Text(*action));
    auto int_key = [&](const char* key, int64_t fallback) -> int64_t {
      const PickleValue* x = doc_.Find(v, key);
      if (!x || x->kind == PickleKind::kNone) return fallback;
      if (x->kind == PickleKind::kInt) return x->integer;
      if (x->kind == PickleKind::kBool) return x->boolean;
      Fail(where() + "." + key,
           fmt::format("expected an integer, found {}", PickleKindName(x->kind)));
    };
    e.addr = int_key("addr", 0);
    e.size = int_key("size", 0);
    if (e.size < 0) Fail(where() + ".size", fmt::format("negative size {}", e.size));
    e.stream = int_key("stream", 0);
    e.time_us = std::max<int64_t>(int_key("time_us", -1), -1);
    if (e.action != TraceAction::kOom && e.action != TraceAction::kSnapshot) {
      CheckRange(e.addr, e.size, where());
    }
    if (e.action == TraceAction::kOom) e.device_free = int_key("device_free", -1);
    const PickleValue* frames = doc_.Find(v, "frames");
    if (frames && frames->IsContainer()) {
      auto cached = stack_by_container_.find(frames->index);
      e.stack = cached != stack_by_container_.end() ? cached->second
                                                    : InternStack(frames, where() + ".frames");
    }
    return e;
  }

  const PickleDocument& doc_;
  MemorySnapshot& out_;
  std::vector<uint8_t> claimed_;  // per container: already read as a segment, block, ...
  int64_t text_budget_ = 0;
  int64_t text_copied_ = 0;
  std::unordered_map<uint32_t, FrameId> frame_by_container_;
  std::unordered_map<std::string, FrameId> frame_by_content_;
  std::unordered_map<uint32_t, StackId> stack_by_container_;
  std::unordered_map<std::string, StackId> stack_by_content_;
};

}  // namespace

MemorySnapshot ParseMemorySnapshot(std::string_view pickle_bytes, const std::string& source) {
  // A pickle starts with its PROTO opcode (0x80) or an opcode below 0x80; text is another kind
  // of file, most often a profiler trace or a YAML/JSON config given by mistake.
  const size_t first = pickle_bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos &&
      (pickle_bytes[first] == '{' || pickle_bytes[first] == '[')) {
    ThrowUserError(SourceLocation{source, -1, -1, static_cast<int64_t>(first)}, "",
                   "JSON text, not a pickle: a memory snapshot is the pickle "
                   "torch.cuda.memory._dump_snapshot writes (a profiler trace goes to `sextant "
                   "trace report`)");
  }
  PickleDocument doc = ReadPickle(pickle_bytes, source);
  MemorySnapshot snapshot;
  snapshot.source = source;
  Converter(doc, pickle_bytes.size(), snapshot).Convert();
  return snapshot;
}

MemorySnapshot LoadMemorySnapshot(const std::string& path, const InputLimits& limits) {
  InputText input = InputText::Load(path, limits);
  if (input.truncated()) ThrowUserError(SourceLocation{path}, "", input.truncation_reason());
  try {
    return ParseMemorySnapshot(input.text(), path);
  } catch (const UserError& e) {
    // A pickle error about bytes that only the file's name calls compressed.
    const std::string misnamed = MisnamedCompression(path, input);
    if (misnamed.empty()) throw;
    throw UserError(fmt::format("{} (the file is {})", e.what(), misnamed));
  }
}

}  // namespace sextant
