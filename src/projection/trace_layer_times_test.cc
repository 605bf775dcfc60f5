#include "projection/trace_layer_times.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "trace/trace_test_util.h"
#include "util/error.h"

namespace sextant {
namespace {

// One MoE layer of a DualPipe-style loop (times in µs): "1F1B" [0, 100) holds attn(F) [1, 10),
// dispatch(F) [11, 20), mlp(F) [21, 30), attn(B) [31, 40), mlp(W) [41, 50), each launching one
// kernel: attn(F) 10 at 30, mlp(F) 20 at 40, attn(B) 15 at 60, mlp(W) 5 at 75 on the compute
// stream, dispatch(F) 30 on its own stream at `dispatch_at`.
std::string OneLayer(double dispatch_at) {
  return KinetoTraceBuilder()
      .Annotation("1F1B", 0, 100)
      .Annotation("attn(F)", 1, 9)
      .Launch(2, 1, 1)
      .Annotation("dispatch(F)", 11, 9)
      .Launch(12, 1, 2)
      .Annotation("mlp(F)", 21, 9)
      .Launch(22, 1, 3)
      .Annotation("attn(B)", 31, 9)
      .Launch(32, 1, 4)
      .Annotation("mlp(W)", 41, 9)
      .Launch(42, 1, 5)
      .Kernel("attn_fwd", 30, 10, 1)
      .Kernel("deepep_dispatch", dispatch_at, 30, 2, /*stream=*/9)
      .Kernel("mlp_fwd", 40, 20, 3)
      .Kernel("attn_bwd", 60, 15, 4)
      .Kernel("mlp_wgrad", 75, 5, 5)
      .WriteTo(TestTempPath(std::to_string(static_cast<int>(dispatch_at)) + ".json"));
}

PieceTiming Layer(const char* type, double f, double b, double w) {
  PieceTiming t;
  t.type = type;
  t.forward_s = f;
  t.backward_input_s = b;
  t.backward_weight_s = w;
  return t;
}

TEST(TraceLayerTimesTest, PiecesAddUpAndAnOverlappedExchangeIsHidden) {
  // Dispatch [40, 70) runs beside the compute [30, 80): the 1F1B range spans 50 µs on the GPU,
  // exactly the 10 + 20 + 15 + 5 µs of compute, so none of the 30 µs exchange is exposed.
  const std::string path = OneLayer(40);
  const MeasuredLayerTimes m = MeasureLayerTimes({path});
  EXPECT_EQ(m.layers, 1);
  EXPECT_TRUE(m.moe);
  EXPECT_NEAR(m.forward_s, 60e-6, 1e-12);  // attn 10 + dispatch 30 + mlp 20
  EXPECT_NEAR(m.backward_input_s, 15e-6, 1e-12);
  EXPECT_NEAR(m.backward_weight_s, 5e-6, 1e-12);
  EXPECT_NEAR(m.ep_comm_s, 30e-6, 1e-12);
  EXPECT_NEAR(m.exposed_ep_comm_s, 0, 1e-12);

  ModelTimings timings;
  timings.layers = {Layer("dense", 1e-3, 2e-3, 1e-3), Layer("moe", 3e-3, 4e-3, 2e-3)};
  ApplyMeasuredLayers(m, &timings);
  EXPECT_DOUBLE_EQ(timings.layers[0].forward_s, 1e-3);     // dense: still modelled
  EXPECT_NEAR(timings.layers[1].forward_s, 30e-6, 1e-12);  // the hidden exchange is gone
  EXPECT_NEAR(timings.layers[1].backward_input_s, 15e-6, 1e-12);
  EXPECT_NEAR(timings.layers[1].backward_weight_s, 5e-6, 1e-12);
  EXPECT_NEAR(timings.layers[1].ep_comm_s, 0, 1e-12);
  ASSERT_GE(timings.assumptions.size(), 2u);
  EXPECT_NE(timings.assumptions[0].find("measured"), std::string::npos);
  std::remove(path.c_str());
}

TEST(TraceLayerTimesTest, AnExchangeAfterTheComputeIsExposed) {
  // Dispatch [80, 110) after the compute: the span is [30, 110) = 80 µs, 30 µs over the compute.
  const std::string path = OneLayer(80);
  const MeasuredLayerTimes m = MeasureLayerTimes({path});
  EXPECT_NEAR(m.exposed_ep_comm_s, 30e-6, 1e-12);
  ModelTimings timings;
  timings.layers = {Layer("moe", 3e-3, 4e-3, 2e-3)};
  ApplyMeasuredLayers(m, &timings);
  EXPECT_NEAR(timings.layers[0].forward_s, 60e-6, 1e-12);
  EXPECT_NEAR(timings.layers[0].ep_comm_s, 30e-6, 1e-12);
  // A job without MoE layers cannot take MoE layer times.
  ModelTimings dense_only;
  dense_only.layers = {Layer("dense", 1e-3, 2e-3, 1e-3)};
  EXPECT_THROW(ApplyMeasuredLayers(m, &dense_only), UserError);
  std::remove(path.c_str());
}

TEST(TraceLayerTimesTest, ATraceWithoutLayerRangesIsRefusedByName) {
  const std::string path = KinetoTraceBuilder()
                               .Annotation("forward", 0, 10)
                               .Launch(1, 1, 1)
                               .Kernel("gemm", 2, 5, 1)
                               .WriteTo(TestTempPath("plain.json"));
  try {
    MeasureLayerTimes({path});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("attn(F)"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sextant
