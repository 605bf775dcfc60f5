// How long turning a configuration into a Job takes: the bundled example (model from the
// library) and a Primus experiment read through a checkout (about 10 YAML files with
// their extends chains).
#include <string>

#include <benchmark/benchmark.h>

#include "job/job_builder.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

void BM_BuildDefaultExample(benchmark::State& state) {
  JobRequest request;
  request.use_environment = false;
  for (auto _ : state) benchmark::DoNotOptimize(BuildJob(request));
}
BENCHMARK(BM_BuildDefaultExample)->Unit(benchmark::kMicrosecond);

void BM_BuildPrimusExperiment(benchmark::State& state) {
  const std::string primus = CorpusPath("primus");
  JobRequest request;
  request.config_path = primus + "/examples/megatron/configs/MI355X/deepseek_v3-BF16-pretrain.yaml";
  request.primus_path = primus;
  request.use_environment = false;
  for (auto _ : state) benchmark::DoNotOptimize(BuildJob(request));
}
BENCHMARK(BM_BuildPrimusExperiment)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sextant
