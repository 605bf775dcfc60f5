#include "trace/kineto_reader.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <simdjson.h>

#include "trace/op_arguments.h"
#include "util/error.h"
#include "util/json_input.h"

namespace sextant {
namespace {

// simdjson's messages end in a period; a clause follows them here.
std::string WithoutFinalPeriod(std::string text) {
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

namespace od = simdjson::ondemand;

enum class Category : uint8_t {
  kSkip,
  kCpuOp,
  kAnnotation,
  kRuntime,
  kKernel,
  kMemcpy,
  kMemset,
  kFlow,
  kPythonFunction  // kept only for activation-recompute regions (RecomputeRegion)
};

// `text == literal` with the literal's length known when compiling: a few loads and
// compares instead of a call to memcmp (every key of every event's args passes here).
template <size_t N>
inline bool Equals(std::string_view text, const char (&literal)[N]) {
  return text.size() == N - 1 && std::memcmp(text.data(), literal, N - 1) == 0;
}

Category Classify(std::string_view cat) {
  // Modern names (libkineto ActivityType.h) and the 2021 capitalised ones.
  switch (cat.size()) {
    case 4:
      if (Equals(cat, "ac2g")) return Category::kFlow;
      break;
    case 5:
      if (Equals(cat, "async")) return Category::kFlow;
      break;
    case 6:
      if (Equals(cat, "cpu_op")) return Category::kCpuOp;
      if (Equals(cat, "kernel") || Equals(cat, "Kernel")) return Category::kKernel;
      if (Equals(cat, "Memcpy")) return Category::kMemcpy;
      if (Equals(cat, "Memset")) return Category::kMemset;
      break;
    case 7:
      if (Equals(cat, "Runtime")) return Category::kRuntime;
      break;
    case 8:
      if (Equals(cat, "Operator")) return Category::kCpuOp;
      break;
    case 9:
      if (Equals(cat, "async_gpu")) return Category::kFlow;
      break;
    case 10:
      if (Equals(cat, "gpu_memcpy")) return Category::kMemcpy;
      if (Equals(cat, "gpu_memset")) return Category::kMemset;
      break;
    case 11:
      if (Equals(cat, "cuda_driver")) return Category::kRuntime;
      break;
    case 12:
      if (Equals(cat, "cuda_runtime")) return Category::kRuntime;
      break;
    case 15:
      if (Equals(cat, "user_annotation")) return Category::kAnnotation;
      if (Equals(cat, "python_function")) return Category::kPythonFunction;
      break;
    case 16:
      if (Equals(cat, "async_cpu_to_gpu")) return Category::kFlow;
      break;
  }
  return Category::kSkip;
}

// The keys of an event that the reader uses. One switch on the length and the first bytes
// instead of a chain of string comparisons: every event passes here once per key.
enum class EventKey { kOther, kPh, kCat, kName, kPid, kTid, kTs, kDur, kId, kArgs };

EventKey ClassifyEventKey(std::string_view key) {
  const char* k = key.data();
  switch (key.size()) {
    case 2:
      if (k[0] == 'p' && k[1] == 'h') return EventKey::kPh;
      if (k[0] == 't' && k[1] == 's') return EventKey::kTs;
      if (k[0] == 'i' && k[1] == 'd') return EventKey::kId;
      break;
    case 3:
      if (k[1] == 'i' && k[2] == 'd') {
        if (k[0] == 'p') return EventKey::kPid;
        if (k[0] == 't') return EventKey::kTid;
      } else if (k[0] == 'c' && k[1] == 'a' && k[2] == 't') {
        return EventKey::kCat;
      } else if (k[0] == 'd' && k[1] == 'u' && k[2] == 'r') {
        return EventKey::kDur;
      }
      break;
    case 4:
      if (std::memcmp(k, "name", 4) == 0) return EventKey::kName;
      if (std::memcmp(k, "args", 4) == 0) return EventKey::kArgs;
      break;
  }
  return EventKey::kOther;
}

// torch.utils.checkpoint's recompute_fn frame: the forward ops rerun during backward
// (TraceLens's detect_recompute looks for the same frame).
bool IsRecomputeFunction(std::string_view name) {
  // Half the events of a trace with Python stacks pass here. Boyer-Moore-Horspool skips up
  // to a needle's length per step; string_view::find stops at every 't' of the frame's path.
  static constexpr std::string_view kFile = "torch/utils/checkpoint.py", kFunction = "recompute_fn";
  static const std::boyer_moore_horspool_searcher file(kFile.begin(), kFile.end());
  static const std::boyer_moore_horspool_searcher function(kFunction.begin(), kFunction.end());
  return std::search(name.begin(), name.end(), file) != name.end() &&
         std::search(name.begin(), name.end(), function) != name.end();
}

inline std::string_view Trim(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t')) {
    token.remove_suffix(1);
  }
  return token;
}

// Plain decimal integers of up to 18 digits (ids, pids, tids: nearly every number an event
// carries), without the generality of std::from_chars; false for anything else.
// A raw token may carry the whitespace before the next comma.
inline bool ParseShortDecimal(std::string_view token, int64_t* out) {
  const size_t first = token.size() > 0 && token[0] == '-' ? 1 : 0;
  size_t end = first;
  int64_t v = 0;
  for (; end < token.size() && end - first < 18; ++end) {
    const unsigned digit = static_cast<unsigned char>(token[end]) - '0';
    if (digit > 9) break;
    v = v * 10 + digit;
  }
  if (end == first) return false;
  for (size_t j = end; j < token.size(); ++j) {
    const char c = token[j];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return false;
  }
  *out = first ? -v : v;
  return true;
}

bool ParseInt(std::string_view token, int64_t* out) {
  if (ParseShortDecimal(token, out)) return true;
  token = Trim(token);
  if (!token.empty() && token.front() == '"') {  // some writers quote numbers
    token.remove_prefix(1);
    if (!token.empty() && token.back() == '"') token.remove_suffix(1);
  }
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  if (ec == std::errc() && ptr == token.data() + token.size()) return true;
  int64_t ns;
  if (ParseMicrosecondsToNs(token, &ns)) {  // 7.0 or 1e3: keep the integral part
    *out = ns / 1000;
    return true;
  }
  return false;
}

bool ParseUint(std::string_view token, uint64_t* out) {
  token = Trim(token);
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && ptr == token.data() + token.size();
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The word tricks below number a word's bytes from its lowest: the first byte of text is the
// least significant.
static_assert(std::endian::native == std::endian::little,
              "the eight-bytes-at-a-time text scans assume a little-endian machine");

// Eight bytes of `p` as one little-endian word (any alignment).
inline uint64_t LoadWord(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

constexpr uint64_t kEachByte = 0x0101010101010101ULL;

// Whether any byte of `word` equals `byte`: a zero byte of word ^ byte-pattern borrows into
// its high bit when one is subtracted from each byte (exact for "any", though the borrow
// may also mark bytes above the first match).
inline bool WordHasByte(uint64_t word, uint8_t byte) {
  const uint64_t x = word ^ (kEachByte * byte);
  return ((x - kEachByte) & ~x & (kEachByte << 7)) != 0;
}

// Strings are a third of a trace's bytes: eight at a time, the last word overlapping the one
// before it, and a byte loop only for strings shorter than a word ("X", "cpu_op").
inline bool HasBackslash(std::string_view body) {
  const char* p = body.data();
  const size_t n = body.size();
  if (n < 8) {
    for (size_t i = 0; i < n; ++i) {
      if (p[i] == '\\') return true;
    }
    return false;
  }
  for (size_t i = 0; i + 8 < n; i += 8) {
    if (WordHasByte(LoadWord(p + i), '\\')) return true;
  }
  return WordHasByte(LoadWord(p + n - 8), '\\');
}

// Whether the eight bytes of `word` are all ASCII digits: a digit is 0x30-0x39, so its high
// nibble is 3 and adding 6 leaves the high nibble 3 too.
inline bool AllDigits(uint64_t word) {
  constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ULL;
  return ((word & kHigh) | (((word + 6 * kEachByte) & kHigh) >> 4)) == 0x3333333333333333ULL;
}

// The value of eight ASCII digits, the first the most significant: pairs, then quads, then
// the whole, each step one multiply that adds a lane times its base to the lane above.
inline uint32_t EightDigitsValue(uint64_t word) {
  word = (word & 0x0F0F0F0F0F0F0F0FULL) * (10 * 256 + 1) >> 8;      // 2-digit lanes
  word = (word & 0x00FF00FF00FF00FFULL) * (100 * 65536 + 1) >> 16;  // 4-digit lanes
  return static_cast<uint32_t>((word & 0x0000FFFF0000FFFFULL) * (10000 * (uint64_t{1} << 32) + 1) >>
                               32);
}

// JSON string token (with quotes, possibly trailing spaces) -> its text. Escapes are rare in
// traces, so the common case is a view into the input; `scratch` holds unescaped text.
bool StringToken(std::string_view token, std::string& scratch, std::string_view* out) {
  token = Trim(token);
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  const std::string_view body(token.data() + 1, token.size() - 2);
  if (!HasBackslash(body)) {
    *out = body;
    return true;
  }
  scratch.clear();
  for (size_t i = 0; i < body.size(); ++i) {
    char ch = body[i];
    if (ch != '\\' || i + 1 >= body.size()) {
      scratch += ch;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n': scratch += '\n'; break;
      case 't': scratch += '\t'; break;
      case 'r': scratch += '\r'; break;
      case 'b': scratch += '\b'; break;
      case 'f': scratch += '\f'; break;
      case 'u': {
        uint32_t cp = 0;
        if (i + 4 >= body.size()) return false;
        auto [p, ec] = std::from_chars(body.data() + i + 1, body.data() + i + 5, cp, 16);
        if (ec != std::errc() || p != body.data() + i + 5) return false;
        i += 4;
        AppendUtf8(cp, scratch);  // surrogate pairs stay as two code points: names only
        break;
      }
      default: scratch += e;  // \" \\ \/
    }
  }
  *out = scratch;
  return true;
}

// Makes room in `items` for twice `scale` times its present size if it has less than
// `scale` times, so that an estimate creeping up (the GPU activities and flows of a trace
// mostly come after its first CPU events) does not copy the vector into fresh memory again:
// capacity never written to costs address space, not memory.
template <typename T>
void ReserveProjected(std::vector<T>& items, double scale) {
  const auto projected = static_cast<size_t>(static_cast<double>(items.size()) * scale);
  if (projected > items.capacity()) items.reserve(2 * projected);
}

struct FlowKey {
  int64_t pid, tid, ts;
  bool operator==(const FlowKey& o) const { return pid == o.pid && tid == o.tid && ts == o.ts; }
};
struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.pid) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(k.tid) + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.ts) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

// Flow ids by the (pid, tid, ts) of the flow's end point. Collected in a vector and indexed
// once by a hash of the point, when every flow is in: millions of flows cost a hash node each
// in a node-based map, and a sort of them more than one pass. The first flow added wins when
// several share a point.
class FlowTable {
 public:
  void Add(const FlowKey& key, int64_t id) { points_.push_back({key, id}); }
  bool empty() const { return points_.empty(); }
  size_t size() const { return points_.size(); }
  void ReserveProjected(double scale) { sextant::ReserveProjected(points_, scale); }
  // Builds the index Find uses; called once all flows are added.
  void Index() {
    size_t slots = 16;
    while (slots < 2 * points_.size()) slots *= 2;
    slots_.assign(slots, 0);
    const size_t mask = slots - 1;
    for (size_t p = 0; p < points_.size(); ++p) {
      size_t i = Slot(points_[p].key) & mask;
      while (slots_[i] != 0 && !(points_[slots_[i] - 1].key == points_[p].key)) i = (i + 1) & mask;
      if (slots_[i] == 0) slots_[i] = static_cast<uint32_t>(p + 1);  // else an earlier one wins
    }
  }
  // After Index(): the id of the first flow at `key`, or nullptr.
  const int64_t* Find(const FlowKey& key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = Slot(key) & mask; slots_[i] != 0; i = (i + 1) & mask) {
      const Point& p = points_[slots_[i] - 1];
      if (p.key == key) return &p.id;
    }
    return nullptr;
  }

 private:
  struct Point {
    FlowKey key;
    int64_t id;
  };
  // The key's hash with its high bits folded into the low ones the slot is taken from:
  // timestamps in whole microseconds are multiples of 1000 ns, and their low bits repeat.
  static uint64_t Slot(const FlowKey& key) {
    uint64_t h = FlowKeyHash{}(key);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 31);
  }
  std::vector<Point> points_;
  std::vector<uint32_t> slots_;  // index + 1 into points_ by hash of the key, 0 = empty
};

std::string_view JsonTypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
    default: return "another JSON value";
  }
}

class ParseFailure {
 public:
  ParseFailure(simdjson::error_code code, const char* where) : code(code), where(where) {}
  simdjson::error_code code;
  const char* where;
};

// The earliest and latest start of the CPU events and GPU activities kept.
struct StartRange {
  int64_t earliest = INT64_MAX, latest = INT64_MIN;
  void Add(int64_t ts) {
    earliest = std::min(earliest, ts);
    latest = std::max(latest, ts);
  }
};

class KinetoParser {
 public:
  // `input` (null for a chunked read) is the text whose pages a one-pass read releases.
  KinetoParser(const InputText* input, const std::string& path, TraceData& out)
      : input_(input), path_(path), out_(out), origin_(input ? input->text().data() : nullptr) {}

  // Returns normally when the whole document was read; throws ParseFailure otherwise.
  void Parse(std::string_view text, bool* saw_trace_events) {
    od::document doc;
    Open(text, doc);
    od::json_type type;
    Check(doc.type().get(type), text.data());
    if (type == od::json_type::array) {
      od::array events;
      Check(doc.get_array().get(events), text.data());
      *saw_trace_events = true;
      ParseEvents(events);
      return;
    }
    if (type != od::json_type::object) {
      throw UserError(FormatLocated(
          {path_}, "", "not a Kineto trace: top-level JSON value is not an object or array"));
    }
    od::object top;
    Check(doc.get_object().get(top), text.data());
    for (auto field_result : top) {
      od::field field;
      Check(std::move(field_result).get(field), Location(doc));
      std::string_view key = Key(field);
      od::value value = field.value();
      if (Equals(key, "traceEvents")) {
        od::json_type events_type;
        Check(value.type().get(events_type), Location(doc));
        if (events_type != od::json_type::array) {
          const char* where = Location(doc);
          throw UserError(FormatLocated(
              SourceLocation{path_, -1, -1, where ? Offset(where) : -1}, "traceEvents",
              fmt::format("expected an array of events, found {}", JsonTypeName(events_type))));
        }
        od::array events;
        Check(value.get_array().get(events), Location(doc));
        *saw_trace_events = true;
        ParseEvents(events);
      } else if (Equals(key, "deviceProperties")) {
        ParseDeviceProperties(value);
      } else if (Equals(key, "distributedInfo")) {
        ParseDistributedInfo(value);
      } else if (Equals(key, "baseTimeNanoseconds")) {
        ParseInt(Token(value), &out_.base_time_ns);
      }
    }
    doc_ = nullptr;
  }

  // Starts simdjson on `text` in place (the input keeps kInputPadding readable bytes past its
  // end) and makes `doc` the document locations are reported against.
  void Open(std::string_view text, od::document& doc) {
    auto padded = simdjson::padded_string_view(text.data(), text.size(),
                                               text.size() + InputText::kInputPadding);
    Check(parser_.iterate(padded).get(doc), text.data());
    doc_ = &doc;
  }

  // Once all events are read: the warnings that count over the whole trace, then the launch
  // flows matched to their runtime calls.
  void Finish() {
    AddUntimedWarnings();
    if (flow_starts_.empty() && flow_ends_.empty()) return;
    out_.has_launch_flows = !flow_starts_.empty();
    flow_starts_.Index();
    for (CpuEvent& ev : out_.cpu) {
      if (ev.kind != CpuKind::kRuntime) continue;
      const ThreadInfo& t = out_.threads[ev.thread];
      const int64_t* id = flow_starts_.Find({t.pid, t.tid, ev.ts_ns});
      if (!id) continue;
      ev.launch_flow = true;
      if (ev.link_id < 0) ev.link_id = *id;  // a runtime call: its correlation id
    }
    // Flow ends are looked up only for activities without a correlation id of their own,
    // which Kineto's kernels and copies all have: indexed only when one is found.
    bool ends_indexed = false;
    for (size_t i = 0; i < out_.gpu.size(); ++i) {
      GpuEvent& g = out_.gpu[i];
      if (g.correlation >= 0) continue;
      if (!ends_indexed) {
        flow_ends_.Index();
        ends_indexed = true;
      }
      const int64_t* id = flow_ends_.Find({gpu_pid_tid_[i].first, gpu_pid_tid_[i].second, g.ts_ns});
      if (id) g.correlation = *id;
    }
  }

  // Parses `text` = "[" events "]", which may be followed by more input (the top-level keys
  // after the event array: the caller does not know where the array closes). Returns the
  // offset in `text` just past the array's closing bracket.
  size_t ParseEventArray(std::string_view text) {
    od::document doc;
    Open(text, doc);
    od::array events;
    Check(doc.get_array().get(events), text.data());
    ParseEvents(events);
    doc_ = nullptr;
    // The next structural character follows the closing bracket after only white space.
    const char* next = nullptr;
    simdjson::error_code at = doc.current_location().get(next);
    if (at == simdjson::OUT_OF_BOUNDS) return text.size();  // nothing after the array
    Check(at, text.data());
    size_t close = std::string_view(text.data(), static_cast<size_t>(next - text.data()))
                       .find_last_not_of(" \t\r\n");
    if (close == std::string_view::npos || text[close] != ']') {
      throw ParseFailure(simdjson::TAPE_ERROR, next);
    }
    return close + 1;
  }

  // Sizes simdjson's buffers once for the largest document to come, instead of growing them.
  void Reserve(size_t bytes) { Check(parser_.allocate(bytes), nullptr); }

  // Makes room for `scale` times the events read so far (and as much again) in each vector
  // too small for that, so that the vectors are not copied over and over as they grow.
  // Called at every checkpoint of a chunked read: a trace's parts differ (GPU activities
  // often start only after the CPU events of a step), so an early estimate can be short.
  // Capacity never written to costs address space, not memory.
  void ReserveEvents(double scale) {
    ReserveProjected(out_.cpu, scale);
    ReserveProjected(out_.gpu, scale);
    ReserveProjected(gpu_pid_tid_, scale);
    flow_starts_.ReserveProjected(scale);
    flow_ends_.ReserveProjected(scale);
  }

  size_t parsed_events() const { return parsed_events_; }
  // Of the events this parser added to the trace.
  const StartRange& starts() const { return starts_; }
  // The text parsed next starts at `text`, which holds the input from byte `offset` on.
  void SetOrigin(const char* text, size_t offset) {
    origin_ = text;
    origin_offset_ = offset;
  }
  // Chunks are copies, so positions in them say nothing about the input's pages.
  void set_release_pages(bool release) { release_pages_ = release; }

 private:
  void Check(simdjson::error_code code, const char* where) {
    if (code == simdjson::SUCCESS) return;
    if (!where && doc_) where = Location(*doc_);
    throw ParseFailure(code, where);
  }
  // The input offset of `where`, a position in the text being parsed.
  int64_t Offset(const char* where) const {
    return static_cast<int64_t>(origin_offset_) + (where - origin_);
  }
  const char* Location(od::document& doc) {
    const char* where = nullptr;
    if (doc.current_location().get(where) != simdjson::SUCCESS) return nullptr;
    return where;
  }

  static bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  static std::string_view Key(od::field& field) {
    // Keys in traces never need unescaping. The raw key ends at the quote before the ':'
    // that precedes the value; simdjson has checked that ':' and that only white space
    // surrounds it, so stepping back from the value's first byte takes a few reads where
    // scanning the key forward for its closing quote takes one per byte.
    const char* start = field.key().raw();
    const char* end = field.value().raw_json_token().data() - 1;
    while (IsJsonSpace(*end)) --end;  // now at the ':'
    --end;
    while (IsJsonSpace(*end)) --end;  // now at the key's closing quote
    return {start, static_cast<size_t>(end - start)};
  }

  static std::string_view Token(od::value& value) { return value.raw_json_token(); }

  bool String(od::value& value, std::string_view* out) {
    return StringToken(Token(value), scratch_, out);
  }

  // Raw text of an array or object value ("[[1, 2], []]"), for shapes kept verbatim.
  uint32_t RawContainer(od::value& value) {
    od::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) return 0;
    std::string_view raw;
    if (type == od::json_type::array) {
      od::array a;
      if (value.get_array().get(a) || a.raw_json().get(raw)) return 0;
    } else if (type == od::json_type::object) {
      od::object o;
      if (value.get_object().get(o) || o.raw_json().get(raw)) return 0;
    } else {
      raw = Trim(Token(value));
    }
    // Shapes repeat: each distinct spelling is compacted and interned once.
    raw = Trim(raw);
    uint32_t raw_id = raw_texts_.Intern(raw);
    if (raw_id == compact_ids_.size())
      compact_ids_.push_back(out_.strings.Intern(CompactJson(raw)));
    return compact_ids_[raw_id];
  }

  // Pretty-printed traces spread "Input Dims" over many lines; one spelling ("[[1, 2], []]")
  // keeps grouping by shape independent of the writer's layout.
  std::string_view CompactJson(std::string_view raw) {
    bool spread = false;  // a line break, a tab or two spaces in a row
    for (size_t i = 0; i < raw.size() && !spread; ++i) {
      spread = raw[i] == '\n' || raw[i] == '\t' ||
               (raw[i] == ' ' && i + 1 < raw.size() && raw[i + 1] == ' ');
    }
    if (!spread) return raw;
    compact_.clear();
    bool in_string = false;
    for (size_t i = 0; i < raw.size(); ++i) {
      char ch = raw[i];
      if (in_string) {
        compact_ += ch;
        if (ch == '\\' && i + 1 < raw.size())
          compact_ += raw[++i];
        else if (ch == '"')
          in_string = false;
        continue;
      }
      if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
      compact_ += ch;
      if (ch == '"') in_string = true;
      if (ch == ',') compact_ += ' ';
    }
    return compact_;
  }

  // The last pid or tid token read and its value: consecutive events mostly repeat both.
  struct IdTokenCache {
    char text[24];
    size_t size = SIZE_MAX;  // nothing cached
    int64_t value = 0;
  };

  // Whether `token` (at most 24 bytes) is the one in `text`. Inline compares of a word or
  // two: two of every event's keys pass here, nearly always equal to the last, where a call
  // to memcmp costs more than the compare. The input holds kInputPadding bytes past any token.
  static bool SameShortToken(std::string_view token, const char (&text)[24]) {
    const size_t n = token.size();
    if (n <= 8) {
      const uint64_t mask = n == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
      return ((LoadWord(token.data()) ^ LoadWord(text)) & mask) == 0;
    }
    return std::memcmp(token.data(), text, n) == 0;
  }

  // ProcessOrThread, skipped when the token is the one read last for this key.
  int64_t CachedProcessOrThread(od::value& value, IdTokenCache& cache) {
    const std::string_view token = Trim(Token(value));
    if (token.size() == cache.size && SameShortToken(token, cache.text)) return cache.value;
    const int64_t id = ProcessOrThread(token);
    if (token.size() <= sizeof cache.text) {
      std::memcpy(cache.text, token.data(), token.size());
      cache.size = token.size();
      cache.value = id;
    }
    return id;
  }

  // pid/tid: an integer, or a string ("stream 7" -> 7; other strings get negative ids).
  int64_t ProcessOrThread(std::string_view token) {
    int64_t n = 0;
    if (!token.empty() && token.front() != '"') {
      ParseInt(token, &n);
      return n;
    }
    std::string_view text;
    if (!StringToken(token, scratch_, &text)) return 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && ptr == text.data() + text.size()) return n;
    if (text.substr(0, 7) == "stream ") {
      std::string_view digits = text.substr(7);
      auto [p2, ec2] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec2 == std::errc()) return n;
    }
    return -1 - static_cast<int64_t>(out_.strings.Intern(text));
  }

  uint32_t ThreadIndex(int64_t pid, int64_t tid) {
    // Consecutive events mostly share a thread: skip the hash lookup for a repeat.
    if (last_thread_ < out_.threads.size() && out_.threads[last_thread_].pid == pid &&
        out_.threads[last_thread_].tid == tid) {
      return last_thread_;
    }
    auto [it, inserted] =
        thread_index_.try_emplace({pid, tid, 0}, static_cast<uint32_t>(out_.threads.size()));
    if (inserted) out_.threads.push_back({pid, tid});
    last_thread_ = it->second;
    return it->second;
  }

  int32_t CollectiveIndex() {
    if (collective_.name == 0 && collective_.in_nelems < 0 && collective_.out_nelems < 0 &&
        collective_.pg_name == 0) {
      return -1;
    }
    out_.collectives.push_back(collective_);
    return static_cast<int32_t>(out_.collectives.size() - 1);
  }

  struct Args {
    int64_t external_id = -1, correlation = -1, stream = INT64_MIN, device = INT64_MIN, bytes = -1,
            sequence = -1;
    uint32_t dims = 0, types = 0, concrete = 0, strides = 0;
    uint32_t kernel = 0;  // runtime calls under graph capture name the kernel they record
  };

  // `cpu_side`: an op or annotation (shapes are read); `runtime`: a runtime call.
  void ParseArgs(od::value& value, Args& args, bool cpu_side, bool runtime) {
    od::object obj;
    if (value.get_object().get(obj) != simdjson::SUCCESS) return;
    for (auto field_result : obj) {
      Check(field_result.error(), nullptr);
      // The field and its value are used in place: copying them out stalls on store
      // forwarding (the copy reads as one 16-byte load what was just written in parts).
      od::field&& field = std::move(field_result).value_unsafe();
      std::string_view key = Key(field);
      od::value& v = field.value();
      switch (key.size()) {
        case 3:
          if (Equals(key, "Seq")) ParseInt(Token(v), &collective_.seq);
          break;
        case 5:
          if (Equals(key, "bytes"))
            ParseInt(Token(v), &args.bytes);
          else if (Equals(key, "dtype"))
            collective_.dtype = InternString(v);
          break;
        case 6:
          if (Equals(key, "stream"))
            ParseInt(Token(v), &args.stream);
          else if (Equals(key, "device"))
            ParseInt(Token(v), &args.device);
          else if (Equals(key, "kernel") && runtime)
            args.kernel = InternString(v);
          break;
        case 8:
          if (Equals(key, "Comms Id")) {
            collective_.has_comms_id = ParseUint(Token(v), &collective_.comms_id);
          }
          break;
        case 10:
          if (Equals(key, "Input Dims") || Equals(key, "Input dims")) {
            if (cpu_side) args.dims = RawContainer(v);
          } else if (Equals(key, "Input type")) {
            if (cpu_side) args.types = RawContainer(v);
          } else if (Equals(key, "Group size")) {
            ParseInt(Token(v), &collective_.group_size);
          }
          break;
        case 11:
          if (Equals(key, "External id") || Equals(key, "external id"))
            ParseInt(Token(v), &args.external_id);
          else if (Equals(key, "correlation"))
            ParseInt(Token(v), &args.correlation);
          break;
        case 13:
          if (Equals(key, "In msg nelems")) {
            ParseInt(Token(v), &collective_.in_nelems);
          } else if (Equals(key, "Input Strides")) {
            if (cpu_side) args.strides = RawContainer(v);
          } else if (Equals(key, "In split size")) {
            collective_.in_split = ListOrString(v);
          }
          break;
        case 14:
          if (Equals(key, "Out msg nelems"))
            ParseInt(Token(v), &collective_.out_nelems);
          else if (Equals(key, "Out split size"))
            collective_.out_split = ListOrString(v);
          break;
        case 15:
          if (Equals(key, "Concrete Inputs")) {
            if (cpu_side) args.concrete = RawContainer(v);
          } else if (Equals(key, "Collective name")) {
            collective_.name = InternString(v);
          } else if (Equals(key, "Sequence number")) {
            if (cpu_side) ParseInt(Token(v), &args.sequence);
          }
          break;
        case 18:
          if (Equals(key, "Process Group Name")) collective_.pg_name = InternString(v);
          break;
        case 19:
          if (Equals(key, "Process Group Ranks")) collective_.pg_ranks = ListOrString(v);
          break;
        case 25:
          if (Equals(key, "Process Group Description")) collective_.pg_desc = InternString(v);
          break;
      }
    }
  }

  // SGLang's profiler names its ops "sglang_profiler::<op>_<call-site number>"; the number
  // splits one op into as many names as call sites (TraceLens strips it the same way:
  // Trace2Tree/extensions/pseudo_ops_utils.py, _SGLANG_SUFFIX_RE).
  uint32_t OpName(uint32_t id) {
    constexpr std::string_view kSglang = "sglang_profiler::";
    std::string_view name = out_.Name(id);
    if (!name.starts_with(kSglang)) return id;
    size_t end = name.size();
    while (end > kSglang.size() && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
    if (end == name.size() || end <= kSglang.size() + 1 || name[end - 1] != '_') return id;
    return out_.strings.Intern(name.substr(0, end - 1));
  }

  // A flow event's name (every one "ac2g" in Kineto's traces): not interned again when its
  // token is the last one's, whose text is in the pool already.
  uint32_t FlowName(od::value& v) {
    const std::string_view token = Token(v);
    if (token != flow_name_token_) {
      flow_name_ = InternString(v);
      flow_name_token_.assign(token);
    }
    return flow_name_;
  }

  uint32_t InternString(od::value& v) {
    std::string_view text;
    if (!String(v, &text)) return 0;
    return out_.strings.Intern(text);
  }

  // A value PyTorch writes as a string ("[0, 1, 2, 3]") in some versions and as a JSON list
  // in others: the string's text, or the list as Python prints the tuple TraceLens makes of
  // it ("(8, 8)"); 0 for null.
  uint32_t ListOrString(od::value& v) {
    const std::string_view token = Trim(Token(v));
    if (!token.empty() && token.front() == '"') return InternString(v);
    if (token == "null") return 0;
    const uint32_t raw = RawContainer(v);
    return raw ? out_.strings.Intern(PythonRepr(out_.Name(raw))) : 0;
  }

  void NoteUntimedEvent() {
    if (untimed_events_++ == 0 && doc_) {
      const char* where = Location(*doc_);
      if (where) first_untimed_offset_ = Offset(where);
    }
  }

  void ParseEvents(od::array& events) {
    size_t next_release = kReleaseStep;
    for (auto element : events) {
      od::object obj;
      od::json_type type;
      if (element.type().get(type) == simdjson::SUCCESS && type != od::json_type::object) {
        // An event that is a number, a string or a list (HTA's memory timeline is a list of
        // lists): not a profiler trace, which this says instead of a JSON type error. (A
        // malformed or cut-short element is left to the JSON checks below.)
        const char* where = doc_ ? Location(*doc_) : nullptr;
        throw UserError(FormatLocated(
            SourceLocation{path_, -1, -1, where ? Offset(where) : -1}, "",
            fmt::format("not a trace: event {} is not a JSON object (a profiler trace's events "
                        "are objects with \"ph\", \"name\" and \"ts\")",
                        parsed_events_)));
      }
      Check(element.get_object().get(obj), nullptr);
      ParseEvent(obj);
      ++out_.total_events;
      ++parsed_events_;
      if ((parsed_events_ & 4095) == 0 && doc_ && release_pages_ && input_) {
        const char* where = Location(*doc_);
        if (where) {
          auto offset = static_cast<size_t>(Offset(where));
          if (offset > next_release) {
            input_->ReleaseBefore(offset - kReleaseStep / 2);
            next_release = offset + kReleaseStep;
          }
        }
      }
    }
  }

  // The counts of events without a usable time, once per trace (a chunked parse calls
  // ParseEvents once per chunk).
  void AddUntimedWarnings() {
    auto near = [](int64_t offset) {
      return offset >= 0 ? fmt::format(" (the first near byte {})", offset) : std::string();
    };
    if (untimed_durations_ > 0) {
      out_.warnings.push_back(fmt::format(
          "{} complete event{} with a missing, non-numeric or out-of-range \"dur\" counted as "
          "lasting 0 us{}",
          untimed_durations_, untimed_durations_ == 1 ? "" : "s",
          near(first_untimed_duration_offset_)));
    }
    if (untimed_events_ > 0) {
      out_.warnings.push_back(fmt::format(
          "{} event{} with a missing, non-numeric or out-of-range \"ts\" left out{}",
          untimed_events_, untimed_events_ == 1 ? "" : "s", near(first_untimed_offset_)));
    }
    if (impossible_durations_ > 0) {
      out_.warnings.push_back(fmt::format(
          "{} event{} with a negative or over-long (> 2^40 ns, 18 minutes) \"dur\" left out of "
          "the timeline (the first: {})",
          impossible_durations_, impossible_durations_ == 1 ? "" : "s",
          first_impossible_duration_));
    }
  }

 public:
  od::document* doc_ = nullptr;

 private:
  int64_t untimed_events_ = 0;
  int64_t untimed_durations_ = 0;
  int64_t first_untimed_offset_ = -1;
  int64_t first_untimed_duration_offset_ = -1;
  int64_t impossible_durations_ = 0;
  std::string first_impossible_duration_;
  void ParseEvent(od::object& obj) {
    char ph = 0;
    Category cat = Category::kSkip;
    bool have_cat = false;
    uint32_t name = 0;
    int64_t pid = 0, tid = 0, ts = 0, dur = 0, flow_id = -1;
    bool have_ts = false, ts_given = false, have_dur = false;
    uint32_t metadata = 0;  // 'M' events: args.name or args.labels
    Args args;
    collective_ = CollectiveMeta{};
    for (auto field_result : obj) {
      Check(field_result.error(), nullptr);
      // The field and its value are used in place: copying them out stalls on store
      // forwarding (the copy reads as one 16-byte load what was just written in parts).
      od::field&& field = std::move(field_result).value_unsafe();
      std::string_view key = Key(field);
      od::value& v = field.value();
      switch (ClassifyEventKey(key)) {
        case EventKey::kPh: {
          // Every event has one: a one-letter string ("X") is read off its token; anything
          // else (escapes, longer text) goes through the general string reader.
          const std::string_view token = Token(v);
          std::string_view text;
          if (token.size() >= 3 && token[0] == '"' && token[1] != '\\' && token[1] != '"' &&
              token[2] == '"' && (token.size() == 3 || IsJsonSpace(token[3]))) {
            ph = token[1];
          } else if (StringToken(token, scratch_, &text) && !text.empty()) {
            ph = text[0];
          }
          if (ph) ++out_.events_with_phase;
          if (ph && ph != 'X' && ph != 's' && ph != 'f' && ph != 't' && ph != 'M') return;
          break;
        }
        case EventKey::kCat: {
          std::string_view text;
          if (String(v, &text)) cat = Classify(text);
          have_cat = true;
          if (cat == Category::kSkip) {
            // Trace, instants: not needed. Complete events of a kind not read are counted, so
            // that a report without GPU activity can name what the file held instead; not
            // Kineto's own "Trace" span (the profiling session), which every trace has.
            if (ph == 'X' && text != "Trace" && out_.unread_categories.size() < 64)
              ++out_.unread_categories[std::string(text)];
            return;
          }
          if (cat == Category::kPythonFunction && name != 0 &&
              !IsRecomputeFunction(out_.Name(name)))
            return;
          break;
        }
        case EventKey::kName:
          if (cat == Category::kPythonFunction) {
            // Python frames are most of a trace with stacks: only a recompute frame is kept,
            // and the others are not interned.
            std::string_view text;
            if (!String(v, &text) || !IsRecomputeFunction(text)) return;
          }
          name = cat == Category::kFlow ? FlowName(v) : InternString(v);
          break;
        case EventKey::kPid: pid = CachedProcessOrThread(v, pid_cache_); break;
        case EventKey::kTid: tid = CachedProcessOrThread(v, tid_cache_); break;
        case EventKey::kTs:
          ts_given = true;
          have_ts = ParseMicrosecondsToNs(Token(v), &ts);
          break;
        case EventKey::kDur: have_dur = ParseMicrosecondsToNs(Token(v), &dur); break;
        case EventKey::kId: ParseInt(Token(v), &flow_id); break;
        case EventKey::kArgs:
          if (ph == 'M') {
            metadata = MetadataText(v);
          } else if (have_cat && cat != Category::kFlow && cat != Category::kPythonFunction) {
            ParseArgs(v, args, cat == Category::kCpuOp || cat == Category::kAnnotation,
                      cat == Category::kRuntime);
          }
          break;
        case EventKey::kOther: break;
      }
    }
    if (ph == 'M') {
      StoreMetadata(name, pid, tid, metadata);
      return;
    }
    if (!have_cat || cat == Category::kSkip) return;
    if (!have_ts) {
      // An activity that cannot be placed in time: said once, with a count, at the end.
      if (ph == 'X' || ts_given) NoteUntimedEvent();
      return;
    }
    if (cat == Category::kFlow) {
      if (flow_id < 0) return;
      if (ph == 's')
        flow_starts_.Add(FlowKey{pid, tid, ts}, flow_id);
      else if (ph == 'f' || ph == 't')
        flow_ends_.Add(FlowKey{pid, tid, ts}, flow_id);
      return;
    }
    if (ph != 'X') return;
    if (!have_dur && untimed_durations_++ == 0 && doc_) {
      const char* where = Location(*doc_);
      if (where) first_untimed_duration_offset_ = Offset(where);
    }
    // No profiled activity lasts less than nothing or 2^40 ns (18 minutes): such an event
    // cannot be placed on the timeline and is left out, counted for one warning.
    constexpr int64_t kMaxDurationNs = int64_t{1} << 40, kMaxTimestampNs = int64_t{1} << 61;
    if (have_dur && (dur < 0 || dur > kMaxDurationNs)) {
      if (impossible_durations_++ == 0) {
        const char* where = doc_ ? Location(*doc_) : nullptr;
        first_impossible_duration_ =
            fmt::format("\"{}\" with dur {:.3f} us{}", name ? out_.Name(name) : "(unnamed)",
                        static_cast<double>(dur) / 1e3,
                        where ? fmt::format(" near byte {}", Offset(where)) : std::string());
      }
      return;
    }
    // So that sums over millions of events cannot overflow: no timestamp reaches 2^61 ns.
    ts = std::clamp<int64_t>(ts, -kMaxTimestampNs, kMaxTimestampNs);
    if (cat == Category::kPythonFunction) {
      if (name == 0 || !IsRecomputeFunction(out_.Name(name))) return;
      out_.recompute_regions.push_back(RecomputeRegion{ThreadIndex(pid, tid), ts, ts + dur});
      return;
    }
    if (cat == Category::kCpuOp || cat == Category::kAnnotation || cat == Category::kRuntime) {
      CpuEvent ev;
      ev.ts_ns = ts;
      ev.dur_ns = dur;
      ev.name = cat == Category::kCpuOp ? OpName(name) : name;
      ev.thread = ThreadIndex(pid, tid);
      ev.external_id = args.external_id;
      ev.link_id = cat == Category::kRuntime ? args.correlation
                   : cat == Category::kCpuOp ? args.sequence
                                             : -1;
      ev.args = out_.cpu_args.Intern({args.dims, args.types, args.strides, args.concrete,
                                      cat == Category::kRuntime ? args.kernel : 0});
      ev.kind = cat == Category::kCpuOp        ? CpuKind::kOp
                : cat == Category::kAnnotation ? CpuKind::kAnnotation
                                               : CpuKind::kRuntime;
      ev.collective = cat == Category::kRuntime ? -1 : CollectiveIndex();
      if (cat == Category::kRuntime && !out_.rocm && out_.Name(name).starts_with("hip"))
        out_.rocm = true;
      out_.cpu.push_back(ev);
      starts_.Add(ts);
      return;
    }
    GpuEvent g;
    g.ts_ns = ts;
    g.dur_ns = dur;
    g.name = name;
    g.device = static_cast<int32_t>(args.device != INT64_MIN ? args.device : pid);
    g.stream = args.stream != INT64_MIN ? args.stream : tid;
    g.correlation = args.correlation;
    g.external_id = args.external_id;
    g.bytes = args.bytes;
    g.kind = cat == Category::kMemcpy   ? GpuKind::kMemcpy
             : cat == Category::kMemset ? GpuKind::kMemset
                                        : GpuKind::kKernel;
    if (g.kind == GpuKind::kKernel) {
      // ROCm 7.1 reports copies and fills as kernels; they are memory operations.
      std::string_view n = out_.Name(name);
      if (n.starts_with("MEMORY_COPY_") || n.starts_with("__amd_rocclr_copyBuffer")) {
        g.kind = GpuKind::kMemcpy;
      } else if (n.starts_with("__amd_rocclr_fillBuffer")) {
        g.kind = GpuKind::kMemset;
      }
    }
    g.collective = CollectiveIndex();
    g.own_collective = g.collective >= 0;
    out_.gpu.push_back(g);
    starts_.Add(ts);
    gpu_pid_tid_.emplace_back(pid, tid);
  }

  // The text of a metadata event's args: "name" (process_name, thread_name) or "labels"
  // (process_labels), interned; 0 if neither is a string.
  uint32_t MetadataText(od::value& value) {
    od::object obj;
    if (value.get_object().get(obj) != simdjson::SUCCESS) return 0;
    for (auto field_result : obj) {
      Check(field_result.error(), nullptr);
      od::field&& field = std::move(field_result).value_unsafe();
      std::string_view key = Key(field);
      if (Equals(key, "name") || Equals(key, "labels")) return InternString(field.value());
    }
    return 0;
  }

  void StoreMetadata(uint32_t name, int64_t pid, int64_t tid, uint32_t text) {
    if (text == 0) return;
    std::string_view kind = out_.Name(name);
    if (kind == "process_name") {
      out_.process_names[pid] = text;
    } else if (kind == "process_labels") {
      out_.process_labels[pid] = text;
    } else if (kind == "thread_name") {
      out_.thread_names[{pid, tid}] = text;
    }
  }

  void ParseDeviceProperties(od::value& value) {
    od::array devices;
    if (value.get_array().get(devices)) return;
    for (auto element : devices) {
      od::object device;
      if (element.get_object().get(device)) return;
      for (auto field_result : device) {
        od::field field;
        if (std::move(field_result).get(field)) return;
        std::string_view key = Key(field);
        od::value v = field.value();
        if (Equals(key, "name")) {
          std::string_view text;
          if (String(v, &text)) out_.device_name = std::string(text);
        } else if (Equals(key, "warpSize")) {
          ParseInt(Token(v), &out_.warp_size);
        }
      }
      break;  // one device per rank file: the first describes it
    }
    if (out_.warp_size == 64) out_.rocm = true;
  }

  void ParseDistributedInfo(od::value& value) {
    od::object info;
    if (value.get_object().get(info)) return;
    for (auto field_result : info) {
      od::field field;
      if (std::move(field_result).get(field)) return;
      std::string_view key = Key(field);
      od::value v = field.value();
      if (Equals(key, "rank"))
        ParseInt(Token(v), &out_.rank);
      else if (Equals(key, "world_size"))
        ParseInt(Token(v), &out_.world_size);
    }
  }

  static constexpr size_t kReleaseStep = size_t{64} << 20;

  const InputText* input_;
  const std::string& path_;
  TraceData& out_;
  // Where byte `origin_offset_` of the input lies in the text being parsed: the input
  // itself, or a copy of one chunk of it (SetOrigin).
  const char* origin_;
  size_t origin_offset_ = 0;
  od::parser parser_;
  bool release_pages_ = true;
  std::string scratch_;
  std::string compact_;
  StringPool raw_texts_;                  // "Input Dims" etc. as written
  std::vector<uint32_t> compact_ids_{0};  // raw_texts_ id -> out_.strings id of its compact text
  CollectiveMeta collective_;
  size_t parsed_events_ = 0;
  StartRange starts_;
  std::unordered_map<FlowKey, uint32_t, FlowKeyHash> thread_index_;
  uint32_t last_thread_ = UINT32_MAX;
  IdTokenCache pid_cache_, tid_cache_;
  std::string flow_name_token_;  // FlowName's last token and its id
  uint32_t flow_name_ = 0;
  FlowTable flow_starts_;
  FlowTable flow_ends_;
  std::vector<std::pair<int64_t, int64_t>> gpu_pid_tid_;
};

// The end of the last complete event before `limit`: a '}' followed by ',' and '{'.
size_t LastEventBoundary(std::string_view text, size_t limit) {
  size_t pos = std::min(limit, text.size());
  while (pos > 0) {
    size_t close = text.rfind('}', pos - 1);
    if (close == std::string_view::npos) return 0;
    size_t i = close + 1;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == ',') {
      ++i;
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      if (i >= text.size() || text[i] == '{') return close + 1;
    }
    pos = close;
  }
  return 0;
}

std::string Describe(simdjson::error_code code) { return simdjson::error_message(code); }

// How a failed parse is reported; `offset` is where in the input the failure points, `text`
// the text that failed, starting at byte `text_offset` of the input.
std::string ParseFailureMessage(const std::string& path, const ParseFailure& failure,
                                int64_t offset, std::string_view text, size_t text_offset) {
  // simdjson finds these while indexing the whole text (or at its end), not at a byte it can
  // name: the offset would point at the start of the text. Invalid UTF-8 is found here
  // instead; a document that ends inside an array or object ends at the end of the text.
  if (failure.code == simdjson::UTF8_ERROR) {
    const size_t bad = FirstInvalidUtf8(text);
    offset = bad == std::string_view::npos ? -1 : static_cast<int64_t>(text_offset + bad);
  } else if (failure.code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    offset = static_cast<int64_t>(text_offset + text.size());
  } else if (failure.code == simdjson::UNCLOSED_STRING ||
             failure.code == simdjson::UNESCAPED_CHARS) {
    offset = -1;
  }
  return FormatLocated(SourceLocation{path, -1, -1, offset}, "",
                       "JSON error: " + Describe(failure.code));
}

// The warning for a text cut short that was read up to its last complete event.
std::string CutShortWarning(const std::string& error, size_t cut, size_t events) {
  return WithoutFinalPeriod(error) +
         fmt::format("; the file looks cut short, so the first {} bytes ({} events) were analysed",
                     cut, events);
}

// Start of the next event after `from`: just past a '}' that is followed by ',' and a line
// break before the next '{'. Kineto writes one event per line, and never puts an object
// inside an array within an event, so this pattern only occurs between events; a chunk cut
// anywhere else would fail to parse and the caller falls back to one pass over the document.
size_t NextEventBoundary(std::string_view text, size_t from, size_t limit) {
  while (from < limit) {
    size_t close = text.find("},", from);
    if (close == std::string_view::npos || close >= limit) return std::string_view::npos;
    size_t i = close + 2;
    bool newline = false;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) {
      newline = newline || text[i] == '\n';
      ++i;
    }
    if (newline && i < text.size() && text[i] == '{') return close + 1;
    from = close + 2;
  }
  return std::string_view::npos;
}

// Small enough for a chunk's text and simdjson's index of it to stay in the CPU's L2 cache
// between simdjson's two passes over it.
constexpr size_t kChunkBytes = size_t{512} << 10;
// Read past a chunk's nominal size to find its end in the same piece: events are far shorter.
constexpr size_t kLookaheadBytes = size_t{32} << 10;
// How often the event vectors are sized for what is still to come.
constexpr size_t kReserveEveryBytes = size_t{8} << 20;
// Where "traceEvents" must appear, and the longest stretch without an event boundary that a
// chunked read holds before it leaves the text to the one-pass reader (a trace written on one
// line, or not a trace).
constexpr size_t kHeaderSearchBytes = size_t{16} << 20;
constexpr size_t kMaxChunkBytes = size_t{64} << 20;

// Puts `value` at `*at` and restores the original byte when it goes out of scope.
class BytePatch {
 public:
  BytePatch(char* at, char value) : at_(at), saved_(*at) { *at = value; }
  ~BytePatch() { *at_ = saved_; }
  BytePatch(const BytePatch&) = delete;
  BytePatch& operator=(const BytePatch&) = delete;

 private:
  char* at_;
  char saved_;
};

// The part of a text that a chunked read is working on, read from a TextReader into a buffer
// that is reused: it moves forward through the text and holds only what is asked for, plus
// InputText::kInputPadding zero bytes after it for simdjson.
class TextWindow {
 public:
  explicit TextWindow(TextReader& reader) : reader_(reader) {}

  // Moves the window's start to text offset `from` (never backwards) and fills it to at least
  // `bytes` bytes from there, fewer only where the text ends. Returns all it holds from `from`.
  std::string_view Hold(size_t from, size_t bytes) {
    if (from > start_) {
      const size_t drop = std::min(from - start_, held_);
      std::memmove(buffer_.get(), buffer_.get() + drop, held_ - drop);
      held_ -= drop;
      start_ = from;
    }
    if (held_ < bytes && !at_end_) {
      Reserve(bytes);
      while (held_ < bytes && !at_end_) {
        read_failed_ = true;  // until Read returns
        const size_t n = reader_.Read(buffer_.get() + held_, bytes - held_);
        read_failed_ = false;
        held_ += n;
        at_end_ = n == 0;
      }
    }
    std::memset(buffer_.get() + held_, 0, InputText::kInputPadding);
    return {buffer_.get(), held_};
  }
  // The held bytes, for edits made and undone between two calls of Hold.
  char* writable() { return buffer_.get(); }
  bool at_end() const { return at_end_; }
  size_t end_offset() const { return start_ + held_; }
  // Whether the last error came from reading the text (a file that cannot be decoded or
  // expands past the limits) rather than from parsing it.
  bool read_failed() const { return read_failed_; }

 private:
  void Reserve(size_t bytes) {
    if (bytes <= capacity_) return;
    const size_t capacity = std::max(bytes, capacity_ * 2);
    std::unique_ptr<char[]> bigger(new char[capacity + InputText::kInputPadding]);
    if (held_) std::memcpy(bigger.get(), buffer_.get(), held_);
    buffer_ = std::move(bigger);
    capacity_ = capacity;
  }
  TextReader& reader_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  size_t start_ = 0;  // text offset of buffer_[0]
  size_t held_ = 0;
  bool at_end_ = false;
  bool read_failed_ = false;
};

// The last piece of a text that ends inside an event: its complete events are parsed, and the
// warning is the one the whole-text reader gives for such a file (the JSON error a parse meets
// at the cut, where the events read end). `piece` starts at text offset `begin` with the ','
// (or '[') before its first event and may be edited. False where the piece's events do not
// parse: the caller then reads the text whole.
bool ParseUpToLastEvent(const TextReader& reader, std::string_view piece, char* writable,
                        size_t begin, const std::string& path, KinetoParser& parser,
                        TraceData& out) {
  writable[0] = '[';
  // The error the whole text meets, found on this piece alone: the events before it parse.
  std::string error;
  {
    TraceData scratch;
    KinetoParser probe(nullptr, path, scratch);
    probe.SetOrigin(piece.data(), begin);
    try {
      probe.ParseEventArray(piece);
      return false;  // it parses after all: not cut inside an event
    } catch (const ParseFailure& failure) {
      const int64_t offset =
          failure.where ? static_cast<int64_t>(begin) + (failure.where - piece.data()) : -1;
      error = ParseFailureMessage(path, failure, offset, piece, begin);
    }
  }
  // Just past the last complete event's '}', or the piece's start when it holds none.
  const size_t cut = LastEventBoundary(piece, piece.size());
  if (cut > 0) {
    char saved[InputText::kInputPadding];
    std::memcpy(saved, writable + cut + 1, sizeof saved);
    std::memset(writable + cut + 1, 0, sizeof saved);
    writable[cut] = ']';
    parser.SetOrigin(piece.data(), begin);
    const bool whole = parser.ParseEventArray(piece.substr(0, cut + 1)) == cut + 1;
    std::memcpy(writable + cut + 1, saved, sizeof saved);
    if (!whole) return false;
    out.chunks++;
  }
  out.truncated = true;
  out.cut_short_at = begin + cut;
  if (reader.truncated()) out.warnings.insert(out.warnings.begin(), reader.truncation_reason());
  out.warnings.push_back(CutShortWarning(error, begin + cut, out.total_events));
  return true;
}

// Large traces are parsed in chunks of ~512 KB of events, each ending at the first event
// boundary past that size, so that simdjson's index covers one chunk at a time and the text
// is read once, front to back: memory holds one chunk of the text (a compressed file is
// decoded as it is read) plus the event store. In its piece of the text the ',' before a
// chunk's first event and the ',' after its last become '[' and ']' while it is parsed. The
// last chunk runs to the last ']' of the text; simdjson reports where the event array inside
// it closes.
// Returns false, leaving `out` to be rebuilt by the caller, if the text is small, cut short,
// not laid out as Kineto writes it, or anything fails to parse; else `starts` is the range of
// the starts of the events kept.
bool ParseInChunks(TextReader& reader, const std::string& path, TraceData& out,
                   StartRange* starts) {
  TextWindow window(reader);
  KinetoParser parser(nullptr, path, out);
  parser.set_release_pages(false);
  try {
    // "traceEvents" follows the few top-level keys Kineto writes first: look at a little text,
    // then more.
    std::string_view head = window.Hold(0, 2 * kChunkBytes);
    if (window.at_end()) return false;  // a small text: one pass is as good
    size_t key = head.find("\"traceEvents\"");
    while (key == std::string_view::npos && !window.at_end() && head.size() < kHeaderSearchBytes) {
      head = window.Hold(0, head.size() * 2);
      key = head.find("\"traceEvents\"");
    }
    if (key == std::string_view::npos) return false;
    size_t open = head.find_first_not_of(" \t\r\n:", key + 13);
    if (open == std::string_view::npos || head[open] != '[') return false;
    parser.Reserve(2 * kChunkBytes + 64);  // grown by simdjson if one chunk is larger
    bool saw = false;
    std::string header(head.substr(0, open + 1));
    // A UTF-8 byte-order mark is not JSON: blanks, as the one-pass reader reads it.
    if (header.starts_with("\xEF\xBB\xBF")) header.replace(0, 3, "   ");
    header += "]}";
    auto padded_header = InputText::FromString(header);
    parser.Parse(padded_header.text(), &saw);
    size_t begin = open;  // the chunk's opening bracket: '[' or the ',' before its first event
    size_t next_reserve = begin + kReserveEveryBytes;
    while (true) {
      std::string_view piece = window.Hold(begin, kChunkBytes + kLookaheadBytes);
      size_t boundary = NextEventBoundary(piece, kChunkBytes, piece.size());
      // An event longer than the lookahead: hold more until a boundary or the end of the text.
      while (boundary == std::string_view::npos && !window.at_end()) {
        if (piece.size() >= kMaxChunkBytes) return false;
        piece = window.Hold(begin, piece.size() * 2);
        boundary = NextEventBoundary(piece, kChunkBytes, piece.size());
      }
      char* writable = window.writable();
      if (boundary == std::string_view::npos) {
        // The rest of the text is in `piece`.
        const size_t last = piece.find_last_not_of(" \t\r\n");
        if (reader.truncated() || last == std::string_view::npos ||
            (piece[last] != '}' && piece[last] != ']')) {
          // Cut short (an interrupted profiler or copy): read up to the last complete event.
          if (!ParseUpToLastEvent(reader, piece, writable, begin, path, parser, out)) return false;
          out.input_bytes = window.end_offset();
          break;
        }
        size_t last_bracket = piece.rfind(']');
        if (last_bracket == std::string_view::npos || last_bracket == 0) return false;
        writable[0] = '[';
        parser.SetOrigin(piece.data(), begin);
        size_t close = parser.ParseEventArray(piece.substr(0, last_bracket + 1)) - 1;
        out.chunks++;
        // Top-level keys after the events ("traceName", "baseTimeNanoseconds", ...).
        size_t after = piece.find_first_not_of(" \t\r\n", close + 1);
        if (after != std::string_view::npos && piece[after] == ',') {
          std::string trailer = "{" + std::string(piece.substr(after + 1));
          auto padded_trailer = InputText::FromString(trailer);
          parser.Parse(padded_trailer.text(), &saw);
        }
        out.input_bytes = window.end_offset();
        break;
      }
      // simdjson may read the padding after the chunk: zeros there, as after any text it reads.
      const size_t length = boundary + 1;
      char saved[InputText::kInputPadding];
      std::memcpy(saved, writable + length, sizeof saved);
      std::memset(writable + length, 0, sizeof saved);
      writable[0] = '[';
      writable[boundary] = ']';
      std::string_view chunk = piece.substr(0, length);
      parser.SetOrigin(chunk.data(), begin);
      // The whole chunk must be one array: an early ']' would drop events.
      const bool whole = parser.ParseEventArray(chunk) == chunk.size();
      std::memcpy(writable + length, saved, sizeof saved);
      if (!whole) return false;
      out.chunks++;
      begin += boundary;
      if (begin >= next_reserve) {
        const double read = reader.fraction_read();
        if (read > 0) parser.ReserveEvents(1.0 / read);
        next_reserve = begin + kReserveEveryBytes;
      }
    }
    parser.Finish();
    *starts = parser.starts();
  } catch (const ParseFailure&) {
    return false;
  } catch (const UserError&) {
    // Loading the whole file would fail the same way, after decoding as much again.
    if (window.read_failed()) throw;
    return false;
  }
  return true;
}

}  // namespace

bool ParseMicrosecondsToNs(std::string_view token, int64_t* ns) {
  token = Trim(token);
  if (token.empty()) return false;
  size_t i = 0;
  bool negative = false;
  if (token[0] == '-') {
    negative = true;
    i = 1;
  }
  int64_t whole = 0;
  size_t digits = 0;
  // Timestamps have 13 to 16 digits before the point: up to two words of eight at once.
  // Each word is taken only where the digit-by-digit bound below could not have been met
  // inside it: INT64_MAX / 10000 is 922337203685477, and 92233719 x 10^7 + 9999999 is under it.
  for (int word = 0; word < 2 && i + 8 <= token.size() && whole <= 92233719; ++word) {
    const uint64_t eight = LoadWord(token.data() + i);
    if (!AllDigits(eight)) break;
    whole = whole * 100000000 + EightDigitsValue(eight);
    i += 8;
    digits += 8;
  }
  while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
    if (whole > (INT64_MAX / 10000)) return false;  // beyond ~292 years in ns
    whole = whole * 10 + (token[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0) return false;
  int64_t frac = 0;
  if (i < token.size() && token[i] == '.') {
    ++i;
    int places = 0;
    bool round_up = false;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      if (places < 3) {
        frac = frac * 10 + (token[i] - '0');
      } else if (places == 3) {
        round_up = token[i] >= '5';
      }
      ++places;
      ++i;
    }
    for (int p = std::min(places, 3); p < 3; ++p) frac *= 10;
    if (round_up) ++frac;
  }
  if (i < token.size()) {
    if (token[i] != 'e' && token[i] != 'E') return false;
    double value = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || ptr != token.data() + token.size() || !std::isfinite(value) ||
        std::fabs(value) > 9e15) {
      return false;
    }
    *ns = static_cast<int64_t>(std::llround(value * 1000.0));
    return true;
  }
  // Up to INT64_MAX ns: 9223372036854775.807 us is the last time that is representable.
  int64_t result = 0;
  if (__builtin_mul_overflow(whole, int64_t{1000}, &result) ||
      __builtin_add_overflow(result, frac, &result)) {
    return false;
  }
  *ns = negative ? -result : result;
  return true;
}

namespace {

// A profile covers seconds to minutes: an event further than this from the middle of the
// trace has a timestamp that cannot be right (a corrupt or hand-edited value), and would
// stretch the GPU span to years.
constexpr int64_t kMaxDistanceFromMedianNs = int64_t{24} * 3600 * 1000000000;

// Leaves out the events whose start is over kMaxDistanceFromMedianNs from the median start of
// all events, with one warning that counts them and names the first.
// A file cut short before baseTimeNanoseconds (Kineto writes it after the events) keeps
// timestamps relative to a base it no longer has. Timestamps before 1973 (10^17 ns) are not
// epoch times of their own.
void NoteLostTimeBase(TraceData& out) {
  if (!out.truncated || out.base_time_ns != 0) return;
  int64_t first_ns = INT64_MAX;
  for (const CpuEvent& e : out.cpu) first_ns = std::min(first_ns, e.ts_ns);
  for (const GpuEvent& e : out.gpu) first_ns = std::min(first_ns, e.ts_ns);
  constexpr int64_t kEpochTimestampNs = int64_t{100'000'000} * 1'000'000'000;
  if (first_ns == INT64_MAX || first_ns >= kEpochTimestampNs) return;
  out.clock_comparable = false;
  out.warnings.push_back(
      "the file is cut short before its baseTimeNanoseconds (written at its end): the time base "
      "of its timestamps is lost, so when it started is not compared with other files");
}

// `kept`: the range of the events' starts, if the reader kept it; found here otherwise.
void DropOutlyingEvents(TraceData& out, const StartRange* kept) {
  // The median lies between the earliest and the latest start: when those are within the
  // limit of each other, every start is within it of the median and nothing is dropped,
  // without copying the starts (8 bytes an event, faulted in) to select their median.
  StartRange range;
  if (kept) {
    range = *kept;
  } else {
    for (const CpuEvent& e : out.cpu) range.Add(e.ts_ns);
    for (const GpuEvent& e : out.gpu) range.Add(e.ts_ns);
  }
  // Timestamps are clamped to +-2^61 ns when read: the difference cannot overflow.
  if (range.earliest > range.latest || range.latest - range.earliest <= kMaxDistanceFromMedianNs)
    return;
  std::vector<int64_t> starts;
  starts.reserve(out.cpu.size() + out.gpu.size());
  for (const CpuEvent& e : out.cpu) starts.push_back(e.ts_ns);
  for (const GpuEvent& e : out.gpu) starts.push_back(e.ts_ns);
  if (starts.size() < 2) return;
  // The lower median: of two events, the earlier is kept.
  auto middle = starts.begin() + static_cast<std::ptrdiff_t>((starts.size() - 1) / 2);
  std::nth_element(starts.begin(), middle, starts.end());
  const int64_t median = *middle;
  auto far = [&](int64_t ts) {
    return ts > median + kMaxDistanceFromMedianNs || ts < median - kMaxDistanceFromMedianNs;
  };
  size_t dropped = 0;
  std::string example;
  auto note = [&](std::string_view kind, uint32_t name, int64_t ts) {
    if (dropped++ == 0) {
      example = fmt::format(
          "{} \"{}\" at ts {:.3f} us, {:.1f} hours from the median event", kind, out.Name(name),
          static_cast<double>(ts) / 1e3,
          std::abs(static_cast<double>(ts) - static_cast<double>(median)) / 3.6e12);  // ns per hour
    }
  };
  std::erase_if(out.cpu, [&](const CpuEvent& e) {
    if (!far(e.ts_ns)) return false;
    note("host event", e.name, e.ts_ns);
    return true;
  });
  std::erase_if(out.gpu, [&](const GpuEvent& e) {
    if (!far(e.ts_ns)) return false;
    note("GPU event", e.name, e.ts_ns);
    return true;
  });
  if (dropped == 0) return;
  out.warnings.push_back(fmt::format(
      "{} event{} more than 24 hours from the trace's median timestamp left out of the timeline: "
      "their \"ts\" cannot be right (the first: {})",
      dropped, dropped == 1 ? "" : "s", example));
}

// What every read does once the events are in.
void FinishTrace(TraceData& out, const StartRange* starts = nullptr) {
  DropOutlyingEvents(out, starts);
  NoteLostTimeBase(out);
  BuildLinks(out);
}

}  // namespace

TraceData ParseKinetoTrace(const InputText& input, const std::string& path, bool try_chunks) {
  TraceData out;
  out.path = path;
  out.input_bytes = input.text().size();
  if (input.truncated()) {
    out.truncated = true;
    out.warnings.push_back(input.truncation_reason());
  }
  std::string_view text = input.text();
  // A UTF-8 byte-order mark (some Windows tools write one) is not part of the JSON text, and
  // simdjson refuses it: it reads as blanks while the file is parsed (byte offsets unchanged).
  const bool bom = text.starts_with("\xEF\xBB\xBF");
  std::optional<BytePatch> bom_blanks[3];
  if (bom) {
    for (int i = 0; i < 3; ++i) bom_blanks[i].emplace(input.writable_text() + i, ' ');
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    // A compressed file cut short before its first block decodes to nothing: say that.
    ThrowUserError(SourceLocation{path, -1, -1, 0}, "",
                   input.truncated() ? input.truncation_reason() + ", before any data"
                                     : "empty file: not a Kineto trace");
  }
  if (text[first] != '{' && text[first] != '[') {
    // A name that promises a compression the bytes are not in comes first: the file is not
    // what its name says (compression is recognised by magic bytes, not by the name).
    const std::string misnamed = MisnamedCompression(path, input);
    const std::string but = misnamed.empty() ? "" : misnamed + "; ";
    // Compressed by a tool whose format is not read: said by its magic bytes, not "not JSON".
    if (const std::string_view format = UnreadCompressionName(text.substr(first));
        !format.empty()) {
      ThrowUserError(SourceLocation{path}, "",
                     fmt::format("{}unsupported compression ({}): gzip (.gz) and zstd (.zst) are "
                                 "read; decompress it, or recompress it with one of those",
                                 but, format));
    }
    if (!misnamed.empty()) {
      ThrowUserError(SourceLocation{path}, "",
                     but +
                         "as plain text it is not JSON either (a Kineto trace starts with '{' "
                         "or '[')");
    }
    const bool xplane = path.ends_with(".pb");
    ThrowUserError(SourceLocation{path, -1, -1, static_cast<int64_t>(first)}, "",
                   xplane ? "not JSON: XPlane profiles (.xplane.pb) are read by `sextant trace "
                            "report`; this command reads Kineto JSON traces"
                          : "not JSON: a Kineto trace starts with '{' or '['");
  }

  if (try_chunks && !input.truncated()) {
    std::unique_ptr<TextReader> reader = TextReader::Over(input);
    StartRange starts;
    if (ParseInChunks(*reader, path, out, &starts)) {
      FinishTrace(out, &starts);
      return out;
    }
  }
  std::vector<std::string> initial_warnings = out.warnings;
  out = TraceData{};
  out.path = path;
  out.input_bytes = input.text().size();
  out.truncated = input.truncated();
  out.warnings = initial_warnings;

  if (text.size() > 0xFFFFFFFFull) {
    ThrowUserError(SourceLocation{path}, "",
                   "JSON text larger than 4 GiB is not supported; split the trace per rank");
  }

  bool saw_events = false;
  auto run = [&](std::string_view body, const InputText& owner) -> std::pair<bool, std::string> {
    KinetoParser parser(&owner, path, out);
    try {
      parser.Parse(body, &saw_events);
      parser.Finish();
      return {true, ""};
    } catch (const ParseFailure& failure) {
      parser.Finish();
      const int64_t offset = failure.where ? failure.where - body.data() : -1;
      return {false, ParseFailureMessage(path, failure, offset, body, 0)};
    }
  };
  auto [ok, error] = run(text, input);
  if (!ok) {
    // A complete document ends with its closing bracket; one that does not was cut short
    // (an interrupted profiler or copy). Anything else is malformed: report where.
    size_t last = text.find_last_not_of(" \t\r\n");
    bool cut_short = input.truncated() || last == std::string_view::npos ||
                     (text[last] != '}' && text[last] != ']');
    if (!cut_short) throw UserError(error);
    // Re-read the prefix that ends with the last complete event, closed by hand; keep it if
    // it holds at least what the interrupted pass read.
    size_t limit = text.size();
    bool repaired = false;
    for (int attempt = 0; attempt < 8 && !repaired; ++attempt) {
      size_t cut = LastEventBoundary(text, limit);
      if (cut == 0) break;
      std::string closed(text.substr(0, cut));
      closed += text[first] == '[' ? "]" : "]}";
      InputText copy = InputText::FromString(closed);
      TraceData partial;
      partial.path = out.path;
      partial.input_bytes = out.input_bytes;
      partial.warnings = out.warnings;
      bool partial_saw = saw_events;
      size_t partial_events = out.total_events;
      std::swap(out, partial);
      saw_events = false;
      auto [ok2, error2] = run(copy.text(), copy);
      if (ok2 && saw_events && out.total_events >= partial_events) {
        out.truncated = true;
        out.cut_short_at = cut;
        out.warnings.push_back(CutShortWarning(error, cut, out.total_events));
        repaired = true;
      } else {
        std::swap(out, partial);
        saw_events = partial_saw;
        limit = cut - 1;
      }
    }
    if (!repaired) {
      if (out.total_events == 0) throw UserError(error);
      out.truncated = true;
      out.warnings.push_back(
          WithoutFinalPeriod(error) +
          fmt::format("; the file looks cut short, so the {} events read before it were analysed",
                      out.total_events));
    }
  }
  if (!saw_events) {
    ThrowUserError(SourceLocation{path}, "traceEvents",
                   "not a Kineto trace: no traceEvents array (rocprofv3 JSON and PyTorch "
                   "execution traces are different formats)");
  }
  if (out.total_events > 0 && out.events_with_phase == 0) {
    // A JSON array of other records (a launcher's run list, a benchmark's results) reads as
    // Chrome's array form; trace events always say their phase.
    ThrowUserError(SourceLocation{path}, "ph",
                   fmt::format("not a trace: none of its {} event{} has a \"ph\" (phase) key, "
                               "which every Chrome/Kineto trace event has",
                               out.total_events, out.total_events == 1 ? "" : "s"));
  }
  FinishTrace(out);
  return out;
}

std::optional<TraceData> StreamKinetoTrace(const std::string& path) {
  std::unique_ptr<TextReader> reader = TextReader::Open(path);
  TraceData out;
  out.path = path;
  StartRange starts;
  if (!ParseInChunks(*reader, path, out, &starts)) return std::nullopt;
  FinishTrace(out, &starts);
  return out;
}

TraceData ReadKinetoTrace(const std::string& path) {
  if (std::optional<TraceData> streamed = StreamKinetoTrace(path)) return std::move(*streamed);
  InputText input = InputText::Load(path);
  return ParseKinetoTrace(input, path, /*try_chunks=*/false);
}

}  // namespace sextant
