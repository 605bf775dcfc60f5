#include "trace/xplane_reader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "trace/gpu_timeline.h"
#include "trace/op_breakdown.h"
#include "trace/trace_runner.h"
#include "util/corpus_path.h"
#include "util/error.h"
#include "xplane.pb.h"

namespace sextant {
namespace {

// Builds a small XSpace: stat and event names are registered once per plane, as the profiler
// writes them.
class SpaceBuilder {
 public:
  xplane::XPlane* Plane(const std::string& name) {
    xplane::XPlane* p = space_.add_planes();
    p->set_name(name);
    return p;
  }
  static int64_t StatId(xplane::XPlane* p, const std::string& name) {
    for (const auto& [id, meta] : p->stat_metadata()) {
      if (meta.name() == name) return id;
    }
    int64_t id = static_cast<int64_t>(p->stat_metadata_size()) + 1;
    (*p->mutable_stat_metadata())[id].set_name(name);
    return id;
  }
  static int64_t EventId(xplane::XPlane* p, const std::string& name) {
    for (const auto& [id, meta] : p->event_metadata()) {
      if (meta.name() == name) return id;
    }
    int64_t id = static_cast<int64_t>(p->event_metadata_size()) + 1;
    (*p->mutable_event_metadata())[id].set_name(name);
    return id;
  }
  // An event of `line` at offset/duration in picoseconds, optionally run by an XLA op.
  static void Event(xplane::XPlane* p, xplane::XLine* line, const std::string& name,
                    int64_t offset_ps, int64_t duration_ps, const std::string& hlo_op = "") {
    xplane::XEvent* e = line->add_events();
    e->set_metadata_id(EventId(p, name));
    e->set_offset_ps(offset_ps);
    e->set_duration_ps(duration_ps);
    if (!hlo_op.empty()) {
      xplane::XStat* s = e->add_stats();
      s->set_metadata_id(StatId(p, "hlo_op"));
      s->set_ref_value(static_cast<uint64_t>(StatId(p, hlo_op)));  // by reference, as XLA does
    }
  }
  static void DeviceStat(xplane::XPlane* p, const std::string& name, const std::string& text) {
    xplane::XStat* s = p->add_stats();
    s->set_metadata_id(StatId(p, name));
    s->set_str_value(text);
  }
  std::vector<TraceData> Parse() const {
    return ParseXPlane(InputText::FromString(space_.SerializeAsString()), "test.xplane.pb");
  }
  xplane::XSpace space_;
};

TEST(XPlaneReaderTest, GpuPlanesBecomeTracesWithKernelsCopiesAndXlaOps) {
  SpaceBuilder b;
  b.Plane("/host:metadata");
  xplane::XPlane* idle = b.Plane("/device:GPU:0");  // no events: no trace
  SpaceBuilder::DeviceStat(idle, "device_vendor", "AMD");
  xplane::XPlane* gpu = b.Plane("/device:GPU:3");
  SpaceBuilder::DeviceStat(gpu, "device_vendor", "AMD");
  xplane::XStat* cap = gpu->add_stats();
  cap->set_metadata_id(SpaceBuilder::StatId(gpu, "compute_cap_major"));
  cap->set_int64_value(9);
  xplane::XLine* kernels = gpu->add_lines();
  kernels->set_name("Stream #5(Kernel)");
  kernels->set_timestamp_ns(1'000'000);
  // gemm [1,000,010, 1,000,030) ns; fusion [1,000,030.4, 1,000,040.6) ns rounds to
  // [1,000,030, 1,000,041); both run by XLA ops.
  SpaceBuilder::Event(gpu, kernels, "Cijk_gemm", 10'000, 20'000, "dot.1");
  SpaceBuilder::Event(gpu, kernels, "loop_add_fusion", 30'400, 10'200, "add_fusion");
  xplane::XLine* copies = gpu->add_lines();
  copies->set_name("Stream #9(MemcpyOther)");
  copies->set_timestamp_ns(1'000'000);
  SpaceBuilder::Event(gpu, copies, "CopyDeviceToDevice", 50'000, 5'000);
  b.Plane("/host:CPU");

  std::vector<TraceData> traces = b.Parse();
  ASSERT_EQ(traces.size(), 1u);
  const TraceData& t = traces[0];
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.device_name, "AMD GPU (compute capability 9)");
  EXPECT_TRUE(t.rocm);
  ASSERT_EQ(t.gpu.size(), 3u);
  EXPECT_EQ(t.Name(t.gpu[0].name), "Cijk_gemm");
  EXPECT_EQ(t.gpu[0].ts_ns, 1'000'010);
  EXPECT_EQ(t.gpu[0].dur_ns, 20);
  EXPECT_EQ(t.gpu[0].stream, 5);
  EXPECT_EQ(t.gpu[0].device, 3);
  EXPECT_EQ(t.gpu[1].ts_ns, 1'000'030);
  EXPECT_EQ(t.gpu[1].dur_ns, 11);
  EXPECT_EQ(t.gpu[2].kind, GpuKind::kMemcpy);
  EXPECT_EQ(t.gpu[2].stream, 9);

  // Busy: kernels [10, 41) ns and the copy [50, 55) ns after them; span [10, 55).
  GpuTimeline tl = ComputeGpuTimeline(t);
  EXPECT_EQ(tl.computation_ns, 31);
  EXPECT_EQ(tl.memcpy_ns, 5);
  EXPECT_EQ(tl.exposed_memcpy_ns, 5);
  EXPECT_EQ(tl.total_ns, 45);
  EXPECT_EQ(tl.idle_ns, 9);

  // Each kernel is launched by its XLA op.
  std::vector<OpStats> ops = SummarizeOps(t, ComputeOpKernelTimes(t), false);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "dot.1");
  EXPECT_EQ(ops[0].direct_kernel_ns, 20);
  EXPECT_EQ(ops[1].name, "add_fusion");
  EXPECT_EQ(ops[1].direct_kernel_ns, 11);
}

// Two consecutive kernels of one XLA op are one call of it; what the profile lacks (the HLO of
// its module, host launch events) and impossible durations are said, once per GPU.
TEST(XPlaneReaderTest, KernelsOfOneOpCallShareItAndGapsAreWarned) {
  SpaceBuilder b;
  xplane::XPlane* gpu = b.Plane("/device:GPU:1");
  xplane::XLine* line = gpu->add_lines();
  line->set_name("Stream #1(Kernel)");
  line->set_timestamp_ns(1'000);
  // A convolution as ROCm runs it (two kernels), then another op, then the convolution again.
  SpaceBuilder::Event(gpu, line, "Im3d2Col", 0, 1'000, "cudnn-conv.1");
  SpaceBuilder::Event(gpu, line, "Cijk_gemm", 2'000, 9'000, "cudnn-conv.1");
  SpaceBuilder::Event(gpu, line, "loop_fusion", 12'000, 1'000, "fusion.2");
  SpaceBuilder::Event(gpu, line, "Im3d2Col", 14'000, 1'000, "cudnn-conv.1");
  SpaceBuilder::Event(gpu, line, "Cijk_gemm", 16'000, -5, "cudnn-conv.1");
  const std::vector<TraceData> traces = b.Parse();
  ASSERT_EQ(traces.size(), 1u);
  const TraceData& t = traces[0];
  std::vector<OpStats> ops = SummarizeOps(t, ComputeOpKernelTimes(t), false);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "cudnn-conv.1");
  EXPECT_EQ(ops[0].count, 2);  // two calls of two kernels each
  EXPECT_EQ(ops[1].count, 1);
  ASSERT_EQ(t.warnings.size(), 3u);
  EXPECT_NE(t.warnings[0].find("GPU 1: 5 of 5 kernels ran XLA ops of modules whose HLO"),
            std::string::npos)
      << t.warnings[0];
  EXPECT_NE(t.warnings[1].find("no host launch event"), std::string::npos) << t.warnings[1];
  EXPECT_NE(t.warnings[2].find("1 event has a negative or over-long"), std::string::npos)
      << t.warnings[2];
  // XPlane times are the profiler's own, not an epoch clock another file can be compared with.
  EXPECT_EQ(FirstEventClockNs(t), INT64_MIN);
}

TEST(XPlaneReaderTest, RefusesMalformedAndGpuLessProfiles) {
  try {
    ParseXPlane(InputText::FromString("\x0a\xff\xff\xff\xff\x0f"), "bad.xplane.pb");
    FAIL() << "a length past the end must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xplane.pb"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a valid XPlane profile"), std::string::npos);
  }
  SpaceBuilder b;
  b.Plane("/host:CPU");
  try {
    b.Parse();
    FAIL() << "a profile without GPU events must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("without GPU events"), std::string::npos) << e.what();
  }
}

TEST(XPlaneReaderTest, RecognisesXSpaceBytesNotJson) {
  EXPECT_TRUE(LooksLikeXPlane("\x0a\x10"));
  EXPECT_FALSE(LooksLikeXPlane("{\"traceEvents\": []}"));
  EXPECT_FALSE(LooksLikeXPlane("\n{\"traceEvents\": []}"));  // a newline is also 0x0a
  EXPECT_FALSE(LooksLikeXPlane("\n\n  [{}]"));
  EXPECT_FALSE(LooksLikeXPlane(""));
}

// A file named *.pb that does not start like an XSpace is still judged as one by `trace
// report`: "not a valid XPlane profile", not a Kineto reader's "not JSON".
TEST(XPlaneReaderTest, AProtobufNamedFileIsJudgedAsXPlane) {
  const std::string path = ::testing::TempDir() + "/random.xplane.pb";
  std::ofstream(path, std::ios::binary) << std::string("\x7f\x01garbage bytes", 15);
  try {
    ReadTraceFile(path);
    FAIL() << "random bytes must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not a valid XPlane profile"), std::string::npos)
        << e.what();
  }
}

// The JAX convolution profile of the corpus (TraceLens's JAX reference report was written from
// it): every device activity keeps its track as xprof numbers it, its host launch time and the
// HLO instruction it ran, printed as XLA prints it and as TraceLens's kernel_launchers shows it.
TEST(XPlaneReaderTest, DeviceActivitiesCarryTheirHloInstructionAndLaunch) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  const std::vector<TraceData> devices =
      ReadXPlane(CorpusPath("traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                            "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"));
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].xla_pid, 1);  // /device:GPU:0, plane id 0: copies only
  EXPECT_EQ(devices[1].xla_pid, 8);  // /device:GPU:7
  EXPECT_EQ(devices[0].xla.size(), 53u);
  ASSERT_EQ(devices[1].xla.size(), 25u);
  const XlaActivity* conv = nullptr;
  for (const XlaActivity& x : devices[1].xla)
    if (x.name == "Im3d2Col" && conv == nullptr) conv = &x;
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->tid, 1);
  EXPECT_EQ(conv->hlo_op, "cudnn-conv.1.0");
  EXPECT_EQ(conv->hlo_module, "jit_forward_3d_conv");
  EXPECT_TRUE(conv->hlo_found);
  EXPECT_EQ(conv->operands, (std::vector<std::string>{"bf16[1,16,32,60,104]{4,3,2,1,0}",
                                                      "bf16[5120,16,1,2,2]{4,3,2,1,0}"}));
  // The conv's result and cuDNN's workspace.
  EXPECT_EQ(conv->output, "(bf16[1,5120,34,31,53]{4,3,2,1,0}, u8[7150336]{0})");
  EXPECT_EQ(conv->custom_call_target, "__cudnn$convForward");
  EXPECT_EQ(conv->metadata,
            "op_name=\"jit(forward_3d_conv)/jit(main)/conv_general_dilated\" "
            "source_file=\"/workspace/conv-jax/jax_conv_profiling.py\" source_line=77");
  // TraceLens's first row: launched 20.942 us before the kernel started (its
  // GPU_kernel_launch_latency), ran 16.104 us.
  const XlaActivity& first = devices[1].xla.front();
  EXPECT_EQ(first.name, "loop_transpose_fusion");
  EXPECT_EQ(first.dur_ps, 6890000);
  EXPECT_EQ(first.ts_ps - first.launch_ps, 20942000);
  EXPECT_EQ(conv->dur_ps, 16104000);
}

}  // namespace
}  // namespace sextant
