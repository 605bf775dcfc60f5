// `projection search` throughput (SPEC §5: >= 10,000 configurations per second per core):
// the whole search — enumeration, validation, memory model, analytic ranking and the full
// re-projection of the shortlist — on one thread. valid_per_s counts the configurations that
// were built, validated and costed by the memory model (pruned and invalid ones are not work
// for the answer) per second of process CPU time, i.e. per core, whatever else the machine
// runs; configs_per_s counts every grid point.
#include <benchmark/benchmark.h>

#include "job/test_job.h"
#include "projection/design_space_search.h"

namespace sextant {
namespace {

Job SearchJob(const std::string& model, int nodes, int64_t gbs, int64_t seq) {
  Job job = TestJob(model)
                .Cluster("MI300X", nodes)
                .SequenceLength(seq)
                .GlobalBatch(gbs)
                .OverlapGradReduceAndParamGather();
  job.training.cross_entropy_loss_fusion = true;
  return job;
}

void RunSearch(benchmark::State& state, const Job& job) {
  SearchOptions options;
  options.threads = 1;
  SearchCounts counts;
  for (auto _ : state) {
    const SearchResult r = SearchDesignSpace(job, options);
    counts = r.counts;
    benchmark::DoNotOptimize(r.top.data());
  }
  const auto rate = [](int64_t n) {
    return benchmark::Counter(static_cast<double>(n),
                              benchmark::Counter::kIsIterationInvariantRate);
  };
  state.counters["configs"] = static_cast<double>(counts.enumerated);
  state.counters["fit"] = static_cast<double>(counts.evaluated);
  state.counters["configs_per_s"] = rate(counts.enumerated);
  // Valid configurations: each went through the memory model (and, if it fits, the ranking).
  state.counters["valid_per_s"] = rate(counts.Valid());
  state.counters["fit_per_s"] = rate(counts.evaluated);
}

// Llama 3 70B on 8 nodes of MI300X (64 GPUs), global batch 256 x 8192 tokens.
void BM_SearchLlama3_70B(benchmark::State& state) {
  RunSearch(state, SearchJob("llama3_70B", 8, 256, 8192));
}
BENCHMARK(BM_SearchLlama3_70B)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// Mixtral 8x7B (MoE: EP and ETP searched too) on 8 nodes of MI300X, global batch 256 x 4096.
void BM_SearchMixtral8x7B(benchmark::State& state) {
  RunSearch(state, SearchJob("mixtral_8x7B", 8, 256, 4096));
}
BENCHMARK(BM_SearchMixtral8x7B)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// DeepSeek-V2-Lite (64 experts, MLA) on 4 nodes of MI300X, global batch 256 x 4096.
void BM_SearchDeepSeekV2Lite(benchmark::State& state) {
  RunSearch(state, SearchJob("deepseek_v2_lite", 4, 256, 4096));
}
BENCHMARK(BM_SearchDeepSeekV2Lite)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// DeepSeek-V3 (256 experts, MLA, 61 layers) on 64 nodes of MI300X, global batch 256 x 4096:
// PP > 1 is in the grid wherever the layers split.
void BM_SearchDeepSeekV3(benchmark::State& state) {
  RunSearch(state, SearchJob("deepseek_v3", 64, 256, 4096));
}
BENCHMARK(BM_SearchDeepSeekV3)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// Kimi-K2 (384 experts, 61 layers, 1T parameters) on 128 nodes of MI300X, global batch 256 x
// 4096.
void BM_SearchKimiK2(benchmark::State& state) {
  RunSearch(state, SearchJob("kimi_k2", 128, 256, 4096));
}
BENCHMARK(BM_SearchKimiK2)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace
}  // namespace sextant
