#include "trace/trace_diff.h"

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// Three ops, each launching one kernel (µs). The new trace's GEMM takes 130 µs instead of
// 100, relu is unchanged, and the copy is replaced by a fill.
//   base: mm [0, 20) -> gemm [10, 110); relu [30, 40) -> relu [110, 120);
//         copy_ [50, 60) -> copy [120, 125)
//   new:  mm [0, 20) -> gemm [10, 140); relu [30, 40) -> relu [140, 150);
//         fill_ [50, 60) -> fill [150, 154)
TraceData Trace(double gemm_us, bool fill) {
  KinetoTraceBuilder b;
  double relu_at = 10 + gemm_us;
  b.CpuOp("aten::mm", 0, 20)
      .Launch(2, 5, 1)
      .CpuOp("aten::relu", 30, 10)
      .Launch(32, 4, 2)
      .CpuOp(fill ? "aten::fill_" : "aten::copy_", 50, 10)
      .Launch(52, 4, 3)
      .Kernel("gemm", 10, gemm_us, 1)
      .Kernel("relu", relu_at, 10, 2)
      .Kernel(fill ? "fill" : "copy", relu_at + 10, fill ? 4 : 5, 3);
  return b.Parse(fill ? "new.json" : "base.json");
}

const DiffRow* Row(const std::vector<DiffRow>& rows, std::string_view name) {
  for (const DiffRow& r : rows) {
    if (r.name == name) return &r;
  }
  ADD_FAILURE() << "no row " << name;
  return nullptr;
}

TEST(TraceDiffTest, ReportsTheKernelDeltaAndNewAndVanishedKernels) {
  TraceDiff d = DiffTraces(Trace(100, false), Trace(130, true));
  EXPECT_EQ(d.base_path, "base.json");
  EXPECT_EQ(d.new_path, "new.json");
  ASSERT_EQ(d.kernels.size(), 4u);
  // Largest |Δ| first: gemm +30 µs, copy −5 (vanished), fill +4 (new), relu 0.
  EXPECT_EQ(d.kernels[0].name, "gemm");
  EXPECT_EQ(d.kernels[0].base_ns, 100'000);
  EXPECT_EQ(d.kernels[0].new_ns, 130'000);
  EXPECT_EQ(d.kernels[0].delta_ns(), 30'000);
  EXPECT_EQ(d.kernels[0].base_count, 1);
  EXPECT_EQ(d.kernels[0].new_count, 1);
  EXPECT_EQ(d.kernels[0].status, "slower");
  EXPECT_EQ(d.kernels[1].name, "copy");
  EXPECT_EQ(d.kernels[1].delta_ns(), -5'000);
  EXPECT_EQ(d.kernels[1].new_count, 0);
  EXPECT_EQ(d.kernels[1].status, "vanished");
  EXPECT_EQ(d.kernels[2].name, "fill");
  EXPECT_EQ(d.kernels[2].delta_ns(), 4'000);
  EXPECT_EQ(d.kernels[2].base_count, 0);
  EXPECT_EQ(d.kernels[2].status, "new");
  EXPECT_EQ(d.kernels[3].name, "relu");
  EXPECT_EQ(d.kernels[3].delta_ns(), 0);
  EXPECT_EQ(d.kernels[3].status, "unchanged");
}

TEST(TraceDiffTest, OpsCarryTheirDirectKernelTimeAndCpuTime) {
  TraceDiff d = DiffTraces(Trace(100, false), Trace(130, true));
  ASSERT_EQ(d.ops.size(), 4u);
  const DiffRow* mm = Row(d.ops, "aten::mm");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->base_ns, 100'000);
  EXPECT_EQ(mm->new_ns, 130'000);
  EXPECT_EQ(mm->base_cpu_ns, 20'000);
  EXPECT_EQ(mm->new_cpu_ns, 20'000);
  EXPECT_EQ(mm->status, "slower");
  EXPECT_EQ(d.ops[0].name, "aten::mm");  // the largest change
  EXPECT_EQ(Row(d.ops, "aten::relu")->status, "unchanged");
  EXPECT_EQ(Row(d.ops, "aten::copy_")->status, "vanished");
  EXPECT_EQ(Row(d.ops, "aten::fill_")->status, "new");
  EXPECT_EQ(Row(d.ops, "aten::fill_")->new_ns, 4'000);
}

TEST(TraceDiffTest, TimelinesOfBothTracesAndTheirTable) {
  TraceDiff d = DiffTraces(Trace(100, false), Trace(130, true));
  // Back-to-back kernels from 10 µs: base ends at 125, new at 154.
  EXPECT_EQ(d.base_timeline.total_ns, 115'000);
  EXPECT_EQ(d.new_timeline.total_ns, 144'000);
  EXPECT_EQ(d.new_timeline.idle_ns, 0);
  std::vector<Table> tables = DiffTables(d, 0);
  ASSERT_EQ(tables.size(), 6u);  // timeline, categories, kernels, ops, shapes, roofline
  const Table& timeline = tables[0];
  EXPECT_EQ(timeline.name(), "timeline_diff");
  int type = timeline.ColumnIndex("type"), delta = timeline.ColumnIndex("delta_ms");
  int percent = timeline.ColumnIndex("delta_percent");
  ASSERT_GE(type, 0);
  ASSERT_GE(delta, 0);
  ASSERT_GE(percent, 0);
  bool seen = false;
  for (const auto& row : timeline.rows()) {
    if (std::get<std::string>(row[type]) != "total_time") continue;
    seen = true;
    EXPECT_DOUBLE_EQ(std::get<double>(row[delta]), 0.029);                // 144 − 115 µs
    EXPECT_NEAR(std::get<double>(row[percent]), 100.0 * 29 / 115, 1e-9);  // 25.2 %
  }
  EXPECT_TRUE(seen);
  const Table& kernels = tables[2];
  EXPECT_EQ(kernels.name(), "kernel_diff");
  EXPECT_EQ(tables[1].name(), "kernel_category_diff");
  EXPECT_EQ(kernels.name(), "kernel_diff");
  ASSERT_EQ(kernels.size(), 4u);
  const auto& first = kernels.rows()[0];
  EXPECT_EQ(std::get<std::string>(first[kernels.ColumnIndex("name")]), "gemm");
  EXPECT_DOUBLE_EQ(std::get<double>(first[kernels.ColumnIndex("delta_us")]), 30.0);
  EXPECT_DOUBLE_EQ(std::get<double>(first[kernels.ColumnIndex("delta_percent")]), 30.0);
  // A kernel absent from the base has no percentage.
  const auto& fill = kernels.rows()[2];
  EXPECT_TRUE(std::holds_alternative<std::monostate>(fill[kernels.ColumnIndex("delta_percent")]));
  ASSERT_EQ(kernels.notes().size(), 1u);
  EXPECT_EQ(kernels.notes()[0], "1 new, 1 slower, 1 unchanged, 1 vanished");
  EXPECT_EQ(DiffTables(d, 2)[2].size(), 2u);  // top 2
}

TEST(TraceDiffTest, SaysWhichSideLeftGpuWorkOutOfItsTimeline) {
  // Base holds a 7 us kernel whose launch is not in the trace (queued before the window): the
  // timeline leaves it out, as trace report does, and the diff says so for that side only.
  TraceData base = KinetoTraceBuilder()
                       .Launch(1, 1, 1)
                       .Kernel("k", 10, 10, 1)
                       .Kernel("earlier", 30, 7, 9)
                       .Parse("base.json");
  TraceData next = KinetoTraceBuilder().Launch(1, 1, 1).Kernel("k", 10, 10, 1).Parse("new.json");
  const TraceDiff d = DiffTraces(base, next);
  EXPECT_EQ(d.base_timeline.computation_ns, 10'000);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("base: 1 GPU activities (0.007 ms of GPU time) are left out"),
            std::string::npos)
      << d.warnings[0];
}

TEST(TraceDiffTest, DifferentIterationCountsAreComparedPerIterationAndGpusAreNamed) {
  // Base profiles one step with kernel k 10 us; new two steps with k 10 us each and an H100
  // instead of an A100. Per iteration k is unchanged (10 us vs 20 / 2 us); the timeline is too.
  TraceData base = KinetoTraceBuilder()
                       .Annotation("ProfilerStep#1", 0, 50)
                       .Launch(1, 1, 1)
                       .Kernel("k", 10, 10, 1)
                       .TopLevel("deviceProperties", R"([{"id": 0, "name": "NVIDIA A100"}])")
                       .Parse("base.json");
  TraceData next = KinetoTraceBuilder()
                       .Annotation("ProfilerStep#1", 0, 50)
                       .Launch(1, 1, 1)
                       .Kernel("k", 10, 10, 1)
                       .Annotation("ProfilerStep#2", 50, 50)
                       .Launch(51, 1, 2)
                       .Kernel("k", 60, 10, 2)
                       .TopLevel("deviceProperties", R"([{"id": 0, "name": "NVIDIA H100"}])")
                       .Parse("new.json");
  TraceDiff d = DiffTraces(base, next);
  EXPECT_TRUE(d.per_iteration);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.kernels[0].base_ns, 10'000);
  EXPECT_EQ(d.kernels[0].new_ns, 10'000);  // 20 us over 2 iterations
  EXPECT_EQ(d.kernels[0].new_count, 2);    // counts stay totals
  EXPECT_EQ(d.kernels[0].status, "unchanged");
  EXPECT_EQ(d.base_timeline.computation_ns, 10'000);
  EXPECT_EQ(d.new_timeline.computation_ns, 10'000);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_NE(d.warnings[0].find("different GPUs (NVIDIA A100 vs NVIDIA H100)"), std::string::npos)
      << d.warnings[0];
  EXPECT_NE(d.warnings[1].find("base profiles 1 iterations and new 2"), std::string::npos)
      << d.warnings[1];
}

// Across GPUs the kernels are named differently (cuBLAS's sm90_xmma_gemm vs hipBLASLt's
// Cijk_...): by name each is new or vanished, by category the GEMM time compares.
TEST(TraceDiffTest, KernelCategoriesCompareAcrossDifferentlyNamedKernels) {
  const TraceData base =
      KinetoTraceBuilder()
          .Launch(1, 1, 1)
          .Kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 10, 10, 1)
          .Parse("base.json");
  const TraceData next = KinetoTraceBuilder()
                             .Launch(1, 1, 1)
                             .Kernel("Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x1", 10, 25, 1)
                             .Parse("new.json");
  const TraceDiff d = DiffTraces(base, next);
  ASSERT_EQ(d.kernels.size(), 2u);
  ASSERT_EQ(d.kernel_categories.size(), 1u);
  EXPECT_EQ(d.kernel_categories[0].name, "GEMM");
  EXPECT_EQ(d.kernel_categories[0].base_ns, 10'000);
  EXPECT_EQ(d.kernel_categories[0].new_ns, 25'000);
  EXPECT_EQ(d.kernel_categories[0].status, "slower");
}

// An XPlane profile names its GPU by architecture only ("compute capability 9.4": gfx942), a
// PyTorch trace by product: the MI300X is one GPU, not two; an MI355X (9.5) or an H100 is not.
TEST(TraceDiffTest, AnArchitectureOnlyNameMatchesItsProduct) {
  auto trace = [](const char* device) {
    return KinetoTraceBuilder()
        .Launch(1, 1, 1)
        .Kernel("k", 10, 10, 1)
        .TopLevel("deviceProperties", fmt::format(R"([{{"id": 0, "name": "{}"}}])", device))
        .Parse("t.json");
  };
  auto names_gpus = [](const TraceDiff& d) {
    return std::any_of(d.warnings.begin(), d.warnings.end(), [](const std::string& w) {
      return w.find("different GPUs") != std::string::npos;
    });
  };
  const TraceData mi300x = trace("AMD Instinct MI300X VF");
  EXPECT_FALSE(names_gpus(DiffTraces(trace("AMD GPU (compute capability 9.4)"), mi300x)));
  EXPECT_TRUE(names_gpus(DiffTraces(trace("AMD GPU (compute capability 9.5)"), mi300x)));
  EXPECT_TRUE(names_gpus(DiffTraces(trace("NVIDIA H100 80GB HBM3"), mi300x)));
  EXPECT_FALSE(names_gpus(
      DiffTraces(trace("NVIDIA GPU (compute capability 9.0)"), trace("NVIDIA H100 80GB HBM3"))));
}

// Base: 1 step calling k twice (10 us each); new: 2 steps calling k once each (10 us). Per
// iteration the time halves because k runs half as often, each call as long: "fewer calls".
// The totals (2 and 2 calls) beside per-iteration times (20 and 10 us) would say "faster".
// The tables say their times are per iteration and their counts totals.
TEST(TraceDiffTest, PerIterationStatusComparesCallsPerIteration) {
  TraceData base = KinetoTraceBuilder()
                       .Annotation("ProfilerStep#1", 0, 50)
                       .Launch(1, 1, 1)
                       .Kernel("k", 10, 10, 1)
                       .Launch(2, 1, 2)
                       .Kernel("k", 30, 10, 2)
                       .Parse("base.json");
  TraceData next = KinetoTraceBuilder()
                       .Annotation("ProfilerStep#1", 0, 50)
                       .Launch(1, 1, 1)
                       .Kernel("k", 10, 10, 1)
                       .Annotation("ProfilerStep#2", 50, 50)
                       .Launch(51, 1, 2)
                       .Kernel("k", 60, 10, 2)
                       .Parse("new.json");
  TraceDiff d = DiffTraces(base, next);
  ASSERT_TRUE(d.per_iteration);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.kernels[0].base_count, 2);
  EXPECT_EQ(d.kernels[0].new_count, 2);
  EXPECT_EQ(d.kernels[0].base_ns, 20'000);
  EXPECT_EQ(d.kernels[0].new_ns, 10'000);
  EXPECT_EQ(d.kernels[0].status, "fewer calls");
  const std::vector<Table> tables = DiffTables(d, 0);
  for (const Table& t : tables) {
    if (t.name() != "kernel_diff") continue;
    EXPECT_EQ(t.columns()[t.ColumnIndex("base_us")].header, "base (us/iter)");
    ASSERT_FALSE(t.notes().empty());
    EXPECT_EQ(t.notes()[0],
              "times per iteration (base over 1, new over 2 iterations); counts are each "
              "trace's totals");
  }
}

TEST(TraceDiffTest, StatusThresholdsAreOneMicrosecondAndOnePercent) {
  // |Δ| <= 1 µs is unchanged whatever the base; above that, |Δ| <= 1% of the base.
  EXPECT_EQ(DiffStatus(1, 1, 50'000, 51'000), "unchanged");  // 1 µs = 2%
  EXPECT_EQ(DiffStatus(1, 1, 50'000, 51'001), "slower");
  EXPECT_EQ(DiffStatus(1, 1, 1'000'000, 990'000), "unchanged");  // exactly 1%
  EXPECT_EQ(DiffStatus(1, 1, 1'000'000, 989'999), "faster");
  EXPECT_EQ(DiffStatus(2, 1, 1'000'000, 1'000'000), "unchanged");  // counts alone do not count
  EXPECT_EQ(DiffStatus(0, 0, 0, 0), "unchanged");
  // Twice the calls at the same time per call: more calls, not slower.
  EXPECT_EQ(DiffStatus(16, 32, 52'000, 99'000), "more calls");
  EXPECT_EQ(DiffStatus(32, 16, 99'000, 52'000), "fewer calls");
  // Twice the calls, each 20% slower: slower.
  EXPECT_EQ(DiffStatus(10, 20, 100'000, 240'000), "slower");
}

// A reader's warning says which file it is about, on every side of a diff; one that already
// starts with its file's path is not prefixed twice.
TEST(TraceDiffTest, ReaderWarningsNameTheirFile) {
  EXPECT_EQ(WarningAboutFile("runs/a.json.gz", "gzip stream ends early (file truncated)"),
            "runs/a.json.gz: gzip stream ends early (file truncated)");
  EXPECT_EQ(WarningAboutFile("runs/a.json", "runs/a.json at byte 9: JSON error"),
            "runs/a.json at byte 9: JSON error");
  TraceData base = KinetoTraceBuilder().Kernel("k", 0, 10, 1).Parse("base.json");
  base.warnings.push_back("gzip stream ends early (file truncated)");
  const TraceData next = KinetoTraceBuilder().Kernel("k", 0, 10, 1).Parse("next.json");
  const TraceDiff d = DiffTraces(base, next);
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_EQ(d.warnings[0], "base: base.json: gzip stream ends early (file truncated)");
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// aten::mm at two shapes, 1024^3 and 512^3, each launching one GEMM. In the new trace only the
// large one slows down, from 100 to 200 us: by name the op is 50% slower, by shape the change
// sits in one row, and the roofline rows give its rate, 2 x 1024^3 FLOP / 100 us = 21.47
// TFLOP/s before and 10.74 after; the small one stays at 2 x 512^3 / 20 us = 13.42.
TraceData TwoShapes(double large_us) {
  const char* large = R"("Input Dims": [[1024, 1024], [1024, 1024]], )"
                      R"("Input type": ["c10::BFloat16", "c10::BFloat16"])";
  const char* small = R"("Input Dims": [[512, 512], [512, 512]], )"
                      R"("Input type": ["c10::BFloat16", "c10::BFloat16"])";
  return KinetoTraceBuilder()
      .CpuOp("aten::mm", 0, 10, large)
      .Launch(2, 5, 1)
      .CpuOp("aten::mm", 20, 10, small)
      .Launch(22, 5, 2)
      .Kernel("gemm_large", 40, large_us, 1)
      .Kernel("gemm_small", 40 + large_us, 20, 2)
      .LaunchFlow(1, 2, 40)
      .LaunchFlow(2, 22, 40 + large_us)
      .Parse();
}

// One aten::mm of `dims` launching a 100 us kernel.
TraceData OneMatmul(const char* dims) {
  const std::string args = std::string(R"("Input Dims": )") + dims;
  return KinetoTraceBuilder()
      .CpuOp("aten::mm", 0, 10, args)
      .Launch(2, 5, 1)
      .Kernel("gemm", 40, 100, 1)
      .LaunchFlow(1, 2, 40)
      .Parse();
}

TEST(TraceDiffTest, TracesOfDifferentWorkloadsAreSaidToBe) {
  // The same op on other shapes shares none of its kernel time: 0% and 0%.
  const TraceDiff other =
      DiffTraces(OneMatmul("[[64, 64], [64, 64]]"), OneMatmul("[[128, 64], [64, 64]]"));
  ASSERT_FALSE(other.warnings.empty());
  EXPECT_NE(other.warnings.back().find("hold only 0% of base's and 0% of new's"), std::string::npos)
      << other.warnings.back();
  const TraceDiff same =
      DiffTraces(OneMatmul("[[64, 64], [64, 64]]"), OneMatmul("[[64, 64], [64, 64]]"));
  for (const std::string& w : same.warnings) EXPECT_EQ(w.find("workloads"), std::string::npos);
}

TEST(TraceDiffTest, ASideWithoutGpuActivityIsNamed) {
  const TraceData cpu_only = KinetoTraceBuilder().CpuOp("aten::mm", 0, 10).Parse();
  const TraceDiff d = DiffTraces(OneMatmul("[[64, 64], [64, 64]]"), cpu_only);
  bool named = false;
  for (const std::string& w : d.warnings) named |= w.starts_with("new: no GPU activity in 1 ");
  EXPECT_TRUE(named);
}

TEST(TraceDiffTest, OpShapesAndRatesLocateTheRegression) {
  const TraceDiff d = DiffTraces(TwoShapes(100), TwoShapes(200));
  ASSERT_EQ(d.op_shapes.size(), 2u);
  EXPECT_EQ(d.op_shapes[0].shape, "[[1024, 1024], [1024, 1024]]");
  EXPECT_EQ(d.op_shapes[0].status, "slower");
  EXPECT_EQ(d.op_shapes[0].delta_ns(), 100'000);
  EXPECT_EQ(d.op_shapes[1].shape, "[[512, 512], [512, 512]]");
  EXPECT_EQ(d.op_shapes[1].status, "unchanged");
  ASSERT_EQ(d.roofline.size(), 2u);
  EXPECT_NEAR(d.roofline[0].base_tflops, 2.0 * 1024 * 1024 * 1024 / 100e-6 / 1e12, 1e-9);
  EXPECT_NEAR(d.roofline[0].new_tflops, 2.0 * 1024 * 1024 * 1024 / 200e-6 / 1e12, 1e-9);
  EXPECT_NEAR(d.roofline[1].base_tflops, 2.0 * 512 * 512 * 512 / 20e-6 / 1e12, 1e-9);
  // And bytes: A, B and C of 1024 x 1024 bf16 each (6 MiB) in 100 us, then in 200 us.
  EXPECT_NEAR(d.roofline[0].base_tbps, 3.0 * 1024 * 1024 * 2 / 100e-6 / 1e12, 1e-9);
  EXPECT_NEAR(d.roofline[0].new_tbps, 3.0 * 1024 * 1024 * 2 / 200e-6 / 1e12, 1e-9);
  EXPECT_EQ(d.roofline[1].status, "unchanged");
  const std::vector<Table> tables = DiffTables(d, 0);
  ASSERT_EQ(tables.size(), 6u);
  EXPECT_EQ(tables[4].name(), "op_shape_diff");
  EXPECT_EQ(tables[5].name(), "roofline_diff");
  EXPECT_EQ(tables[5].size(), 2u);
}

// Two ranks: rank 0's GEMM goes from 100 to 130 us and its copy becomes a fill (the Trace()
// pair above), rank 1 is unchanged. The mean rank's GEMM: base (100 + 100) / 2 = 100 us, new
// (130 + 100) / 2 = 115 us, 2 calls on each side; the per-rank table shows rank 0's span
// growing (115 -> 144 us: first kernel at 10 us, the fill ends at 154) and rank 1's not.
TEST(TraceDiffTest, RunsOfSeveralRanksAreComparedAsTheirMeanRank) {
  RankDiffAccumulator ranks;
  ranks.Add(0, DiffTraces(Trace(100, false), Trace(130, true)));
  ranks.Add(1, DiffTraces(Trace(100, false), Trace(100, false)));
  const TraceDiff mean = ranks.Mean();
  const DiffRow* gemm = nullptr;
  for (const DiffRow& r : mean.kernels)
    if (r.name == "gemm") gemm = &r;
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->base_ns, 100'000);
  EXPECT_EQ(gemm->new_ns, 115'000);
  EXPECT_EQ(gemm->base_count, 2);
  EXPECT_EQ(gemm->new_count, 2);
  EXPECT_EQ(gemm->status, "slower");
  // The copy is gone on rank 0 only: 2 calls before, 1 after; the fill is new.
  int found = 0;
  for (const DiffRow& r : mean.kernels) {
    if (r.name == "copy") {
      EXPECT_EQ(r.base_count, 2);
      EXPECT_EQ(r.new_count, 1);
      ++found;
    }
    if (r.name == "fill") {
      EXPECT_EQ(r.status, "new");
      ++found;
    }
  }
  EXPECT_EQ(found, 2);
  EXPECT_EQ(mean.base_timeline.total_ns, 115'000);
  EXPECT_EQ(mean.new_timeline.total_ns, (144'000 + 115'000) / 2);
  const Table t = ranks.RankTimelineTable();
  ASSERT_EQ(t.size(), 2u);
  const int span = t.ColumnIndex("total_delta_percent");
  EXPECT_NEAR(std::get<double>(t.rows()[0][static_cast<size_t>(span)]), 100.0 * 29 / 115, 1e-9);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows()[1][static_cast<size_t>(span)]), 0.0);
  EXPECT_EQ(mean.warnings.back(),
            "2 ranks compared rank by rank: times are the mean rank's, call counts the totals");
}

// A warning every rank gives with its own figures is said once, with the first rank's; one
// only some ranks give names them.
TEST(TraceDiffTest, RankWarningsAreSaidOnce) {
  RankDiffAccumulator ranks;
  TraceDiff a, b, c;
  a.warnings = {"base: 354 GPU activities (10.614 ms) are left out", "new: cut short"};
  b.warnings = {"base: 557 GPU activities (19.244 ms) are left out"};
  c.warnings = {"base: 12 GPU activities (0.5 ms) are left out", "new: cut short"};
  ranks.Add(0, a);
  ranks.Add(1, b);
  ranks.Add(2, c);
  const TraceDiff mean = ranks.Mean();
  ASSERT_EQ(mean.warnings.size(), 3u);
  EXPECT_EQ(mean.warnings[0],
            "every rank: base: 354 GPU activities (10.614 ms) are left out (rank 0's figures; "
            "other ranks' differ)");
  EXPECT_EQ(mean.warnings[1], "ranks 0, 2: new: cut short");
}

// One all-reduce of 1 MB over two ranks; times in us.
CollectiveInstance AllReduce(int64_t rank, int64_t ts_us, int64_t dur_us) {
  return {rank,         "allreduce",   "0", 1,           1'000'000,  2,
          ts_us * 1000, dur_us * 1000, "k", "allreduce", "BFloat16", 500'000};
}

// Base: rank 1 enters 40 us after rank 0, which waits; the transfer takes 10 us. New: rank 1
// is late by 10 us only. Waits (latest start - own start): base rank 0 40 us, new 10 us
// (-75%); rank 1 arrived last both times. Latency = shortest duration = 10 us both times;
// start skew 40 -> 10 us.
TEST(TraceDiffTest, CrossRankTablesCompareWaitsAndCollectivesOfTwoRuns) {
  RankDiffAccumulator ranks;
  ranks.AddCollectives({AllReduce(0, 0, 50)}, {AllReduce(0, 0, 20)});
  ranks.AddCollectives({AllReduce(1, 40, 10)}, {AllReduce(1, 10, 10)});
  const std::vector<Table> tables = ranks.CrossRankTables();
  ASSERT_EQ(tables.size(), 2u);
  const Table& waits = tables[0];
  EXPECT_EQ(waits.name(), "straggler_diff");
  ASSERT_EQ(waits.size(), 2u);
  const std::vector<Cell>& rank0 = waits.rows()[0];
  EXPECT_EQ(std::get<int64_t>(rank0[0]), 0);
  EXPECT_DOUBLE_EQ(std::get<double>(rank0[1]), 40.0);
  EXPECT_DOUBLE_EQ(std::get<double>(rank0[2]), 10.0);
  EXPECT_DOUBLE_EQ(std::get<double>(rank0[3]), -75.0);
  const std::vector<Cell>& rank1 = waits.rows()[1];
  EXPECT_EQ(std::get<int64_t>(rank1[4]), 1);  // arrived last in base
  EXPECT_EQ(std::get<int64_t>(rank1[5]), 1);  // and in new
  EXPECT_TRUE(std::holds_alternative<std::monostate>(rank1[3])) << "no wait to compare with";

  const Table& sync = tables[1];
  EXPECT_EQ(sync.name(), "collective_sync_diff");
  ASSERT_EQ(sync.size(), 1u);
  const std::vector<Cell>& row = sync.rows()[0];
  EXPECT_EQ(std::get<std::string>(row[0]), "allreduce");
  EXPECT_EQ(std::get<int64_t>(row[2]), 500'000);
  EXPECT_EQ(std::get<int64_t>(row[3]), 1);
  EXPECT_DOUBLE_EQ(std::get<double>(row[5]), 10.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[6]), 10.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[7]), 0.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[8]), 40.0);
  EXPECT_DOUBLE_EQ(std::get<double>(row[9]), 10.0);

  // One rank has nothing to compare across.
  RankDiffAccumulator one;
  one.AddCollectives({AllReduce(0, 0, 50)}, {AllReduce(0, 0, 20)});
  EXPECT_TRUE(one.CrossRankTables().empty());
}

}  // namespace
}  // namespace sextant
