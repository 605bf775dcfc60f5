#include "trace/iteration_annotation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>

namespace sextant {
namespace {

// A parsed count: a value, or a number too large to hold (Python's ints are unbounded; a
// statistic past 10^18 is no real step's and is refused rather than wrapped).
struct Count {
  int64_t value = 0;
  bool too_large = false;
};
constexpr int64_t kLargest = 1'000'000'000'000'000'000;

bool IsWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The digits at `at` (advancing past them); nullopt when there are none.
std::optional<Count> Digits(std::string_view s, size_t& at) {
  const size_t first = at;
  Count c;
  for (; at < s.size() && IsDigit(s[at]); ++at) {
    if (c.value > (kLargest - (s[at] - '0')) / 10) c.too_large = true;
    if (!c.too_large) c.value = c.value * 10 + (s[at] - '0');
  }
  if (at == first) return std::nullopt;
  return c;
}

// TraceLens's _safe_int: Python's int() of the text (surrounding spaces, a sign, underscores
// between digits), 0 when it is not one.
Count PythonInt(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || !IsDigit(s.front()) || !IsDigit(s.back())) return {};
  Count c;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (!IsDigit(s[i + 1])) return {};  // a doubled underscore (the last char is a digit)
      continue;
    }
    if (!IsDigit(s[i])) return {};
    if (c.value > (kLargest - (s[i] - '0')) / 10) c.too_large = true;
    if (!c.too_large) c.value = c.value * 10 + (s[i] - '0');
  }
  if (negative) c.value = -c.value;
  return c;
}

bool Literal(std::string_view s, size_t& at, std::string_view text) {
  if (s.substr(at, text.size()) != text) return false;
  at += text.size();
  return true;
}

// The eight sums, refused when one is too large to hold.
std::optional<ChunkStats> Stats(const Count (&c)[4], const Count (&g)[4]) {
  for (const Count* x : {&c[0], &c[1], &c[2], &c[3], &g[0], &g[1], &g[2], &g[3]})
    if (x->too_large) return std::nullopt;
  return ChunkStats{c[0].value, c[1].value, c[2].value, c[3].value,
                    g[0].value, g[1].value, g[2].value, g[3].value};
}

// "(sq<n>sk<n>sqsq<n>sqsk<n>)" into sq, sk, sqsq, sqsk.
bool VllmGroup(std::string_view s, size_t& at, Count* out) {
  if (!Literal(s, at, "(")) return false;
  static constexpr std::string_view kTags[] = {"sq", "sk", "sqsq", "sqsk"};
  for (int i = 0; i < 4; ++i) {
    std::optional<Count> v;
    if (!Literal(s, at, kTags[i]) || !(v = Digits(s, at))) return false;
    out[i] = *v;
  }
  return Literal(s, at, ")");
}

// vLLM's detailed step: "execute_<n>_context_<n>(sq..sk..sqsq..sqsk..)_generation_<n>(...)"
// at the start of the text (what follows is not read; the request counts are not used).
std::optional<ChunkStats> Vllm(std::string_view s) {
  size_t at = 0;
  Count c[4], g[4];
  if (!Literal(s, at, "execute_") || !Digits(s, at) || !Literal(s, at, "_context_") ||
      !Digits(s, at) || !VllmGroup(s, at, c) || !Literal(s, at, "_generation_") || !Digits(s, at) ||
      !VllmGroup(s, at, g)) {
    return std::nullopt;
  }
  return Stats(c, g);
}

// The next "key=" of `body` at or after `i`, as re.findall's (\w+)= scanning finds it: the
// key, with `i` just past the '=' and some character still after it; nullopt at the end.
std::optional<std::string_view> NextKey(std::string_view body, size_t& i) {
  while (i < body.size()) {
    if (!IsWord(body[i])) {
      ++i;
      continue;
    }
    const size_t key = i;
    while (i < body.size() && IsWord(body[i])) ++i;
    if (i + 1 < body.size() && body[i] == '=') {
      const std::string_view name = body.substr(key, i - key);
      ++i;
      return name;
    }
  }
  return std::nullopt;
}

// SGLang's detailed step: "step[EXTEND|DECODE|MIXED ...sqsq=<n>...]" with c_* and g_* pairs,
// read as Python's dict(re.findall(r"(\w+)=(\d+)", body)): the last value of a key wins.
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
  // Some "sqsq=<digit>" before the first ']', which must exist.
  const size_t close = s.find(']', at);
  if (close == std::string_view::npos) return std::nullopt;
  bool marked = false;
  for (size_t i = s.find("sqsq=", at); i != std::string_view::npos && i + 5 < close;
       i = s.find("sqsq=", i + 1)) {
    if (IsDigit(s[i + 5])) {
      marked = true;
      break;
    }
  }
  if (!marked) return std::nullopt;
  const size_t open = s.find('[');
  const std::string_view body = s.substr(open + 1, s.rfind(']') - open - 1);
  static constexpr std::string_view kKeys[8] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk",
                                                "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
  Count v[8];
  size_t i = 0;
  while (std::optional<std::string_view> name = NextKey(body, i)) {
    if (!IsDigit(body[i])) continue;
    const Count value = *Digits(body, i);
    for (int k = 0; k < 8; ++k)
      if (*name == kKeys[k]) v[k] = value;
  }
  const Count c[4] = {v[0], v[1], v[2], v[3]}, g[4] = {v[4], v[5], v[6], v[7]};
  return Stats(c, g);
}

// ATOM's step: "prefill[...]" or "decode[...]" on the first line, with tok, sk, sqsq and
// sqsk, read as re.findall(r"(\w+)=(\[[^\]]*\](?:\.\.\.\+\d+)?|\S+)", body) and _safe_int;
// without both sqsq and sqsk it is a native annotation.
std::optional<ChunkStats> Atom(std::string_view s) {
  s = s.substr(0, s.find('\n'));  // '.' stops at a newline
  const bool prefill = s.starts_with("prefill[");
  if (!prefill && !s.starts_with("decode[")) return std::nullopt;
  const size_t open = s.find('['), close = s.rfind(']');
  if (close == std::string_view::npos || close < open) return std::nullopt;
  const std::string_view body = s.substr(open + 1, close - open - 1);
  std::map<std::string_view, std::string_view> kv;
  size_t next_close = body.find(']');  // the first ']' at or after the scan (kept, not rescanned)
  size_t i = 0;
  while (std::optional<std::string_view> name = NextKey(body, i)) {
    const size_t value = i;
    while (next_close != std::string_view::npos && next_close < i)
      next_close = body.find(']', next_close + 1);
    if (body[i] == '[' && next_close != std::string_view::npos) {
      i = next_close + 1;
      size_t after = i;
      if (Literal(body, after, "...+") && Digits(body, after)) i = after;
    } else {
      while (i < body.size() && !std::isspace(static_cast<unsigned char>(body[i]))) ++i;
    }
    if (i > value) kv[*name] = body.substr(value, i - value);
  }
  if (!kv.count("sqsq") || !kv.count("sqsk")) return std::nullopt;
  auto number = [&](std::string_view key) {
    auto it = kv.find(key);
    return it == kv.end() ? Count{} : PythonInt(it->second);
  };
  Count c[4], g[4];
  Count* at = prefill ? c : g;
  at[0] = number("tok");
  at[1] = number("sk");
  at[2] = number("sqsq");
  at[3] = number("sqsk");
  return Stats(c, g);
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
