// A full performance projection with pipeline simulation (SPEC §5: PP 16, VPP 2,
// 256 micro-batches in < 20 ms), and the simulator-bound part at three sizes.
#include <benchmark/benchmark.h>

#include "job/test_job.h"
#include "projection/performance_model.h"

namespace sextant {
namespace {

Job BigJob(int pp, int vpp, int64_t micro_batches) {
  return TestJob("llama3.1_405B")
      .Layers(128)           // divisible by PP x VPP for every size below
      .Cluster("H100", pp)   // TP 8 per node
      .Parallel(8, pp, vpp)  // DP 1
      .SequenceParallel()
      .DistributedOptimizer()
      .SequenceLength(8192)
      .GlobalBatch(micro_batches);
}

void BM_FullProjection(benchmark::State& state) {
  const Job job =
      BigJob(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), state.range(2));
  PerformanceOptions o;
  o.scaling_nodes = {job.cluster.num_nodes};
  for (auto _ : state) benchmark::DoNotOptimize(ProjectPerformance(job, o));
  state.counters["ops"] = static_cast<double>(state.range(0) * state.range(1) * state.range(2));
}
BENCHMARK(BM_FullProjection)
    ->Args({4, 2, 64})
    ->Args({8, 2, 128})
    ->Args({16, 2, 256})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sextant
