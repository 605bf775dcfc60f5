#include "trace/protobuf_wire_scan.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace sextant {

ProtobufWireScan::ProtobufWireScan(std::string_view bytes, std::span<const WireSchemaField> schema)
    : bytes_(bytes), schema_(schema) {
  if (schema.size() > kMaxWireSchemaFields)
    throw std::logic_error("protobuf wire scan: schema of more than 64 fields");
}

uint64_t ProtobufWireScan::Varint(size_t& pos, size_t end) const {
  const size_t start = pos;
  uint64_t value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos >= end) Malformed(start);
    const auto byte = static_cast<uint8_t>(bytes_[pos++]);
    if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return value;
  }
  Malformed(start);  // more than ten bytes
  return 0;          // not reached: Malformed throws
}

ProtobufWireScan::Field ProtobufWireScan::Next(size_t& pos, size_t end) {
  const size_t start = pos;
  const uint64_t key = Varint(pos, end);
  Field f;
  f.number = static_cast<uint32_t>(key >> 3);
  f.wire = static_cast<int>(key & 7);
  if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) Malformed(start);
  switch (f.wire) {
    case 0: Varint(pos, end); break;
    case 1:
      if (end - pos < 8) Malformed(start);
      pos += 8;
      break;
    case 5:
      if (end - pos < 4) Malformed(start);
      pos += 4;
      break;
    case 2: {
      const uint64_t n = Varint(pos, end);
      if (n > end - pos) Malformed(start);
      f.begin = pos;
      f.end = pos += n;
      break;
    }
    case 3: {
      // Skipped with a stack of its own, not by recursion: groups may nest as deep as the
      // input is long.
      std::vector<uint64_t> open{f.number};
      while (!open.empty()) {
        const size_t inner = pos;
        const uint64_t k = Varint(pos, end);
        if ((k >> 3) == 0) Malformed(inner);
        if ((k & 7) == 4) {
          if ((k >> 3) != open.back()) Malformed(inner);
          open.pop_back();
          continue;
        }
        Count(inner);
        if ((k & 7) == 3) {
          open.push_back(k >> 3);
        } else {
          pos = inner;
          Next(pos, end);
        }
      }
      break;
    }
    default: Malformed(start);  // an end-group without its start, or no such wire type
  }
  return f;
}

std::string ProtobufWireScan::Key() const {
  std::string key;
  for (const auto& [name, index] : where_)
    key += fmt::format("{}{}[{}]", key.empty() ? "" : ".", name, index);
  return key;
}

void ProtobufWireScan::Walk(int type, size_t begin, size_t end) {
  Begin(type, begin, end);
  std::array<size_t, kMaxWireSchemaFields> index{};
  for (size_t pos = begin; pos < end;) {
    const size_t start = pos;
    const Field f = Next(pos, end);
    size_t k = 0;
    while (k < schema_.size() &&
           !(schema_[k].in == type && schema_[k].number == f.number && schema_[k].wire == f.wire)) {
      ++k;
    }
    if (k == schema_.size()) {
      Count(start);  // protobuf keeps it (a group: what it holds is counted as it is skipped)
      continue;
    }
    const WireSchemaField& known = schema_[k];
    if (known.type == kWireScalar) continue;
    where_.emplace_back(known.name, index[k]++);
    Count(start);
    Entered(known, where_.back().second, start, f.begin, f.end);
    if (known.type != kWireCountedString) {
      if (where_.size() > kMaxWireNesting) Malformed(start);
      Walk(known.type, f.begin, f.end);
    }
    where_.pop_back();
  }
  End(type);
}

}  // namespace sextant
