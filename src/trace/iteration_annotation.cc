#include "trace/iteration_annotation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>

namespace sextant {
namespace {

constexpr int64_t kLargest = 1'000'000'000'000'000'000;  // a bound no real step comes near

bool IsWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads the digits at `at` (advancing it); nullopt if there are none or the number passes
// kLargest.
std::optional<int64_t> Digits(std::string_view s, size_t& at) {
  const size_t first = at;
  int64_t v = 0;
  while (at < s.size() && IsDigit(s[at])) {
    if (v > kLargest / 10) return std::nullopt;
    v = v * 10 + (s[at++] - '0');
  }
  if (at == first || v > kLargest) return std::nullopt;
  return v;
}

bool Literal(std::string_view s, size_t& at, std::string_view text) {
  if (s.substr(at, text.size()) != text) return false;
  at += text.size();
  return true;
}

// "(sq<n>sk<n>sqsq<n>sqsk<n>)" into sq, sk, sqsq, sqsk.
bool VllmGroup(std::string_view s, size_t& at, int64_t* out) {
  if (!Literal(s, at, "(")) return false;
  for (int i = 0; i < 4; ++i) {
    static constexpr std::string_view kTags[] = {"sq", "sk", "sqsq", "sqsk"};
    std::optional<int64_t> v;
    if (!Literal(s, at, kTags[i]) || !(v = Digits(s, at))) return false;
    out[i] = *v;
  }
  return Literal(s, at, ")");
}

// vLLM's detailed step: "execute_<n>_context_<n>(sq..sk..sqsq..sqsk..)_generation_<n>(...)"
// at the start of the text (what follows is not read).
std::optional<ChunkStats> Vllm(std::string_view s) {
  size_t at = 0;
  int64_t c[4], g[4];
  if (!Literal(s, at, "execute_") || !Digits(s, at) || !Literal(s, at, "_context_") ||
      !Digits(s, at) || !VllmGroup(s, at, c) || !Literal(s, at, "_generation_") || !Digits(s, at) ||
      !VllmGroup(s, at, g)) {
    return std::nullopt;
  }
  return ChunkStats{c[0], c[1], c[2], c[3], g[0], g[1], g[2], g[3]};
}

// The "key=value" pairs of `body` whose value starts with a digit, the last one of a key
// winning (Python's dict(re.findall(r"(\w+)=(\d+)", body))). A number past kLargest makes
// the whole text unreadable.
std::optional<std::map<std::string, int64_t>> NumberPairs(std::string_view body) {
  std::map<std::string, int64_t> pairs;
  size_t at = 0;
  while (at < body.size()) {
    if (!IsWord(body[at])) {
      ++at;
      continue;
    }
    const size_t key = at;
    while (at < body.size() && IsWord(body[at])) ++at;
    if (at + 1 < body.size() && body[at] == '=' && IsDigit(body[at + 1])) {
      const std::string name(body.substr(key, at - key));
      ++at;
      std::optional<int64_t> v = Digits(body, at);
      if (!v) return std::nullopt;
      pairs[name] = *v;
    }
  }
  return pairs;
}

int64_t Get(const std::map<std::string, int64_t>& pairs, const std::string& key) {
  auto it = pairs.find(key);
  return it == pairs.end() ? 0 : it->second;
}

// SGLang's detailed step: "step[EXTEND|DECODE|MIXED ...sqsq=<n>...]" with c_* and g_* pairs.
std::optional<ChunkStats> Sglang(std::string_view s) {
  size_t at = 0;
  if (!Literal(s, at, "step[")) return std::nullopt;
  std::string_view mode;
  for (std::string_view m : {"EXTEND", "DECODE", "MIXED"}) {
    if (s.substr(at, m.size()) == m) mode = m;
  }
  if (mode.empty()) return std::nullopt;
  at += mode.size();
  if (at < s.size() && IsWord(s[at])) return std::nullopt;  // \b after the mode
  // "sqsq=<digit>" before the first ']', which must exist.
  const size_t close = s.find(']', at);
  if (close == std::string_view::npos) return std::nullopt;
  const size_t sqsq = s.substr(0, close).find("sqsq=", at);
  if (sqsq == std::string_view::npos || sqsq + 5 >= close || !IsDigit(s[sqsq + 5]))
    return std::nullopt;
  const std::string_view body = s.substr(s.find('[') + 1, s.rfind(']') - s.find('[') - 1);
  std::optional<std::map<std::string, int64_t>> kv = NumberPairs(body);
  if (!kv) return std::nullopt;
  return ChunkStats{Get(*kv, "c_sq"), Get(*kv, "c_sk"), Get(*kv, "c_sqsq"), Get(*kv, "c_sqsk"),
                    Get(*kv, "g_sq"), Get(*kv, "g_sk"), Get(*kv, "g_sqsq"), Get(*kv, "g_sqsk")};
}

// ATOM's detailed step: "prefill[...]" or "decode[...]" with tok, sk, sqsq and sqsk (a value
// that is not a whole number counts 0, as TraceLens's _safe_int makes it).
std::optional<ChunkStats> Atom(std::string_view s) {
  const bool prefill = s.starts_with("prefill[");
  if (!prefill && !s.starts_with("decode[")) return std::nullopt;
  const size_t open = s.find('['), close = s.rfind(']');
  if (close == std::string_view::npos || close < open) return std::nullopt;
  if (s.find('\n') != std::string_view::npos) return std::nullopt;  // '.' stops at a newline
  const std::string_view body = s.substr(open + 1, close - open - 1);
  std::map<std::string, std::string_view> kv;
  size_t at = 0;
  while (at < body.size()) {
    if (!IsWord(body[at])) {
      ++at;
      continue;
    }
    const size_t key = at;
    while (at < body.size() && IsWord(body[at])) ++at;
    if (at + 1 >= body.size() || body[at] != '=') continue;
    const std::string name(body.substr(key, at - key));
    const size_t value = ++at;
    if (body[at] == '[' && body.find(']', at) != std::string_view::npos) {
      at = body.find(']', at) + 1;
    } else {
      while (at < body.size() && !std::isspace(static_cast<unsigned char>(body[at]))) ++at;
    }
    if (at > value) kv[name] = body.substr(value, at - value);
  }
  if (!kv.count("sqsq") || !kv.count("sqsk")) return std::nullopt;
  // A value that is all digits is its number (nullopt past kLargest); any other is 0.
  auto number = [&](const char* key) -> std::optional<int64_t> {
    auto it = kv.find(key);
    if (it == kv.end() || !std::all_of(it->second.begin(), it->second.end(), IsDigit)) return 0;
    size_t i = 0;
    return Digits(it->second, i);
  };
  const std::optional<int64_t> tok = number("tok"), sk = number("sk"), sqsq = number("sqsq"),
                               sqsk = number("sqsk");
  if (!tok || !sk || !sqsq || !sqsk) return std::nullopt;
  ChunkStats st;
  (prefill ? st.c_sq : st.g_sq) = *tok;
  (prefill ? st.c_sk : st.g_sk) = *sk;
  (prefill ? st.c_sqsq : st.g_sqsq) = *sqsq;
  (prefill ? st.c_sqsk : st.g_sqsk) = *sqsk;
  return st;
}

}  // namespace

std::optional<ChunkStats> ParseChunkStats(std::string_view annotation) {
  // TraceLens tries its formats in this order and takes the first that matches; the native
  // forms it would match in between carry no statistics and start differently.
  if (annotation.starts_with("execute_")) return Vllm(annotation);
  if (annotation.starts_with("step[")) return Sglang(annotation);
  return Atom(annotation);
}

AnnotationIndex::AnnotationIndex(const TraceData& trace) {
  std::vector<uint32_t> order;
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    if (trace.cpu[i].kind == CpuKind::kAnnotation) order.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return trace.cpu[a].ts_ns < trace.cpu[b].ts_ns; });
  int64_t running = INT64_MIN;
  for (uint32_t i : order) {
    const CpuEvent& ev = trace.cpu[i];
    running = std::max(running, ev.end_ns());
    start_.push_back(ev.ts_ns);
    max_end_.push_back(running);
    name_.push_back(ev.name);
  }
}

uint32_t AnnotationIndex::Enclosing(int64_t begin_ns, int64_t end_ns) const {
  // Annotations before the first whose running end passes end_ns all end too early; that
  // one ends after the window, and if it starts after the window's start, so does every
  // later one.
  const size_t i = static_cast<size_t>(std::upper_bound(max_end_.begin(), max_end_.end(), end_ns) -
                                       max_end_.begin());
  if (i == max_end_.size() || start_[i] > begin_ns) return 0;
  return name_[i];
}

StepAnnotations::StepAnnotations(const TraceData& trace)
    : trace_(trace), index_(trace), replayed_by_(trace.cpu.size(), -1) {
  // Kernels are in time order, so the first launch seen is the first replay. The walk up from
  // a kernel's op stops 256 levels up, bounding a hostile trace's cost.
  constexpr int kMaxNesting = 256;
  for (const GpuEvent& g : trace.gpu) {
    if (g.launcher < 0 || g.op < 0 || !trace.cpu[static_cast<size_t>(g.launcher)].graph_launch)
      continue;
    int32_t op = g.op;
    for (int depth = 0; op >= 0 && depth < kMaxNesting; ++depth) {
      int32_t& by = replayed_by_[static_cast<size_t>(op)];
      if (by >= 0) break;  // and so are its ancestors
      by = g.launcher;
      op = trace.cpu[static_cast<size_t>(op)].parent;
    }
  }
}

uint32_t StepAnnotations::Of(size_t cpu_index) const {
  const int32_t launch = replayed_by_[cpu_index];
  const CpuEvent& at =
      launch >= 0 ? trace_.cpu[static_cast<size_t>(launch)] : trace_.cpu[cpu_index];
  return index_.Enclosing(at.ts_ns, at.end_ns());
}

}  // namespace sextant
