#include "trace/xla_hlo.h"

#include <fmt/format.h>

#include <array>
#include <unordered_map>

#include "trace/protobuf_wire_scan.h"
#include "util/error.h"
#include "xla_hlo.pb.h"

namespace sextant {
namespace {

// xla.PrimitiveType (openxla/xla, xla/xla_data.proto) and the names HLO text gives them.
constexpr std::array<std::string_view, 26> kTypeNames = {
    "",           "pred",      "s8",   "s16",    "s32",      "s64", "u8", "u16",
    "u32",        "u64",       "f16",  "f32",    "f64",      "",    "",   "c64",
    "bf16",       "token",     "c128", "f8e5m2", "f8e4m3fn", "s4",  "u4", "f8e4m3b11fnuz",
    "f8e5m2fnuz", "f8e4m3fnuz"};

// XLA's ShapeUtil::HumanStringWithLayout: "bf16[1,2]{1,0}", a tuple "(a, b)".
std::string ShapeText(const xla::ShapeProto& shape) {
  if (shape.element_type() == 13) {  // TUPLE
    std::string text = "(";
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) text += ", ";
      text += ShapeText(shape.tuple_shapes(i));
    }
    return text + ")";
  }
  std::string text = std::string(HloTypeName(shape.element_type()));
  if (text.empty()) text = "unknown";
  text += fmt::format("[{}]", fmt::join(shape.dimensions(), ","));
  if (shape.dimensions_size() > 0 && shape.has_layout())
    text += fmt::format("{{{}}}", fmt::join(shape.layout().minor_to_major(), ","));
  return text;
}

// XLA's OpMetadataToString: what it prints inside "metadata={...}".
std::string MetadataText(const xla::OpMetadata& m) {
  std::vector<std::string> parts;
  if (!m.op_type().empty()) parts.push_back(fmt::format("op_type=\"{}\"", m.op_type()));
  if (!m.op_name().empty()) parts.push_back(fmt::format("op_name=\"{}\"", m.op_name()));
  if (!m.source_file().empty()) parts.push_back(fmt::format("source_file=\"{}\"", m.source_file()));
  if (m.source_line() != 0) parts.push_back(fmt::format("source_line={}", m.source_line()));
  return fmt::format("{}", fmt::join(parts, " "));
}

// The messages protobuf would build from an HLO proto (xla_hlo.h), counted on its wire format:
// the declared messages of xla_hlo.proto, and every field protobuf keeps aside as one it does
// not declare. Repeated numbers (dimensions, operand ids) are not counted: each takes a byte or
// more on the wire and 8 in memory.
class HloWireBudget final : public ProtobufWireScan {
 public:
  struct OverBudget {
    size_t offset;    // of the message past the budget
    std::string key;  // its key path
  };
  struct Unreadable {};

  HloWireBudget(std::string_view proto, size_t max_messages)
      : ProtobufWireScan(proto, kSchema), max_messages_(max_messages) {}

  // The messages protobuf would build. Throws OverBudget at the one past `max_messages`, and
  // Unreadable if the proto is malformed or nests deeper than protobuf parses.
  size_t Check() {
    Walk(kHloProto, 0, bytes().size());
    return messages_;
  }

  // The module's name as protobuf would read it (the last one written); "" if it has none or
  // the proto is malformed before it.
  std::string_view ModuleName() {
    counting_ = false;
    std::string_view name;
    try {
      for (size_t pos = 0; pos < bytes().size();) {
        const Field module = Next(pos, bytes().size());
        if (module.number != 1 || module.wire != 2) continue;
        for (size_t at = module.begin; at < module.end;) {
          const Field f = Next(at, module.end);
          if (f.number == 1 && f.wire == 2) name = bytes().substr(f.begin, f.end - f.begin);
        }
      }
    } catch (const Unreadable&) {
      return "";
    }
    return name;
  }

 private:
  enum Type { kHloProto, kModule, kComputation, kInstruction, kShape, kLayout, kMetadata };
  static constexpr WireSchemaField kSchema[] = {
      {kHloProto, 1, 2, kModule, "hlo_module"},
      {kModule, 1, 2, kWireScalar, "name"},
      {kModule, 3, 2, kComputation, "computations"},
      {kComputation, 1, 2, kWireScalar, "name"},
      {kComputation, 2, 2, kInstruction, "instructions"},
      {kComputation, 6, 0, kWireScalar, "root_id"},
      {kInstruction, 1, 2, kWireScalar, "name"},
      {kInstruction, 2, 2, kWireScalar, "opcode"},
      {kInstruction, 3, 2, kShape, "shape"},
      {kInstruction, 7, 2, kMetadata, "metadata"},
      {kInstruction, 28, 2, kWireScalar, "custom_call_target"},
      {kInstruction, 35, 0, kWireScalar, "id"},
      {kInstruction, 36, 0, kWireScalar, "operand_ids"},
      {kInstruction, 36, 2, kWireScalar, "operand_ids"},  // packed
      {kInstruction, 43, 2, kWireScalar, "backend_config"},
      {kShape, 2, 0, kWireScalar, "element_type"},
      {kShape, 3, 0, kWireScalar, "dimensions"},
      {kShape, 3, 2, kWireScalar, "dimensions"},  // packed
      {kShape, 4, 2, kShape, "tuple_shapes"},
      {kShape, 5, 2, kLayout, "layout"},
      {kLayout, 1, 0, kWireScalar, "minor_to_major"},
      {kLayout, 1, 2, kWireScalar, "minor_to_major"},  // packed
      {kMetadata, 1, 2, kWireScalar, "op_type"},
      {kMetadata, 2, 2, kWireScalar, "op_name"},
      {kMetadata, 3, 2, kWireScalar, "source_file"},
      {kMetadata, 4, 0, kWireScalar, "source_line"},
  };

  void Count(size_t offset) override {
    if (counting_ && ++messages_ > max_messages_) throw OverBudget{offset, Key()};
  }
  [[noreturn]] void Malformed(size_t /*offset*/) const override { throw Unreadable{}; }

  const size_t max_messages_;
  size_t messages_ = 0;
  bool counting_ = true;  // false while the module's name is looked for
};

// TraceLens keeps a printed line that has metadata or one of these type names.
bool HasKeptType(std::string_view text) {
  for (std::string_view t : {"bf16", "f8", "f16", "f32", "f64"})
    if (text.find(t) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::string_view HloTypeName(int element_type) {
  if (element_type < 0 || element_type >= static_cast<int>(kTypeNames.size())) return "";
  return kTypeNames[static_cast<size_t>(element_type)];
}

int HloTypeBytes(std::string_view type) {
  if (type == "f64" || type == "s64" || type == "u64" || type == "c64") return 8;
  if (type == "c128") return 16;
  if (type == "f32" || type == "s32" || type == "u32") return 4;
  if (type == "bf16" || type == "f16" || type == "s16" || type == "u16") return 2;
  if (type == "pred" || type == "s8" || type == "u8" || type.starts_with("f8")) return 1;
  return 0;
}

bool HloModules::Add(std::string_view hlo_proto, std::string* refused,
                     const SourceLocation& where) {
  // Counted before protobuf builds anything; the budget grows with the protos' bytes.
  const size_t max_messages =
      kFreeHloMessages + (scanned_bytes_ + hlo_proto.size()) / kMinBytesPerHloMessage;
  HloWireBudget counted(hlo_proto, max_messages - messages_);
  try {
    messages_ += counted.Check();
  } catch (const HloWireBudget::Unreadable&) {
    return false;
  } catch (const HloWireBudget::OverBudget& over) {
    const std::string name(counted.ModuleName());
    if (!name.empty() && Has(name)) return true;  // a module already read: nothing is lost
    if (refused) {
      SourceLocation at = where;
      if (at.byte_offset >= 0) at.byte_offset += static_cast<int64_t>(over.offset);
      *refused = FormatLocated(
          at, over.key,
          fmt::format(
              "{}: the profile's HLO protos would make more than {} protobuf messages "
              "(instructions, shapes, layouts, metadata, fields of no declared meaning): at most "
              "{} plus one per {} bytes of the {} bytes of protos, where XLA's own take 11 or "
              "more bytes per message; the module is left out, so its kernels' operand shapes "
              "are unknown (empty Input Dims, no op_conv row)",
              name.empty() ? std::string("an \"Hlo Proto\" without a module name")
                           : fmt::format("XLA module \"{}\"", ShortText(name)),
              max_messages, kFreeHloMessages, kMinBytesPerHloMessage,
              scanned_bytes_ + hlo_proto.size()));
    }
    if (!name.empty()) modules_[name];  // refused: its kernels are not reported as lacking HLO
    return true;
  }
  scanned_bytes_ += hlo_proto.size();
  xla::HloProto proto;
  if (!proto.ParseFromArray(hlo_proto.data(), static_cast<int>(hlo_proto.size()))) return false;
  const xla::HloModuleProto& module = proto.hlo_module();
  if (module.name().empty() || modules_.count(module.name())) return true;
  // Every piece of text printed counts, kept or not (the operands TraceLens's pattern skips
  // are printed too), before the next is printed.
  const size_t budget =
      kHloTextPerProtoByte * (proto_bytes_ + hlo_proto.size()) + kFreeHloTextBytes;
  size_t text_bytes = text_bytes_;
  auto within = [&](size_t bytes) { return (text_bytes += bytes) <= budget; };
  std::map<std::string, std::shared_ptr<const HloInstructionText>, std::less<>> instructions;
  for (const xla::HloComputationProto& computation : module.computations()) {
    std::unordered_map<int64_t, const xla::HloInstructionProto*> by_id;
    for (const auto& i : computation.instructions()) by_id[i.id()] = &i;
    for (const xla::HloInstructionProto& i : computation.instructions()) {
      if (i.id() == computation.root_id()) continue;  // "ROOT %x = ...": not found by name
      HloInstructionText text;
      text.output = ShapeText(i.shape());
      if (!within(text.output.size())) break;
      // TraceLens's line: the output and every operand, space-separated; none of the type
      // names it looks for holds a space, so each piece is searched alone.
      bool kept_type = HasKeptType(text.output);
      for (int64_t id : i.operand_ids()) {
        auto it = by_id.find(id);
        if (it == by_id.end()) continue;
        std::string operand = ShapeText(it->second->shape());
        if (!within(operand.size() + 1)) break;
        kept_type = kept_type || HasKeptType(operand);
        // TraceLens's operand pattern: a type starting b, f or s, ending at a layout's brace.
        if ((operand[0] == 'b' || operand[0] == 'f' || operand[0] == 's') &&
            operand.back() == '}') {
          text.operands.push_back(std::move(operand));
        }
      }
      if (text_bytes > budget) break;
      std::string metadata = i.has_metadata() ? MetadataText(i.metadata()) : "";
      if (metadata.empty() && !kept_type && i.opcode() != "get-tuple-element") continue;
      if (!within(metadata.size() + i.custom_call_target().size() + i.name().size())) break;
      text.metadata = std::move(metadata);
      text.custom_call_target = i.custom_call_target();
      instructions.emplace(i.name(), std::make_shared<const HloInstructionText>(std::move(text)));
    }
    if (text_bytes > budget) break;
  }
  if (text_bytes > budget) {
    if (refused) {
      *refused = fmt::format(
          "XLA module \"{}\": its HLO would print as more than {} bytes of text (at most {} "
          "times the {} bytes of the profile's HLO protos plus {} bytes: an instruction prints "
          "each operand's shape again): the module is left out, so its kernels' operand shapes "
          "are unknown (empty Input Dims, no op_conv row)",
          ShortText(module.name()), budget, kHloTextPerProtoByte, proto_bytes_ + hlo_proto.size(),
          kFreeHloTextBytes);
    }
    modules_[module.name()];  // refused: its kernels are not reported as lacking HLO as well
    return true;
  }
  text_bytes_ = text_bytes;
  proto_bytes_ += hlo_proto.size();
  modules_[module.name()] = std::move(instructions);
  return true;
}

std::shared_ptr<const HloInstructionText> HloModules::Find(std::string_view module,
                                                           std::string_view name) const {
  auto m = modules_.find(module);
  if (m == modules_.end()) return nullptr;
  auto i = m->second.find(name);
  return i == m->second.end() ? nullptr : i->second;
}

std::vector<HloShape> ParseHloShapes(const std::vector<std::string>& texts) {
  std::vector<HloShape> out;
  for (const std::string& text : texts) {
    // "<letters><digits>[<digits,>]{<digits,>}" anywhere in the text; the first one.
    for (size_t start = 0; start < text.size(); ++start) {
      size_t i = start;
      while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
      if (i == start) continue;
      const size_t digits = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (i == digits || i >= text.size() || text[i] != '[') continue;
      const size_t dims_begin = ++i;
      while (i < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == ','))
        ++i;
      if (i == dims_begin || i >= text.size() || text[i] != ']') continue;
      const size_t dims_end = i++;
      if (i >= text.size() || text[i] != '{') continue;
      const size_t layout_begin = ++i;
      while (i < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == ','))
        ++i;
      if (i == layout_begin || i >= text.size() || text[i] != '}') continue;
      HloShape shape;
      shape.type = text.substr(start, dims_begin - 1 - start);
      std::string_view dims(text.data() + dims_begin, dims_end - dims_begin);
      size_t pos = 0;
      while (pos <= dims.size()) {
        size_t comma = dims.find(',', pos);
        if (comma == std::string_view::npos) comma = dims.size();
        int64_t value = 0;
        for (size_t k = pos; k < comma; ++k)
          value = std::min<int64_t>(value * 10 + (dims[k] - '0'), int64_t{1} << 50);
        if (comma > pos) shape.dims.push_back(value);
        pos = comma + 1;
      }
      out.push_back(std::move(shape));
      break;
    }
  }
  return out;
}

}  // namespace sextant
