#include "trace/protobuf_wire_scan.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace sextant {
namespace {

std::string Varint(uint64_t n) {
  std::string out;
  while (n >= 0x80) {
    out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  return out + static_cast<char>(n);
}
std::string Delimited(uint32_t field, const std::string& contents) {
  return Varint(field << 3 | 2) + Varint(contents.size()) + contents;
}
std::string Number(uint32_t field, uint64_t n) { return Varint(field << 3) + Varint(n); }

// A list of items, each with a name and sub-items (recursive), and repeated tags. The scan
// reads `bytes` where they lie: they must outlive it.
class ItemScan final : public ProtobufWireScan {
 public:
  explicit ItemScan(const std::string& bytes) : ProtobufWireScan(bytes, kSchema) {}
  explicit ItemScan(std::string&&) = delete;
  void Check() { Walk(kList, 0, bytes().size()); }

  std::vector<size_t> counted;       // offsets
  std::vector<std::string> entered;  // key paths
  size_t deepest = 0;

 private:
  enum Type { kList, kItem };
  static constexpr WireSchemaField kSchema[] = {
      {kList, 1, 2, kItem, "items"},
      {kItem, 1, 2, kWireScalar, "name"},
      {kItem, 2, 0, kWireScalar, "id"},
      {kItem, 3, 2, kItem, "children"},
      {kItem, 4, 2, kWireCountedString, "tags"},
  };
  void Count(size_t offset) override { counted.push_back(offset); }
  void Entered(const WireSchemaField&, size_t, size_t, size_t, size_t) override {
    entered.push_back(Key());
    deepest = std::max(deepest, entered.back().size());
  }
  [[noreturn]] void Malformed(size_t offset) const override {
    throw std::runtime_error("malformed at " + std::to_string(offset));
  }
};

TEST(ProtobufWireScanTest, CountsWhatProtobufWouldBuildAndNamesWhereItIs) {
  const std::string first = Delimited(1, Delimited(1, "a") + Number(2, 7) + Delimited(4, "x") +
                                             Delimited(3, Delimited(1, "child")));
  const std::string second = Delimited(1, Number(9, 1));  // a field the schema does not declare
  const std::string both = first + second;
  ItemScan scan(both);
  scan.Check();
  // items[0], its tag, its child, items[1] and its unknown field 9; names and ids are not.
  EXPECT_EQ(scan.counted.size(), 5u);
  EXPECT_EQ(scan.counted.front(), 0u);
  EXPECT_EQ(scan.counted.back(), first.size() + 2);
  EXPECT_EQ(scan.entered, (std::vector<std::string>{"items[0]", "items[0].tags[0]",
                                                    "items[0].children[0]", "items[1]"}));
}

TEST(ProtobufWireScanTest, AFieldOfTheWrongWireTypeIsOneProtobufDoesNotKnow) {
  // "children" as a number: kept aside by protobuf, not walked.
  const std::string bytes = Delimited(1, Number(3, 5));
  ItemScan scan(bytes);
  scan.Check();
  EXPECT_EQ(scan.counted.size(), 2u);
  EXPECT_EQ(scan.entered, std::vector<std::string>{"items[0]"});
}

TEST(ProtobufWireScanTest, WhatAGroupHoldsIsCountedWithoutRecursion) {
  // A group of field 7 holding two numbers and a group of field 8 (start 3, end 4).
  const std::string group = Varint(7 << 3 | 3) + Number(1, 1) + Number(2, 2) + Varint(8 << 3 | 3) +
                            Varint(8 << 3 | 4) + Varint(7 << 3 | 4);
  const std::string item = Delimited(1, group);
  ItemScan scan(item);
  scan.Check();
  EXPECT_EQ(scan.counted.size(), 5u);  // the item, the group and what it holds

  // A million nested groups: skipped on a stack of their own.
  std::string deep;
  for (int i = 0; i < 1'000'000; ++i) deep += Varint(7 << 3 | 3);
  for (int i = 0; i < 1'000'000; ++i) deep += Varint(7 << 3 | 4);
  ItemScan nested(deep);
  nested.Check();
  EXPECT_EQ(nested.counted.size(), 1'000'000u);
}

TEST(ProtobufWireScanTest, RefusesBrokenWireFormatAtItsOffset) {
  auto malformed = [](const std::string& bytes) {
    try {
      ItemScan scan(bytes);
      scan.Check();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(malformed(Delimited(1, "") + "\x0a\x05"
                                         "abc"),
            "malformed at 2");                                         // cut short
  EXPECT_EQ(malformed(std::string(11, '\xff')), "malformed at 0");     // a varint of 11 bytes
  EXPECT_EQ(malformed(std::string("\x00\x01", 2)), "malformed at 0");  // field number 0
  EXPECT_EQ(malformed(Varint(7 << 3 | 4)), "malformed at 0");  // an end-group without its start
  EXPECT_EQ(malformed(Varint(7 << 3 | 3) + Varint(8 << 3 | 4)), "malformed at 1");
  EXPECT_EQ(malformed(Varint(1 << 3 | 6)), "malformed at 0");  // no wire type 6
}

// Items nested 100,000 deep: refused past protobuf's recursion limit, not walked down to the
// bottom (where the walk's own stack would give out).
TEST(ProtobufWireScanTest, RefusesMessagesNestedDeeperThanProtobufParses) {
  auto nested = [](size_t depth) {
    // Written from the outside in; each item's length is that of all the items inside it.
    std::vector<size_t> contents(depth, 0);
    for (size_t k = depth - 1; k-- > 0;)
      contents[k] = 1 + Varint(contents[k + 1]).size() + contents[k + 1];
    std::string bytes = Varint(1 << 3 | 2) + Varint(contents[0]);
    for (size_t k = 1; k < depth; ++k) bytes += Varint(3 << 3 | 2) + Varint(contents[k]);
    return bytes;
  };
  const std::string within = nested(kMaxWireNesting), beyond = nested(100'000);
  ItemScan fine(within);
  fine.Check();
  EXPECT_EQ(fine.counted.size(), kMaxWireNesting);
  ItemScan deep(beyond);
  EXPECT_THROW(deep.Check(), std::runtime_error);
  EXPECT_EQ(deep.counted.size(), kMaxWireNesting + 1);
}

}  // namespace
}  // namespace sextant
