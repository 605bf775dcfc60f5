// Walks a serialized protobuf message by the schema its reader declares, without building
// anything: protobuf turns even a 2-byte empty message into an object of 50-200 bytes, so the
// readers of untrusted protobuf (XPlane profiles, the HLO modules inside them) count what
// protobuf would build and refuse a file past its budget before handing it to protobuf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sextant {

// A field a reader declares: in a message of type `in`, field `number` with wire type `wire`
// (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32) holds a message of type `type` (the
// reader's own numbering) or is one of the two kinds below. A field number declared with
// another wire type is a field of no known meaning to protobuf, and so to the scan.
struct WireSchemaField {
  int in;
  uint32_t number;
  int wire;
  int type;
  const char* name;  // as the key path names it
};
inline constexpr int kWireScalar = -1;         // a number or a singular string: nothing built
inline constexpr int kWireCountedString = -2;  // an element of a repeated string: one object

// Messages nested deeper than protobuf parses by default (its recursion limit): malformed.
inline constexpr size_t kMaxWireNesting = 100;
// The most fields a schema may declare.
inline constexpr size_t kMaxWireSchemaFields = 64;

class ProtobufWireScan {
 public:
  // `bytes` are read where they lie (they must outlive the scan); `schema` holds at most
  // kMaxWireSchemaFields fields.
  ProtobufWireScan(std::string_view bytes, std::span<const WireSchemaField> schema);
  virtual ~ProtobufWireScan() = default;
  ProtobufWireScan(const ProtobufWireScan&) = delete;
  ProtobufWireScan& operator=(const ProtobufWireScan&) = delete;

 protected:
  struct Field {
    uint32_t number = 0;
    int wire = 0;
    size_t begin = 0, end = 0;  // a length-delimited field's contents
  };

  // Walks bytes [begin, end) as a message of `type`: Counts every field protobuf keeps as an
  // object of its own (a declared message or repeated string, a field of no known meaning and
  // what a group holds) and walks each declared message.
  void Walk(int type, size_t begin, size_t end);
  // Reads the key at `pos` and skips its value, leaving `pos` after it. A group is skipped
  // whole, each field inside it Counted (protobuf keeps them).
  Field Next(size_t& pos, size_t end);
  // "planes[3].lines[0].events[12]": the declared fields being walked, outermost first.
  std::string Key() const;
  std::string_view bytes() const { return bytes_; }

  // Something protobuf would build, whose field starts at `offset`.
  virtual void Count(size_t offset) = 0;
  // Before and after a message of `type` in [begin, end) is walked.
  virtual void Begin(int /*type*/, size_t /*begin*/, size_t /*end*/) {}
  virtual void End(int /*type*/) {}
  // A declared message or repeated string, element `index` of its field, Counted at `offset`
  // and named by Key(); its contents are [begin, end).
  virtual void Entered(const WireSchemaField& /*field*/, size_t /*index*/, size_t /*offset*/,
                       size_t /*begin*/, size_t /*end*/) {}
  // The wire format is broken (or nested too deep) at `offset`: must throw.
  [[noreturn]] virtual void Malformed(size_t offset) const = 0;

 private:
  uint64_t Varint(size_t& pos, size_t end) const;

  std::string_view bytes_;
  std::span<const WireSchemaField> schema_;
  std::vector<std::pair<const char*, size_t>> where_;
};

}  // namespace sextant
