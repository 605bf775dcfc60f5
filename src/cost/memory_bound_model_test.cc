#include "cost/memory_bound_model.h"

#include <gtest/gtest.h>

#include <string>

#include "hardware/hardware_library.h"
#include "util/csv_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

TEST(MemoryBoundBytesTest, PerOperatorByteCounts) {
  // 4096 tokens x 4096 hidden in bf16 = 16,777,216 elements = 32 MiB per tensor.
  const double n = 4096.0 * 4096;
  EXPECT_DOUBLE_EQ(NormBytes(4096, 4096, 2).forward, 2 * n * 2 + 4096 * 4);
  EXPECT_DOUBLE_EQ(NormBytes(4096, 4096, 2).backward, 3 * n * 2 + 4096 * 4);
  EXPECT_DOUBLE_EQ(ResidualAddBytes(4096, 4096, 2).forward, 3 * n * 2);
  EXPECT_DOUBLE_EQ(DropoutBytes(4096, 4096, 2).forward, 5 * n);
  // Rotary on 32 query heads and 8 key heads of 128: (4096 + 1024) wide, read + write.
  EXPECT_DOUBLE_EQ(RotaryBytes(4096, 4096, 1024, 2).forward, 2 * 4096.0 * 5120 * 2);
  // SwiGLU over 14336 wide: 3 tensors forward, 5 backward.
  EXPECT_DOUBLE_EQ(SwiGluBytes(4096, 14336, 2).forward, 3 * 4096.0 * 14336 * 2);
  EXPECT_DOUBLE_EQ(SwiGluBytes(4096, 14336, 2).backward, 5 * 4096.0 * 14336 * 2);
  EXPECT_DOUBLE_EQ(GeluBytes(10, 100, 2).backward, 3 * 1000.0 * 2);
  EXPECT_DOUBLE_EQ(EmbeddingBytes(10, 100, 2).backward, 1000.0 * 10);
  EXPECT_DOUBLE_EQ(RouterBytes(10, 64).forward, 3 * 640.0 * 4);
}

TEST(MemoryBoundBytesTest, CrossEntropyFusedReadsTheLogitsFewerTimes) {
  // 4096 tokens x 16032 local vocabulary (128256 / TP 8) in bf16.
  const double logits = 4096.0 * 16032 * 2;
  EXPECT_DOUBLE_EQ(CrossEntropyBytes(4096, 16032, 2, false).forward, 3 * logits);
  EXPECT_DOUBLE_EQ(CrossEntropyBytes(4096, 16032, 2, false).backward, 3 * logits);
  EXPECT_DOUBLE_EQ(CrossEntropyBytes(4096, 16032, 2, true).forward, logits);
  EXPECT_DOUBLE_EQ(CrossEntropyBytes(4096, 16032, 2, true).backward, 2 * logits);
}

TEST(MemoryBoundBytesTest, PermuteCopiesTopKRowsAndSortsWithSeveralLocalExperts) {
  // 4096 tokens, top-8, hidden 7168: read 4096 rows, write 32768; sorting reads and writes
  // the 32768 rows again.
  const double row = 7168 * 2;
  EXPECT_DOUBLE_EQ(PermuteBytes(4096, 8, 7168, 2, false).forward, (4096 + 32768) * row);
  EXPECT_DOUBLE_EQ(PermuteBytes(4096, 8, 7168, 2, true).forward,
                   (4096 + 32768) * row + 2 * 32768 * row);
}

TEST(MemoryBoundBytesTest, UnfusedPermutationCountsEveryPyTorchOp) {
  // 4096 tokens, top-8, hidden 2048, bf16: R = 32768 copies of 4096 B, 4096 token rows.
  const double copies = 32768.0 * 4096, rows = 4096.0 * 4096;
  // index_select reads the rows and writes the copies; its backward only zero-fills the rows
  // (the index_add_ is atomic, charged apart).
  EXPECT_DOUBLE_EQ(UnfusedPermuteBytes(4096, 8, 2048, 2, false).forward, rows + copies);
  EXPECT_DOUBLE_EQ(UnfusedPermuteBytes(4096, 8, 2048, 2, false).backward, rows);
  // Megatron's unpermute: the zero-filled output forward, the gather back to the copies (read
  // rows, write copies) backward.
  EXPECT_DOUBLE_EQ(UnfusedUnpermuteBytes(4096, 8, 2048, 2, false, false).forward, rows);
  EXPECT_DOUBLE_EQ(UnfusedUnpermuteBytes(4096, 8, 2048, 2, false, false).backward, rows + copies);
  // torchtitan's also multiplies the copies by their probabilities (read + write) and, in
  // backward, forms the copies' gradient (read + write) and the probabilities' (read both).
  EXPECT_DOUBLE_EQ(UnfusedUnpermuteBytes(4096, 8, 2048, 2, false, true).forward, 2 * copies + rows);
  EXPECT_DOUBLE_EQ(UnfusedUnpermuteBytes(4096, 8, 2048, 2, false, true).backward,
                   rows + 5 * copies);
  // Sorting by local expert reads and writes the copies once more each way.
  EXPECT_DOUBLE_EQ(UnfusedUnpermuteBytes(4096, 8, 2048, 2, true, false).forward, 2 * copies + rows);
  EXPECT_DOUBLE_EQ(UnfusedPermuteBytes(4096, 8, 2048, 2, true).backward, rows + 2 * copies);
}

TEST(MemoryBoundBytesTest, EagerPyTorchKernelChains) {
  // bf16 activations, 10 tokens x 100 wide = 1000 elements. RMSNorm forward: 6 + 8 + 4 + 8 +
  // 6 + 4 = 36 bytes per element (fused: 4); backward 8 + 6 + 20 + 4 + 12 + 12 + 6 = 68.
  EXPECT_DOUBLE_EQ(EagerRmsNormBytes(10, 100, 2).forward, 36000);
  EXPECT_DOUBLE_EQ(EagerRmsNormBytes(10, 100, 2).backward, 68000);
  // Rotary over q (60) + k (40) columns: 6 + 8 + 6 = 20 bytes per element each way.
  EXPECT_DOUBLE_EQ(EagerRotaryBytes(10, 60, 40, 2).forward, 20000);
  EXPECT_DOUBLE_EQ(EagerRotaryBytes(10, 60, 40, 2).backward, 20000);
  // SwiGLU: silu 4 + mul 6 = 10 bytes forward, 12 + 6 = 18 backward.
  EXPECT_DOUBLE_EQ(EagerSwiGluBytes(10, 100, 2).forward, 10000);
  EXPECT_DOUBLE_EQ(EagerSwiGluBytes(10, 100, 2).backward, 18000);
  // repeat_kv from 25 to 100 columns: K and V each read 250 and write 1000 elements of 2 B.
  EXPECT_DOUBLE_EQ(RepeatKvBytes(10, 25, 100, 2).forward, 2 * (250 + 1000) * 2);
}

TEST(MemoryBoundBytesTest, UnfusedGradientAccumulationReadsTheGradAndUpdatesMainGrad) {
  // main_grad.add_(grad): read 2 B (bf16 grad) + read 4 B and write 4 B (fp32 main_grad).
  EXPECT_DOUBLE_EQ(UnfusedGradAccumulationBytes(1000, 2, 4), 10000.0);
  // bf16 main grads (Megatron --grad-reduce-in-bf16 style): 2 + 2 + 2.
  EXPECT_DOUBLE_EQ(UnfusedGradAccumulationBytes(1000, 2, 2), 6000.0);
}

TEST(MemoryBoundBytesTest, CurrentScalingReadsTheInputOnceMoreForItsAmax) {
  EXPECT_DOUBLE_EQ(AmaxBytes(4096, 4096, 6144, 2).forward, 4096.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(AmaxBytes(4096, 4096, 6144, 2).backward, 4096.0 * 6144 * 2);
}

TEST(MemoryBoundBytesTest, Fp8CastWritesACopyAndItsTranspose) {
  // 4096 tokens, 4096 -> 6144 projection: forward casts the 4096-wide input (read 2 B, write
  // 1 + 1 B per element), backward the 6144-wide output gradient.
  EXPECT_DOUBLE_EQ(LowPrecisionCastBytes(4096, 4096, 6144, 2, 1).forward, 4096.0 * 4096 * 4);
  EXPECT_DOUBLE_EQ(LowPrecisionCastBytes(4096, 4096, 6144, 2, 1).backward, 4096.0 * 6144 * 4);
  EXPECT_DOUBLE_EQ(LowPrecisionCastBytes(10, 10, 10, 2, 0.5).forward, 100.0 * 3);
}

TEST(MemoryBoundModelTest, TimeUsesTheSizeClassOfTheKernel) {
  GpuSpec g;
  g.name = "MI300X";
  g.vendor = Vendor::kAMD;
  g.hbm_bandwidth = 5.3e12;
  const MemoryBoundModel model(g, EfficiencyTable::Default(g));
  // 67,125,248 B falls in the 10-100 MB class: Primus's 0.566 x Calculon's 0.75/0.90.
  const double bytes = NormBytes(4096, 4096, 2).forward;
  EXPECT_NEAR(model.Time(bytes), bytes / (5.3e12 * 0.566 * 0.75 / 0.90), 1e-15);
  // 200 MB: the top class, 0.566.
  EXPECT_NEAR(model.Time(200e6), 200e6 / (5.3e12 * 0.566), 1e-15);
  EXPECT_DOUBLE_EQ(model.Time(0), 0.0);
  // A tiny kernel still takes MI300X's launch floor, 4.63 µs (fitted on the corpus's MI300X
  // traces: efficiency_table.cc).
  EXPECT_DOUBLE_EQ(model.Time(1000), 4.63e-6);
  g.hbm_bandwidth = 0;
  EXPECT_THROW(MemoryBoundModel(g, EfficiencyTable::Ideal()), UserError);
}

// On an H200: scatter_add_ at 268 G adds/s, index_add_ at 122.5 G adds/s; 4096 tokens x top-8 x
// 2048 = 67,108,864 adds take 250.41 and 547.83 µs. H100 has the same die and L2: the same
// rates. MI355X (8 TB/s, not measured) is scaled by HBM bandwidth: 268 x 8 / 4.8 = 446.7 G/s.
TEST(MemoryBoundModelTest, AtomicAddsRunAtTheL2AtomicRate) {
  const GpuSpec& h200 = *FindGpu("H200");
  const MemoryBoundModel model(h200, EfficiencyTable::Default(h200));
  EXPECT_NEAR(model.AtomicAddTime(67108864, AtomicAdd::kScatterAdd), 250.41e-6, 0.01e-6);
  EXPECT_NEAR(model.AtomicAddTime(67108864, AtomicAdd::kIndexAdd), 547.83e-6, 0.01e-6);
  EXPECT_DOUBLE_EQ(AtomicAddsPerSecond(*FindGpu("H100"), AtomicAdd::kScatterAdd), 268e9);
  EXPECT_NEAR(AtomicAddsPerSecond(*FindGpu("MI355X"), AtomicAdd::kScatterAdd), 446.67e9, 0.01e9);
  EXPECT_DOUBLE_EQ(model.AtomicAddTime(0, AtomicAdd::kScatterAdd), 0.0);
  // A handful of adds still takes a kernel launch.
  EXPECT_DOUBLE_EQ(model.AtomicAddTime(10, AtomicAdd::kIndexAdd), 2.8e-6);
}

// Every bf16 shape measured on an H200 (tests/data/h200/permute.csv: T x k rows of H into T
// rows, k = 1-8, H = 2048-7168): the model is within 10% of scatter_add_'s and index_add_'s
// time (each less the zero fill the benchmark ran before it).
TEST(MemoryBoundModelTest, AtomicAddsMatchTheH200Measurements) {
  const GpuSpec& h200 = *FindGpu("H200");
  const MemoryBoundModel model(h200, EfficiencyTable::Default(h200));
  const CsvTable t =
      CsvTable::Read(std::string(SEXTANT_SOURCE_DIR) + "/tests/data/h200/permute.csv");
  int checked = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.Get(i, "dtype") != "bf16") continue;
    const double adds =
        std::stod(t.Get(i, "tokens")) * std::stod(t.Get(i, "topk")) * std::stod(t.Get(i, "hidden"));
    const double zero = std::stod(t.Get(i, "zero_ms")) * 1e-3;
    const double scatter = std::stod(t.Get(i, "scatter_add_ms")) * 1e-3 - zero;
    const double index = std::stod(t.Get(i, "index_add_ms")) * 1e-3 - zero;
    EXPECT_NEAR(model.AtomicAddTime(adds, AtomicAdd::kScatterAdd) / scatter, 1.0, 0.10)
        << "line " << t.line(i);
    EXPECT_NEAR(model.AtomicAddTime(adds, AtomicAdd::kIndexAdd) / index, 1.0, 0.10)
        << "line " << t.line(i);
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

}  // namespace
}  // namespace sextant
