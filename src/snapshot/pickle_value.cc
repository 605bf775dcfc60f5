#include "snapshot/pickle_value.h"

#include <algorithm>

#include <fmt/format.h>

namespace sextant {

const char* PickleKindName(PickleKind kind) {
  switch (kind) {
    case PickleKind::kNone: return "None";
    case PickleKind::kBool: return "bool";
    case PickleKind::kInt: return "int";
    case PickleKind::kBigInt: return "int (wider than 64 bits)";
    case PickleKind::kFloat: return "float";
    case PickleKind::kString: return "str";
    case PickleKind::kBytes: return "bytes";
    case PickleKind::kList: return "list";
    case PickleKind::kTuple: return "tuple";
    case PickleKind::kDict: return "dict";
    case PickleKind::kSet: return "set";
    case PickleKind::kFrozenSet: return "frozenset";
  }
  return "?";
}

const PickleValue* PickleDocument::Find(PickleValue dict, std::string_view key) const {
  if (dict.kind != PickleKind::kDict) return nullptr;
  const PickleContainer& c = containers[dict.index];
  const auto& items = c.items;
  if (!c.key_order.empty()) {
    auto it = std::lower_bound(
        c.key_order.begin(), c.key_order.end(), key,
        [&](uint32_t pos, std::string_view k) { return strings[items[pos].index] < k; });
    if (it == c.key_order.end() || strings[items[*it].index] != key) return nullptr;
    return &items[*it + 1];
  }
  // Later keys win, as when Python replays SETITEMS into a dict.
  for (size_t i = items.size() & ~size_t{1}; i >= 2; i -= 2) {
    const PickleValue& k = items[i - 2];
    if (k.kind == PickleKind::kString && strings[k.index] == key) return &items[i - 1];
  }
  return nullptr;
}

int64_t PickleDocument::IndexDicts() {
  int64_t bytes = 0;
  for (PickleContainer& c : containers) {
    c.key_order.clear();
    if (c.kind != PickleKind::kDict || c.items.size() / 2 <= kIndexedDictKeys) continue;
    for (size_t i = 0; i + 1 < c.items.size(); i += 2) {
      if (c.items[i].kind == PickleKind::kString) c.key_order.push_back(static_cast<uint32_t>(i));
    }
    std::sort(c.key_order.begin(), c.key_order.end(), [&](uint32_t a, uint32_t b) {
      int cmp = strings[c.items[a].index].compare(strings[c.items[b].index]);
      return cmp != 0 ? cmp < 0 : a > b;
    });
    bytes += static_cast<int64_t>(c.key_order.size() * sizeof(uint32_t));
  }
  return bytes;
}

std::string PickleDocument::Repr(PickleValue v, int max_depth, size_t max_chars) const {
  std::string out;
  AppendRepr(out, v, max_depth, max_chars);
  return out;
}

void PickleDocument::AppendRepr(std::string& out, PickleValue v, int max_depth,
                                size_t max_chars) const {
  if (out.size() > max_chars) {
    if (out.size() < 3 || out.compare(out.size() - 3, 3, "...") != 0) out += "...";
    return;
  }
  switch (v.kind) {
    case PickleKind::kNone: out += "None"; return;
    case PickleKind::kBool: out += v.boolean ? "True" : "False"; return;
    case PickleKind::kInt: out += fmt::format("{}", v.integer); return;
    case PickleKind::kBigInt:
      out += fmt::format("<int of {} bytes>", strings[v.index].size());
      return;
    case PickleKind::kFloat: out += fmt::format("{}", v.number); return;
    case PickleKind::kString: out += fmt::format("'{}'", strings[v.index]); return;
    case PickleKind::kBytes: out += fmt::format("b'{}'", strings[v.index]); return;
    default: break;
  }
  if (max_depth <= 0) {
    out += "...";
    return;
  }
  const auto& items = containers[v.index].items;
  if (v.kind == PickleKind::kSet && items.empty()) {
    out += "set()";
    return;
  }
  const char* open = "[";
  const char* close = "]";
  if (v.kind == PickleKind::kTuple) open = "(", close = ")";
  if (v.kind == PickleKind::kDict || v.kind == PickleKind::kSet) open = "{", close = "}";
  if (v.kind == PickleKind::kFrozenSet) open = "frozenset({", close = "})";
  out += open;
  for (size_t i = 0; i < items.size(); ++i) {
    if (out.size() > max_chars) {
      out += "...";
      break;
    }
    if (i > 0) out += v.kind == PickleKind::kDict && i % 2 == 1 ? ": " : ", ";
    AppendRepr(out, items[i], max_depth - 1, max_chars);
  }
  if (v.kind == PickleKind::kTuple && items.size() == 1) out += ",";
  out += close;
}

}  // namespace sextant
