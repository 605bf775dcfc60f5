// Throughput of the Kineto reader and of the whole per-rank analysis on a synthetic trace
// shaped like a real one (ops with shapes, runtime launches, kernels, flows, python frames).
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include "trace/kineto_reader.h"
#include "trace/trace_report.h"
#include "util/compressed_file.h"

namespace sextant {
namespace {

std::string SyntheticTrace(int steps) {
  std::string text =
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"name\": \"NVIDIA H100 80GB "
      "HBM3\"}],\n\"traceEvents\": [\n";
  for (int i = 0; i < steps; ++i) {
    int64_t t = int64_t{i} * 100;
    text += fmt::format(
        "{{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"model.py(12): forward\", "
        "\"pid\": 1, \"tid\": 1, "
        "\"ts\": {}.125, \"dur\": 90.5, \"args\": {{\"Python parent id\": 3, \"Python id\": "
        "{}}}}},\n"
        "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": {}.250, "
        "\"dur\": 50.125, \"args\": {{\"External id\": {}, \"Input Dims\": [[512], [64, 256], "
        "[256, 512]], "
        "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"], \"Concrete "
        "Inputs\": [\"\", \"\", \"\"]}}}},\n"
        "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": {}.5, "
        "\"dur\": 5.25, \"args\": {{\"cbid\": 211, \"correlation\": {}}}}},\n"
        "{{\"ph\": \"s\", \"id\": {}, \"pid\": 1, \"tid\": 1, \"ts\": {}.5, \"cat\": \"ac2g\", "
        "\"name\": \"ac2g\"}},\n"
        "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
        "\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64\", "
        "\"pid\": 0, \"tid\": 7, \"ts\": {}.75, \"dur\": 20.5, \"args\": {{\"External id\": {}, "
        "\"queued\": 0, \"device\": 0, "
        "\"context\": 1, \"stream\": 7, \"correlation\": {}, \"registers per thread\": 168, "
        "\"shared memory\": 0, "
        "\"grid\": [132, 1, 1], \"block\": [384, 1, 1], \"est. achieved occupancy %\": 0}}}},\n"
        "{{\"ph\": \"f\", \"id\": {}, \"pid\": 0, \"tid\": 7, \"ts\": {}.75, \"cat\": \"ac2g\", "
        "\"name\": \"ac2g\", \"bp\": \"e\"}}{}\n",
        t, i, t, i, t + 10, i, i, t + 10, t + 30, i, i, i, t + 30, i + 1 < steps ? "," : "");
  }
  return text + "], \"traceName\": \"synthetic\"}";
}

void BM_ParseKinetoTrace(benchmark::State& state) {
  InputText input = InputText::FromString(SyntheticTrace(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    TraceData trace = ParseKinetoTrace(input, "synthetic.json");
    benchmark::DoNotOptimize(trace.gpu.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(input.text().size()));
}
// 20k steps is ~16 MB (one pass); 80k steps is ~64 MB (read in 8 MB chunks).
BENCHMARK(BM_ParseKinetoTrace)->Arg(20000)->Arg(80000)->Unit(benchmark::kMillisecond);

void BM_ParseAndAnalyse(benchmark::State& state) {
  InputText input = InputText::FromString(SyntheticTrace(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    TraceData trace = ParseKinetoTrace(input, "synthetic.json");
    RankReport report = AnalyzeTrace(trace, ReportOptions{}, 0);
    benchmark::DoNotOptimize(report.timeline.busy_ns);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(input.text().size()));
}
BENCHMARK(BM_ParseAndAnalyse)->Arg(80000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sextant
