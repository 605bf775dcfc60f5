#include "trace/xla_hlo.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "xla_hlo.pb.h"

namespace sextant {
namespace {

xla::ShapeProto Array(int type, std::vector<int64_t> dims, std::vector<int64_t> minor_to_major) {
  xla::ShapeProto s;
  s.set_element_type(type);
  for (int64_t d : dims) s.add_dimensions(d);
  for (int64_t m : minor_to_major) s.mutable_layout()->add_minor_to_major(m);
  return s;
}

// A module as XLA serializes it: instructions by id, operands by id, the root last.
std::string Module() {
  xla::HloProto proto;
  xla::HloModuleProto* m = proto.mutable_hlo_module();
  m->set_name("jit_step");
  xla::HloComputationProto* c = m->add_computations();
  xla::HloInstructionProto* p = c->add_instructions();
  p->set_name("param.1");
  p->set_id(1);
  *p->mutable_shape() = Array(16, {4, 8}, {1, 0});  // bf16
  xla::HloInstructionProto* s = c->add_instructions();
  s->set_name("scale");
  s->set_id(2);
  *s->mutable_shape() = Array(11, {}, {});  // f32 scalar: no layout printed
  xla::HloInstructionProto* f = c->add_instructions();
  f->set_name("loop_multiply_fusion");
  f->set_id(3);
  f->set_opcode("fusion");
  *f->mutable_shape() = Array(16, {4, 8}, {1, 0});
  f->add_operand_ids(1);
  f->add_operand_ids(2);
  f->mutable_metadata()->set_op_name("jit(step)/mul");
  f->mutable_metadata()->set_source_line(12);
  xla::HloInstructionProto* g = c->add_instructions();
  g->set_name("copy.3");
  g->set_id(4);
  *g->mutable_shape() = Array(4, {4}, {0});  // s32, no metadata, no float type
  xla::HloInstructionProto* r = c->add_instructions();
  r->set_name("tuple.9");
  r->set_id(5);
  r->mutable_metadata()->set_op_name("out");
  c->set_root_id(5);
  return proto.SerializeAsString();
}

TEST(XlaHloTest, InstructionsPrintAsXlaPrintsThem) {
  HloModules modules;
  ASSERT_TRUE(modules.Add(Module()));
  const auto fusion = modules.Find("jit_step", "loop_multiply_fusion");
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->output, "bf16[4,8]{1,0}");
  // The f32 scalar operand has no layout braces: TraceLens's operand pattern skips it.
  EXPECT_EQ(fusion->operands, std::vector<std::string>{"bf16[4,8]{1,0}"});
  EXPECT_EQ(fusion->metadata, "op_name=\"jit(step)/mul\" source_line=12");
  EXPECT_EQ(fusion->custom_call_target, "");
  // An s32 instruction without metadata and the root are not found, as in TraceLens.
  EXPECT_EQ(modules.Find("jit_step", "copy.3"), nullptr);
  EXPECT_EQ(modules.Find("jit_step", "tuple.9"), nullptr);
  EXPECT_EQ(modules.Find("jit_other", "loop_multiply_fusion"), nullptr);
  EXPECT_FALSE(modules.Add("\xff\xff not a proto"));
}

TEST(XlaHloTest, MetadataKeepsEveryCharacter) {
  xla::HloProto proto;
  xla::HloComputationProto* c = proto.mutable_hlo_module()->add_computations();
  proto.mutable_hlo_module()->set_name("m");
  xla::HloInstructionProto* i = c->add_instructions();
  i->set_name("a");
  i->set_id(1);
  *i->mutable_shape() = Array(11, {2}, {0});
  i->mutable_metadata()->set_op_name("jit(f)/dot_general[dims=(1,)]");
  c->set_root_id(99);
  HloModules modules;
  ASSERT_TRUE(modules.Add(proto.SerializeAsString()));
  EXPECT_EQ(modules.Find("m", "a")->metadata, "op_name=\"jit(f)/dot_general[dims=(1,)]\"");
}

// A module whose instruction names one 4,000-dimension shape (about 5 KB of proto, 32 KB of
// text) 100,000 times would print as 3.2 GB: it is left out once its text passes 16 times the
// profile's HLO protos plus 1 MiB, and the reason names it. A module within the budget after
// it is still read.
TEST(XlaHloTest, AModuleThatPrintsAsFarMoreTextThanItsProtoIsLeftOut) {
  auto module = [](const std::string& name, int references) {
    xla::HloProto proto;
    xla::HloModuleProto* m = proto.mutable_hlo_module();
    m->set_name(name);
    xla::HloComputationProto* c = m->add_computations();
    xla::HloInstructionProto* p = c->add_instructions();
    p->set_name("param.1");
    p->set_id(1);
    *p->mutable_shape() =
        Array(11, std::vector<int64_t>(4000, 1'000'000), std::vector<int64_t>(4000, 0));
    xla::HloInstructionProto* f = c->add_instructions();
    f->set_name("fusion");
    f->set_id(2);
    *f->mutable_shape() = Array(11, {1}, {0});
    for (int i = 0; i < references; ++i) f->add_operand_ids(1);
    c->set_root_id(99);
    return proto.SerializeAsString();
  };
  HloModules modules;
  const std::string bomb = module("jit_bomb", 100'000);
  ASSERT_LT(bomb.size(), 200'000u);
  std::string refused;
  ASSERT_TRUE(modules.Add(bomb, &refused));
  EXPECT_NE(refused.find("XLA module \"jit_bomb\": its HLO would print as more than"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("the module is left out"), std::string::npos) << refused;
  EXPECT_TRUE(modules.Has("jit_bomb"));  // refused, not missing: warned once
  EXPECT_EQ(modules.Find("jit_bomb", "fusion"), nullptr);
  EXPECT_EQ(modules.text_bytes(), 0u);
  EXPECT_EQ(modules.proto_bytes(), 0u);

  // Ten references print as 320 KB, within the free 1 MiB.
  refused.clear();
  ASSERT_TRUE(modules.Add(module("jit_fine", 10), &refused));
  EXPECT_EQ(refused, "");
  const auto fusion = modules.Find("jit_fine", "fusion");
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->operands.size(), 10u);
  EXPECT_LE(modules.text_bytes(), kHloTextPerProtoByte * modules.proto_bytes() + kFreeHloTextBytes);
}

// Protobuf makes each empty instruction (2 bytes) an object of about 120 bytes: a module of
// 200,000 of them (0.4 MB) would take 24 MB, 10 MB of them 0.6 GB. It is refused on its wire
// format, at the instruction past the budget, before protobuf builds anything; the reason
// names the file, the byte and what was too many. A module read before stays; one after, within
// the budget, is read.
TEST(XlaHloTest, AProtoOfMoreMessagesThanItsBytesAllowIsLeftOutUnparsed) {
  HloModules modules;
  ASSERT_TRUE(modules.Add(Module()));
  xla::HloProto proto;
  proto.mutable_hlo_module()->set_name("jit_many");
  xla::HloComputationProto* c = proto.mutable_hlo_module()->add_computations();
  constexpr size_t kInstructions = 200'000;
  for (size_t i = 0; i < kInstructions; ++i) c->add_instructions();
  const std::string many = proto.SerializeAsString();
  const size_t max_messages =
      kFreeHloMessages + (Module().size() + many.size()) / kMinBytesPerHloMessage;
  ASSERT_LT(max_messages, kInstructions);
  std::string refused;
  ASSERT_TRUE(modules.Add(many, &refused, SourceLocation{"run.xplane.pb", -1, -1, 1000}));
  // The module and its computation are counted too, and the first module's messages.
  const size_t past = max_messages - modules.messages() - 2;
  const size_t header = many.size() - 2 * kInstructions;  // the bytes before the instructions
  EXPECT_EQ(refused.find(fmt::format("run.xplane.pb at byte {}: "
                                     "'hlo_module[0].computations[0].instructions[{}]': "
                                     "XLA module \"jit_many\"",
                                     1000 + header + 2 * past, past)),
            0u)
      << refused;
  EXPECT_NE(refused.find(fmt::format("more than {} protobuf messages", max_messages)),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("the module is left out"), std::string::npos) << refused;
  EXPECT_TRUE(modules.Has("jit_many"));  // refused, not missing: warned once
  EXPECT_NE(modules.Find("jit_step", "loop_multiply_fusion"), nullptr);

  // A module read before is not refused again, nor said to be.
  refused.clear();
  proto.mutable_hlo_module()->set_name("jit_step");
  EXPECT_TRUE(modules.Add(proto.SerializeAsString(), &refused));
  EXPECT_EQ(refused, "");

  refused.clear();
  ASSERT_TRUE(modules.Add(std::string(Module()).replace(Module().find("jit_step"), 8, "jit_next"),
                          &refused));
  EXPECT_EQ(refused, "");
  EXPECT_NE(modules.Find("jit_next", "loop_multiply_fusion"), nullptr);
}

// Tuple shapes nested 100,000 deep: protobuf would refuse to parse them (past its recursion
// limit of 100), and so does the count, without recursing as deep.
TEST(XlaHloTest, AProtoNestedDeeperThanProtobufParsesIsUnreadable) {
  auto varint = [](size_t n) {
    std::string out;
    for (; n >= 0x80; n >>= 7) out += static_cast<char>((n & 0x7f) | 0x80);
    return out + static_cast<char>(n);
  };
  // hlo_module, computations, instructions, shape, then tuple_shapes in tuple_shapes: each
  // field's length is that of every field inside it.
  std::vector<char> keys = {'\x0a', '\x1a', '\x12', '\x1a'};
  keys.insert(keys.end(), 100'000, '\x22');
  std::vector<size_t> contents(keys.size(), 0);
  for (size_t k = keys.size() - 1; k-- > 0;)
    contents[k] = 1 + varint(contents[k + 1]).size() + contents[k + 1];
  std::string deep;
  for (size_t k = 0; k < keys.size(); ++k) deep += keys[k] + varint(contents[k]);
  HloModules modules;
  std::string refused;
  EXPECT_FALSE(modules.Add(deep, &refused));
  EXPECT_EQ(refused, "");
}

TEST(XlaHloTest, ShapesAndBytes) {
  const std::vector<HloShape> shapes =
      ParseHloShapes({"bf16[1,2,2,16,5120]{4,3,2,1,0}", "f32[]", "(s32[7]{0},u8[3]{0})", "x"});
  ASSERT_EQ(shapes.size(), 2u);  // the scalar and the name without a shape are skipped
  EXPECT_EQ(shapes[0].type, "bf16");
  EXPECT_EQ(shapes[0].dims, (std::vector<int64_t>{1, 2, 2, 16, 5120}));
  EXPECT_EQ(shapes[1].type, "s32");  // a tuple's first element
  EXPECT_EQ(shapes[1].dims, std::vector<int64_t>{7});
  // TraceLens's df_xla_perf total_input_bytes of that operand: 1*2*2*16*5120 x 2 B = 655360.
  EXPECT_EQ(HloTypeBytes("bf16") * 2 * 2 * 16 * 5120, 655360);
  EXPECT_EQ(HloTypeBytes("f8e4m3fn"), 1);
  EXPECT_EQ(HloTypeBytes("f32"), 4);
  EXPECT_EQ(HloTypeBytes("c128"), 16);
  EXPECT_EQ(HloTypeBytes("token"), 0);
  EXPECT_EQ(HloTypeName(16), "bf16");
  EXPECT_EQ(HloTypeName(20), "f8e4m3fn");
  EXPECT_EQ(HloTypeName(99), "");
}

}  // namespace
}  // namespace sextant
