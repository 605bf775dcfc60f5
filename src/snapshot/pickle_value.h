// The data model produced by the safe pickle reader: plain Python values only (None, bool,
// int, float, str, bytes, list, tuple, dict, set, frozenset). Containers and strings live in
// arenas owned by a PickleDocument and values refer to them by index, so memo references
// (BINGET of a dict already seen) share one container as in Python, cycles cannot leak, and
// values are small and cheap to copy. A memo reference never copies: a pickle of 2 MB that
// names one memoised container a thousand times is still a document of about 2 MB.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

enum class PickleKind : uint8_t {
  kNone,
  kBool,
  kInt,     // fits in int64
  kBigInt,  // wider than int64: little-endian two's complement bytes in the string arena
  kFloat,
  kString,  // UTF-8 text (Python str)
  kBytes,   // Python bytes / bytearray / protocol-0 str
  kList,
  kTuple,
  kDict,  // items are key, value, key, value, ... in insertion order
  kSet,
  kFrozenSet,
};

const char* PickleKindName(PickleKind kind);

struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  union {
    bool boolean;
    int64_t integer;
    double number;
    uint32_t index;  // into PickleDocument::strings or ::containers
  };
  PickleValue() : integer(0) {}

  static PickleValue None() { return PickleValue(); }
  static PickleValue Bool(bool b) {
    PickleValue v;
    v.kind = PickleKind::kBool;
    v.boolean = b;
    return v;
  }
  static PickleValue Int(int64_t i) {
    PickleValue v;
    v.kind = PickleKind::kInt;
    v.integer = i;
    return v;
  }
  static PickleValue Float(double d) {
    PickleValue v;
    v.kind = PickleKind::kFloat;
    v.number = d;
    return v;
  }
  static PickleValue Ref(PickleKind kind, uint32_t index) {
    PickleValue v;
    v.kind = kind;
    v.index = index;
    return v;
  }

  bool IsContainer() const { return kind >= PickleKind::kList; }
  bool IsText() const { return kind == PickleKind::kString || kind == PickleKind::kBytes; }
};

struct PickleContainer {
  PickleKind kind = PickleKind::kList;
  std::vector<PickleValue> items;
  // Large dicts only: positions of their string keys, ordered by key text and, for equal
  // keys, last position first, so that Find is a binary search (see IndexDicts).
  std::vector<uint32_t> key_order;
};

class PickleDocument {
 public:
  PickleValue root;
  std::vector<std::string> strings;
  std::vector<PickleContainer> containers;

  std::string_view Text(PickleValue v) const { return strings[v.index]; }
  const std::vector<PickleValue>& Items(PickleValue v) const { return containers[v.index].items; }
  // What reading cost: values pushed (memo references included) and bytes held in the
  // arenas, as PickleLimits bounds them.
  int64_t values = 0;
  int64_t bytes = 0;

  // Dict lookup by string key, the last one winning as in Python; nullptr when `dict` is not
  // a dict or has no such key. Logarithmic for indexed dicts, a short scan for small ones.
  const PickleValue* Find(PickleValue dict, std::string_view key) const;
  // Indexes every dict with more than kIndexedDictKeys keys for Find; the reader calls it
  // once the document is complete. Returns the bytes the indexes take.
  int64_t IndexDicts();
  static constexpr size_t kIndexedDictKeys = 16;
  // Python-like rendering for messages and tests, nested at most `max_depth` levels and cut
  // with "..." beyond `max_chars` (memo references can make a small pickle a huge tree).
  std::string Repr(PickleValue v, int max_depth = 8, size_t max_chars = 1 << 16) const;

 private:
  void AppendRepr(std::string& out, PickleValue v, int max_depth, size_t max_chars) const;
};

}  // namespace sextant
