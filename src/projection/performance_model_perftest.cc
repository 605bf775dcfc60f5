// A full performance projection with pipeline simulation (SPEC §5: PP 16, VPP 2,
// 256 micro-batches in < 20 ms), and the simulator-bound part at three sizes.
#include <benchmark/benchmark.h>

#include "hardware/hardware_library.h"
#include "model/model_library.h"
#include "projection/performance_model.h"

namespace sextant {
namespace {

Job BigJob(int pp, int vpp, int64_t micro_batches) {
  Job job;
  job.model = FindModel("llama3.1_405B")->spec;
  job.model.num_layers = 128;  // divisible by PP x VPP for every size below
  job.cluster.gpu = *FindGpu("H100");
  job.cluster.num_nodes = pp;  // TP 8 per node
  job.parallel.tp = 8;
  job.parallel.pp = pp;
  job.parallel.vpp = vpp;
  job.parallel.dp = 1;
  job.parallel.sequence_parallel = true;
  job.parallel.distributed_optimizer = true;
  job.training.seq_length = 8192;
  job.training.global_batch_size = micro_batches;
  return job;
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
