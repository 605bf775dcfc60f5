#include "trace/xplane_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "trace/gpu_timeline.h"
#include "trace/op_breakdown.h"
#include "trace/trace_runner.h"
#include "trace/xla_hlo.h"
#include "util/corpus_path.h"
#include "util/error.h"
#include "xla_hlo.pb.h"
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

// Protobuf wire format by hand, for profiles too large to build as messages quickly.
std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  return out + static_cast<char>(v);
}
std::string Delimited(int field, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Scalar(int field, uint64_t v) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(v);
}
// A plane (XSpace field 1) named `name` with one line (XPlane field 3) of these events.
std::string PlaneOf(const std::string& name, const std::string& events) {
  return Delimited(1, Delimited(2, name) + Delimited(3, Scalar(3, 1000) + events));
}
std::string RefusalOf(const std::string& bytes) {
  try {
    ParseXPlane(InputText::FromString(bytes), "test.xplane.pb");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// A GPU plane may hold 65,536 events plus one per 16 bytes of the file: a million empty
// events (2 bytes each) are refused at the event that passes it, before protobuf builds any.
TEST(XPlaneReaderTest, RefusesMoreDeviceEventsThanTheFileSizeAllows) {
  std::string events;
  for (int i = 0; i < 1'000'000; ++i) events += Delimited(4, "");
  const std::string bytes = PlaneOf("/device:GPU:0", events);
  const size_t limit = kFreeXPlaneGpuEvents + bytes.size() / kMinBytesPerXPlaneGpuEvent;
  const std::string error = RefusalOf(bytes);
  EXPECT_NE(error.find(fmt::format("test.xplane.pb at byte {}: 'planes[0].lines[0].events[{}]': ",
                                   bytes.size() - 2 * (1'000'000 - limit), limit)),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(fmt::format("more than {} events on its GPU planes (this one "
                                   "\"/device:GPU:0\")",
                                   limit)),
            std::string::npos)
      << error;

  // Events of real size (a name, an offset, a duration, a correlation id: 20 bytes) pass far
  // beyond the free 65,536.
  std::string real;
  const std::string stat = Delimited(4, Scalar(1, 1) + Scalar(4, 123456));
  for (uint64_t i = 0; i < 100'000; ++i)
    real +=
        Delimited(4, Scalar(1, 1) + Scalar(2, 1'000'000'000 + i * 1000) + Scalar(3, 900) + stat);
  std::vector<TraceData> traces =
      ParseXPlane(InputText::FromString(PlaneOf("/device:GPU:0", real)), "test.xplane.pb");
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].gpu.size(), 100'000u);
  EXPECT_EQ(traces[0].xla.size(), 100'000u);
}

// At most 1,024 planes, and every message protobuf would build counts against the file's size
// (host events, stats, fields of no known meaning): one per 4 bytes past a million.
TEST(XPlaneReaderTest, RefusesMorePlanesOrMessagesThanTheFileSizeAllows) {
  std::string planes;
  for (int i = 0; i <= 1024; ++i)
    planes += PlaneOf(fmt::format("/device:GPU:{}", i), Delimited(4, Scalar(1, 1)));
  std::string error = RefusalOf(planes);
  EXPECT_NE(error.find("test.xplane.pb at byte "), std::string::npos) << error;
  EXPECT_NE(error.find(": 'planes[1024]': XPlane profile with more than 1024 planes"),
            std::string::npos)
      << error;

  std::string stats;
  for (int i = 0; i < 2'100'000; ++i) stats += Delimited(4, "");
  const std::string host = PlaneOf("/host:CPU", Delimited(4, stats));
  error = RefusalOf(host);
  EXPECT_NE(error.find("planes[0].lines[0].events[0].stats["), std::string::npos) << error;
  EXPECT_NE(error.find(fmt::format("holds more than {} protobuf messages",
                                   kFreeXPlaneMessages + host.size() / kMinBytesPerXPlaneMessage)),
            std::string::npos)
      << error;

  // Unknown fields and groups count too (protobuf keeps them).
  std::string unknown;
  for (int i = 0; i < 3'000'000; ++i) unknown += Varint(15 << 3 | 3) + Varint(15 << 3 | 4);
  error = RefusalOf(PlaneOf("/device:GPU:0", unknown));
  EXPECT_NE(error.find("holds more than"), std::string::npos) << error;
  // An end of group that no group opened is malformed, located.
  error = RefusalOf(PlaneOf("/device:GPU:0", Varint(15 << 3 | 4)));
  EXPECT_NE(error.find("test.xplane.pb at byte 22: 'planes[0].lines[0]': not a valid XPlane "
                       "profile"),
            std::string::npos)
      << error;
}

// An "Hlo Proto" of 200,000 empty instructions (0.4 MB, 24 MB once protobuf builds it) is
// refused before it is parsed: one warning, located in the profile at the instruction past the
// HLO budget; its kernels are read, without operand shapes, and not warned about again.
TEST(XPlaneReaderTest, AnHloProtoOfTooManyMessagesIsLeftOutLocatedInTheFile) {
  xla::HloProto proto;
  proto.mutable_hlo_module()->set_name("jit_many");
  xla::HloComputationProto* c = proto.mutable_hlo_module()->add_computations();
  constexpr size_t kInstructions = 200'000;
  for (size_t i = 0; i < kInstructions; ++i) c->add_instructions();
  const std::string hlo = proto.SerializeAsString();
  SpaceBuilder b;
  xplane::XPlane* host = b.Plane("/host:metadata");
  xplane::XStat* blob = (*host->mutable_event_metadata())[1].add_stats();
  blob->set_metadata_id(SpaceBuilder::StatId(host, "Hlo Proto"));
  blob->set_bytes_value(hlo);
  xplane::XPlane* gpu = b.Plane("/device:GPU:0");
  xplane::XLine* line = gpu->add_lines();
  line->set_name("Stream #1(Kernel)");
  SpaceBuilder::Event(gpu, line, "fusion_kernel", 0, 1'000, "fusion.1");
  xplane::XStat* module = line->mutable_events(0)->add_stats();
  module->set_metadata_id(SpaceBuilder::StatId(gpu, "hlo_module"));
  module->set_str_value("jit_many");
  const std::string bytes = b.space_.SerializeAsString();
  const std::vector<TraceData> traces = ParseXPlane(InputText::FromString(bytes), "test.xplane.pb");
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].gpu.size(), 1u);
  std::vector<std::string> about;
  for (const std::string& w : traces[0].warnings)
    if (w.find("jit_many") != std::string::npos) about.push_back(w);
  ASSERT_EQ(about.size(), 1u) << fmt::format("{}", fmt::join(traces[0].warnings, "\n"));
  // The module and its computation count first.
  const size_t past = kFreeHloMessages + hlo.size() / kMinBytesPerHloMessage - 2;
  const size_t at = bytes.find(hlo) + (hlo.size() - 2 * kInstructions) + 2 * past;
  EXPECT_EQ(about[0].find(fmt::format("test.xplane.pb at byte {}: "
                                      "'hlo_module[0].computations[0].instructions[{}]': XLA "
                                      "module \"jit_many\": the profile's HLO protos would make "
                                      "more than",
                                      at, past)),
            0u)
      << about[0];
  EXPECT_FALSE(traces[0].xla.front().hlo_found());
}

// The same warning about many GPUs is given in full for the first three and counted in one
// line for the rest; so are the profiler's own warnings.
TEST(XPlaneReaderTest, WarningsOfOneKindAboutManyGpusAreCounted) {
  SpaceBuilder b;
  for (int i = 0; i < 8; ++i) {
    xplane::XPlane* gpu = b.Plane(fmt::format("/device:GPU:{}", i));
    xplane::XLine* line = gpu->add_lines();
    line->set_name("Stream #1(Kernel)");
    SpaceBuilder::Event(gpu, line, "gemm", 0, 1'000, "dot.1");  // no HLO, no launch event
  }
  for (int i = 0; i < 10; ++i) b.space_.add_warnings(fmt::format("warning {}", i));
  const std::vector<TraceData> traces = b.Parse();
  ASSERT_EQ(traces.size(), 8u);
  std::vector<std::string> all;
  for (const TraceData& t : traces) all.insert(all.end(), t.warnings.begin(), t.warnings.end());
  ASSERT_EQ(all.size(), 3u + 3 + 1 + 1 + 3 + 1) << fmt::format("{}", fmt::join(all, "\n"));
  EXPECT_EQ(traces[0].warnings.size(), 2u + 4);  // its own two, then the profiler's
  EXPECT_EQ(traces[0].warnings[2], "profiler: warning 0");
  EXPECT_EQ(traces[0].warnings[5], "profiler: ... and 7 more warnings and errors");
  ASSERT_EQ(traces[2].warnings.size(), 4u);
  EXPECT_EQ(traces[2].warnings[2],
            "... and 5 more GPUs (3, 4, 5, 6, 7): kernels of XLA ops whose module's HLO the "
            "profile does not hold");
  EXPECT_EQ(traces[2].warnings[3],
            "... and 5 more GPUs (3, 4, 5, 6, 7): no host launch event carries the kernels' "
            "correlation ids");
  EXPECT_TRUE(traces[3].warnings.empty());
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
  const TraceData& gpu7 = devices[1];
  const XlaActivity* conv = nullptr;
  for (const XlaActivity& x : gpu7.xla)
    if (gpu7.Name(x.name) == "Im3d2Col" && conv == nullptr) conv = &x;
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->tid, 1);
  EXPECT_EQ(gpu7.Name(conv->hlo_op), "cudnn-conv.1.0");
  EXPECT_EQ(gpu7.Name(conv->hlo_module), "jit_forward_3d_conv");
  ASSERT_TRUE(conv->hlo_found());
  const HloInstructionText& hlo = *gpu7.xla_hlo[conv->hlo];
  EXPECT_EQ(hlo.operands, (std::vector<std::string>{"bf16[1,16,32,60,104]{4,3,2,1,0}",
                                                    "bf16[5120,16,1,2,2]{4,3,2,1,0}"}));
  // The conv's result and cuDNN's workspace.
  EXPECT_EQ(hlo.output, "(bf16[1,5120,34,31,53]{4,3,2,1,0}, u8[7150336]{0})");
  EXPECT_EQ(hlo.custom_call_target, "__cudnn$convForward");
  EXPECT_EQ(hlo.metadata,
            "op_name=\"jit(forward_3d_conv)/jit(main)/conv_general_dilated\" "
            "source_file=\"/workspace/conv-jax/jax_conv_profiling.py\" source_line=77");
  // TraceLens's first row: launched 20.942 us before the kernel started (its
  // GPU_kernel_launch_latency), ran 16.104 us.
  const XlaActivity& first = gpu7.xla.front();
  EXPECT_EQ(gpu7.Name(first.name), "loop_transpose_fusion");
  EXPECT_EQ(first.dur_ps, 6890000);
  EXPECT_EQ(first.ts_ps - first.launch_ps, 20942000);
  EXPECT_EQ(conv->dur_ps, 16104000);
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// Real modules print as far less text than the HLO text budget allows (kHloTextPerProtoByte
// times their protos): the corpus's JAX profiles keep every module.
TEST(XPlaneReaderTest, TheCorpusModulesPrintWellWithinTheHloTextBudget) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  for (const char* file : {"traces/TraceLens/mi300/jax_conv_minimal_legacy/"
                           "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb",
                           "traces/TraceLens/jax/test_data_jax_te_fused_attn_categorization/"
                           "934987a2fc2f.xplane.pb"}) {
    std::ifstream in(CorpusPath(file), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    xplane::XSpace space;
    ASSERT_TRUE(space.ParseFromString(bytes)) << file;
    HloModules modules;
    size_t added = 0;
    for (const xplane::XPlane& plane : space.planes()) {
      if (plane.name() != "/host:metadata") continue;
      for (const auto& [id, meta] : plane.event_metadata()) {
        for (const xplane::XStat& s : meta.stats()) {
          if (s.value_case() != xplane::XStat::kBytesValue) continue;
          std::string refused;
          if (modules.Add(s.bytes_value(), &refused)) ++added;
          EXPECT_EQ(refused, "") << file;
        }
      }
    }
    EXPECT_GT(added, 0u) << file;
    EXPECT_GT(modules.text_bytes(), 0u) << file;
    EXPECT_LT(modules.text_bytes(), modules.proto_bytes()) << file;
    // And take more bytes per protobuf message than the HLO message budget asks.
    EXPECT_LT(modules.messages() * kMinBytesPerHloMessage, modules.proto_bytes()) << file;
    std::printf(
        "%s: %zu modules, %zu bytes of HLO text and %zu protobuf messages from %zu bytes "
        "of protos\n",
        file, added, modules.text_bytes(), modules.messages(), modules.proto_bytes());
  }
}

}  // namespace
}  // namespace sextant
