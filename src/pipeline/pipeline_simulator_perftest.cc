// Pipeline simulation speed. The projection runs one simulation per configuration, so the
// SPEC budget (PP 16, VPP 2, 256 micro-batches in well under 20 ms) must hold with room to
// spare; the scaling benchmarks show time growing linearly in PP * VPP * m.
#include <benchmark/benchmark.h>

#include "pipeline/pipeline_simulator.h"
#include "pipeline/schedule_generators.h"

namespace sextant {
namespace {

PipelineCosts CostsFor(int stages) {
  PipelineCosts costs = UniformCosts(stages, 1.0e-3, 2.0e-3, 0, 1 << 20);
  costs.p2p_s = {5e-5};
  return costs;
}

// Generation plus simulation of the SPEC case.
void BM_InterleavedPP16VPP2M256(benchmark::State& state) {
  const PipelineShape shape{16, 2, 256};
  const PipelineCosts costs = CostsFor(32);
  for (auto _ : state) {
    const Schedule schedule = MakeInterleavedSchedule(shape);
    benchmark::DoNotOptimize(SimulatePipeline(schedule, costs).step_time_s);
  }
}
BENCHMARK(BM_InterleavedPP16VPP2M256)->Unit(benchmark::kMillisecond);

// Simulation alone, the schedule generated once.
void BM_SimulateOnlyPP16VPP2M256(benchmark::State& state) {
  const PipelineShape shape{16, 2, 256};
  const PipelineCosts costs = CostsFor(32);
  const Schedule schedule = MakeInterleavedSchedule(shape);
  for (auto _ : state) benchmark::DoNotOptimize(SimulatePipeline(schedule, costs).step_time_s);
}
BENCHMARK(BM_SimulateOnlyPP16VPP2M256)->Unit(benchmark::kMillisecond);

// Three sizes, each 4x the ops of the previous: (PP, VPP, m) = (8, 2, 64), (16, 2, 128),
// (32, 2, 256). N = PP * VPP * m; the fitted complexity should be O(N).
void BM_InterleavedScaling(benchmark::State& state) {
  const int pp = static_cast<int>(state.range(0));
  const PipelineShape shape{pp, 2, pp * 8};
  const PipelineCosts costs = CostsFor(pp * 2);
  for (auto _ : state) {
    const Schedule schedule = MakeInterleavedSchedule(shape);
    benchmark::DoNotOptimize(SimulatePipeline(schedule, costs).step_time_s);
  }
  state.SetComplexityN(int64_t{pp} * 2 * pp * 8);
}
BENCHMARK(BM_InterleavedScaling)
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Complexity(benchmark::oN)
    ->Unit(benchmark::kMicrosecond);

// The V-shape zero-bubble schedule with split backward (three op kinds) at the SPEC size.
void BM_ZbvFormattedPP16M256(benchmark::State& state) {
  const PipelineShape shape{16, 2, 256};
  const PipelineCosts costs = CostsFor(32);
  for (auto _ : state) {
    const Schedule schedule = MakeZbvFormattedSchedule(shape);
    benchmark::DoNotOptimize(SimulatePipeline(schedule, costs).step_time_s);
  }
}
BENCHMARK(BM_ZbvFormattedPP16M256)->Unit(benchmark::kMillisecond);

// The cost-driven greedy zero-bubble schedule (ZB-H2: up to 2 PP - 1 micro-batches in
// flight), generated with real costs as the projection does, at (PP, m) = (8, 64), (16, 128),
// (32, 256): generation should stay close to linear in PP * m as the simulation does.
void BM_ZeroBubbleH2Scaling(benchmark::State& state) {
  const int pp = static_cast<int>(state.range(0));
  const PipelineShape shape{pp, 1, pp * 8};
  PipelineCosts costs = UniformCosts(pp, 1.0e-3, 1.0e-3, 1.0e-3, 1 << 20);
  costs.p2p_s = {5e-5};
  for (auto _ : state) {
    const Schedule schedule = MakeZeroBubbleH2Schedule(shape, &costs);
    benchmark::DoNotOptimize(SimulatePipeline(schedule, costs).step_time_s);
  }
  state.SetComplexityN(int64_t{pp} * pp * 8);
}
BENCHMARK(BM_ZeroBubbleH2Scaling)
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Complexity()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sextant
