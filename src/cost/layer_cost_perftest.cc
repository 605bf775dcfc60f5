// Cost of evaluating the per-layer model, which the projection runs once per distinct layer
// and the search runs once per candidate configuration. The counters also report what the
// model predicts for the benchmarked layers, so a run doubles as a readable example.
#include <benchmark/benchmark.h>

#include "cost/collective_model.h"
#include "cost/efficiency_fit.h"
#include "cost/layer_cost.h"
#include "hardware/hardware_library.h"
#include "job/test_job.h"

namespace sextant {
namespace {

Job MakeJob(const char* model, const char* gpu, int tp, int ep, bool sequence_parallel) {
  return TestJob(model)
      .Cluster(gpu)
      .Parallel(tp)
      .Ep(ep)
      .SequenceParallel(sequence_parallel)
      .Dp(8 / tp)
      .SequenceLength(4096)
      .MicroBatch(1);
}

void Report(benchmark::State& state, const LayerCost& c) {
  state.counters["fwd_ms"] = c.Forward() * 1e3;
  state.counters["bwd_input_ms"] = c.BackwardInput() * 1e3;
  state.counters["bwd_weight_ms"] = c.BackwardWeight() * 1e3;
  state.counters["tp_comm_ms"] = (c.forward.tp_comm + c.backward_input.tp_comm) * 1e3;
  state.counters["ep_comm_ms"] = (c.forward.ep_comm + c.backward_input.ep_comm) * 1e3;
  state.counters["TFLOP/s"] =
      (c.flops_forward + c.flops_backward) / (c.Forward() + c.Backward()) / 1e12;
}

void RunLayer(benchmark::State& state, const Job& job, int64_t layer) {
  const auto collectives = MakeCollectiveModel(job.cluster, "auto", job.parallel);
  const LayerCostModel model(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get());
  LayerCost c;
  for (auto _ : state) {
    c = model.TransformerLayer(layer);
    benchmark::DoNotOptimize(c);
  }
  Report(state, c);
}

void BM_DenseLayer_Llama70B_MI300X_TP8(benchmark::State& state) {
  RunLayer(state, MakeJob("llama3.1_70B", "MI300X", 8, 1, true), 0);
}
BENCHMARK(BM_DenseLayer_Llama70B_MI300X_TP8);

void BM_DenseLayer_Llama8B_H100_TP1(benchmark::State& state) {
  RunLayer(state, MakeJob("llama3.1_8B", "H100", 1, 1, false), 0);
}
BENCHMARK(BM_DenseLayer_Llama8B_H100_TP1);

void BM_MoeLayer_DeepSeekV3_MI300X_EP8(benchmark::State& state) {
  Job job = MakeJob("deepseek_v3", "MI300X", 1, 8, false);
  job.training.deepep = true;
  job.training.ep_overlap = true;
  RunLayer(state, job, 10);  // layers 0-2 are dense
}
BENCHMARK(BM_MoeLayer_DeepSeekV3_MI300X_EP8);

// Building the model (efficiency table, GEMM / attention / memory models) plus one layer:
// what a search pays per candidate.
void BM_BuildAndEvaluate_Llama70B(benchmark::State& state) {
  const Job job = MakeJob("llama3.1_70B", "MI300X", 8, 1, true);
  const auto collectives = MakeCollectiveModel(job.cluster, "auto", job.parallel);
  for (auto _ : state) {
    const LayerCostModel model(job, EfficiencyTable::Default(job.cluster.gpu), collectives.get());
    benchmark::DoNotOptimize(model.TransformerLayer(0));
  }
}
BENCHMARK(BM_BuildAndEvaluate_Llama70B);

void BM_Gemm_8192Cubed(benchmark::State& state) {
  const GpuSpec gpu = *FindGpu("MI300X");
  const GemmModel model(gpu, EfficiencyTable::Default(gpu));
  GemmEstimate e;
  for (auto _ : state) {
    e = model.Estimate({8192, 8192, 8192}, DType::kBF16);
    benchmark::DoNotOptimize(e);
  }
  state.counters["model_us"] = e.seconds * 1e6;
  state.counters["TFLOP/s"] = e.flops / e.seconds / 1e12;
}
BENCHMARK(BM_Gemm_8192Cubed);

// Calibration from published measurements: cuBLAS bf16 GEMMs on B200 as listed on
// pyptx.dev/performance (PyTorch 2.8 / CUDA 12.8), TFLOP/s turned into times. The counters
// report the default table's error on them and the error after fitting.
void BM_CalibrateGemm_B200_PublishedCublas(benchmark::State& state) {
  const GpuSpec gpu = *FindGpu("B200");
  struct Point {
    int64_t m, n, k;
    double tflops;
  };
  const Point points[] = {{2048, 2048, 2048, 1006},
                          {4096, 4096, 4096, 1532},
                          {4096, 8192, 8192, 1652},
                          {8192, 4096, 8192, 1648},
                          {8192, 8192, 8192, 1610}};
  std::vector<MeasuredKernel> measured;
  for (const Point& p : points) {
    MeasuredKernel k;
    k.gemm = {p.m, p.n, p.k};
    k.seconds = 2.0 * p.m * p.n * p.k / (p.tflops * 1e12);
    measured.push_back(k);
  }
  EfficiencyFit r;
  for (auto _ : state) {
    r = FitEfficiencyTable(gpu, EfficiencyTable::Default(gpu), measured, 1);
    benchmark::DoNotOptimize(r);
  }
  state.counters["mape_default_pct"] = r.errors.at(0).mean_before * 100;
  state.counters["mape_fitted_pct"] = r.errors.at(0).mean_after * 100;
  int fitted = 0;
  for (const FittedClass& c : r.classes) fitted += c.fitted;
  state.counters["classes_fitted"] = fitted;
}
BENCHMARK(BM_CalibrateGemm_B200_PublishedCublas);

}  // namespace
}  // namespace sextant
