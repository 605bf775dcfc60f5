#include "trace/xla_hlo.h"

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
