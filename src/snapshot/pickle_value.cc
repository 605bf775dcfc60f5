#include "snapshot/pickle_value.h"

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
  const auto& items = containers[dict.index].items;
  // Later keys win, as when Python replays SETITEMS into a dict.
  for (size_t i = items.size() & ~size_t{1}; i >= 2; i -= 2) {
    const PickleValue& k = items[i - 2];
    if (k.kind == PickleKind::kString && strings[k.index] == key) return &items[i - 1];
  }
  return nullptr;
}

std::string PickleDocument::Repr(PickleValue v, int max_depth) const {
  switch (v.kind) {
    case PickleKind::kNone: return "None";
    case PickleKind::kBool: return v.boolean ? "True" : "False";
    case PickleKind::kInt: return fmt::format("{}", v.integer);
    case PickleKind::kBigInt: return fmt::format("<int of {} bytes>", strings[v.index].size());
    case PickleKind::kFloat: return fmt::format("{}", v.number);
    case PickleKind::kString: return fmt::format("'{}'", strings[v.index]);
    case PickleKind::kBytes: return fmt::format("b'{}'", strings[v.index]);
    default: break;
  }
  if (max_depth <= 0) return "...";
  const auto& items = containers[v.index].items;
  const char* open = "[";
  const char* close = "]";
  if (v.kind == PickleKind::kTuple) open = "(", close = ")";
  if (v.kind == PickleKind::kDict || v.kind == PickleKind::kSet) open = "{", close = "}";
  if (v.kind == PickleKind::kFrozenSet) open = "frozenset({", close = "})";
  std::string out = open;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += v.kind == PickleKind::kDict && i % 2 == 1 ? ": " : ", ";
    out += Repr(items[i], max_depth - 1);
  }
  if (v.kind == PickleKind::kTuple && items.size() == 1) out += ",";
  if (v.kind == PickleKind::kSet && items.empty()) return "set()";
  out += close;
  return out;
}

}  // namespace sextant
