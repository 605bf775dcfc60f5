// The HLO instructions of the programs an XLA profile ran, printed as XLA prints them
// (`bf16[1,32,60,104,16]{4,3,2,1,0}`): the operands, the output, the metadata and the
// custom-call target of the instruction each device kernel names in its `hlo_op` stat, found
// the way TraceLens's JAX report finds them in that text (TraceLens/util.py,
// JaxProfileProcessor).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace sextant {

struct HloInstructionText {
  std::string output;                 // "bf16[1,5120,34,31,53]{4,3,2,1,0}", a tuple "(a, b)"
  std::vector<std::string> operands;  // the shape text of each operand (dtype b*, f* or s*)
  // What XLA prints inside "metadata={...}": "op_name=\"x\" source_file=\"f.py\"
  // source_line=7"; "" without metadata.
  std::string metadata;
  std::string custom_call_target;  // "__cudnn$convForward"; "" if not a custom call
};

// "bf16" for xla.PrimitiveType 16, "" for a type this table does not know.
std::string_view HloTypeName(int element_type);

// How much text the HLO of a profile's modules may print as. An instruction prints the shape of
// each operand it names, so a small module whose instructions name one large shape many times
// would print as gigabytes: the modules of a profile may print as at most kHloTextPerProtoByte
// times the bytes of their serialized protos plus kFreeHloTextBytes (XLA's own modules print as
// less text than their protos: 0.6 to 0.95 times in the corpus).
inline constexpr size_t kHloTextPerProtoByte = 16;
inline constexpr size_t kFreeHloTextBytes = size_t{1} << 20;

// How many messages protobuf may build from a profile's HLO protos, counted on their wire
// format before protobuf parses one: at most kFreeHloMessages plus one per
// kMinBytesPerHloMessage bytes of the protos. Protobuf makes each message (an instruction, a
// shape, a layout, metadata) and each field it does not declare an object of 16-130 bytes
// however few bytes it takes (an empty instruction takes 2), so 10 MB of empty instructions
// would take 0.6 GB; XLA's own modules take 11-17 bytes per message in the corpus.
inline constexpr size_t kFreeHloMessages = 100'000;
inline constexpr size_t kMinBytesPerHloMessage = 8;

class HloModules {
 public:
  // Adds the modules of one serialized xla.HloProto; returns false if it does not parse. A
  // module whose protobuf messages or text would take the modules added so far past their
  // budgets (above) is left out, counted as refused (Has is true: its kernels find no
  // instruction) and `*refused` says why, naming it; `where` is the file and the byte offset
  // the proto starts at, if known, so that the message locates what was too many.
  bool Add(std::string_view hlo_proto, std::string* refused = nullptr,
           const SourceLocation& where = {});
  // The instruction `name` of the module `module` (its first program, if compiled several
  // times), shared by every device that ran it. Null where TraceLens finds nothing: a root
  // instruction (its printed line starts with ROOT) or one whose line has neither metadata nor
  // a floating-point or get-tuple-element type.
  std::shared_ptr<const HloInstructionText> Find(std::string_view module,
                                                 std::string_view name) const;
  // Whether the module `module` was added (or refused for the size of its text).
  bool Has(std::string_view module) const { return modules_.find(module) != modules_.end(); }
  // The bytes of text the added modules print as, and of their serialized protos.
  size_t text_bytes() const { return text_bytes_; }
  size_t proto_bytes() const { return proto_bytes_; }
  // The protobuf messages counted in the protos parsed so far (those the budget let through).
  size_t messages() const { return messages_; }

 private:
  std::map<std::string,
           std::map<std::string, std::shared_ptr<const HloInstructionText>, std::less<>>,
           std::less<>>
      modules_;
  size_t text_bytes_ = 0;
  size_t proto_bytes_ = 0;
  // The messages of the protos protobuf has parsed, and their bytes.
  size_t messages_ = 0;
  size_t scanned_bytes_ = 0;
};

// Byte size of an element of an HLO type name ("bf16" 2, "f32" 4, "pred" 1), 0 if unknown.
int HloTypeBytes(std::string_view type);

// The operand shapes TraceLens's JAX report takes from shape texts: for each text with a
// "<type>[<dims>]{<layout>}" (non-empty dims and layout), its type and dims; others skipped.
struct HloShape {
  std::string type;
  std::vector<int64_t> dims;
};
std::vector<HloShape> ParseHloShapes(const std::vector<std::string>& texts);

}  // namespace sextant
