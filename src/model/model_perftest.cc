// Costs of the model-library calls that projection search makes once per configuration.
#include <benchmark/benchmark.h>

#include "model/flop_count.h"
#include "model/model_library.h"
#include "model/parameter_count.h"

namespace sextant {
namespace {

void BM_CountParametersDeepSeekV3(benchmark::State& state) {
  const ModelSpec& m = FindModel("deepseek_v3")->spec;
  for (auto _ : state) benchmark::DoNotOptimize(CountParameters(m, m.PaddedVocabSize(8)).Total());
}
BENCHMARK(BM_CountParametersDeepSeekV3);

void BM_CountParametersLlama405B(benchmark::State& state) {
  const ModelSpec& m = FindModel("llama3.1_405B")->spec;
  for (auto _ : state) benchmark::DoNotOptimize(CountParameters(m).Total());
}
BENCHMARK(BM_CountParametersLlama405B);

void BM_MegatronModelFlopsDeepSeekV3(benchmark::State& state) {
  const ModelSpec& m = FindModel("deepseek_v3")->spec;
  for (auto _ : state) benchmark::DoNotOptimize(MegatronModelFlops(m, {4096, 1024, 129280}));
}
BENCHMARK(BM_MegatronModelFlopsDeepSeekV3);

void BM_FindModelByAlias(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(FindModel("Meta-Llama-3.1-8B"));
}
BENCHMARK(BM_FindModelByAlias);

void BM_SimilarModelNames(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(SimilarModelNames("lama3-8b"));
}
BENCHMARK(BM_SimilarModelNames);

}  // namespace
}  // namespace sextant
