// Cost of one collective estimate per preset: the search evaluates several per layer and
// parallel dimension for every candidate configuration.
#include <benchmark/benchmark.h>

#include "cost/collective_model.h"
#include "hardware/hardware_library.h"

namespace sextant {
namespace {

void BM_Estimate(benchmark::State& state, const char* preset, Collective op) {
  const ClusterSpec cluster = MakeCluster(*FindGpu("MI300X"), 16);
  const auto model = MakeCollectiveModel(cluster, preset);
  int64_t bytes = 1 << 20;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model->Estimate(op, bytes, CommGroup{128, 8}));
    bytes = bytes == (int64_t{1} << 30) ? (1 << 20) : bytes * 2;
  }
}

BENCHMARK_CAPTURE(BM_Estimate, rccl_allreduce, "rccl", Collective::kAllReduce);
BENCHMARK_CAPTURE(BM_Estimate, rccl_alltoall, "rccl", Collective::kAllToAll);
BENCHMARK_CAPTURE(BM_Estimate, primus_allreduce, "primus", Collective::kAllReduce);
BENCHMARK_CAPTURE(BM_Estimate, primus_alltoall, "primus", Collective::kAllToAll);

}  // namespace
}  // namespace sextant
