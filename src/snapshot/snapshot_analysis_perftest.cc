// Throughput of reading and analysing the largest real snapshot in the corpus.
#include <benchmark/benchmark.h>

#include <string>

#include "snapshot/memory_snapshot.h"
#include "snapshot/pickle_reader.h"
#include "snapshot/snapshot_analysis.h"
#include "util/corpus_path.h"

namespace sextant {
namespace {

const std::string kLargest =
    CorpusPath("snapshots/kkaitlyn111-cs336-a2-systems/memory_ctx128_fullstep.pickle");

void BM_ReadPickle(benchmark::State& state) {
  std::string bytes(InputText::Load(kLargest).text());
  for (auto _ : state) benchmark::DoNotOptimize(ReadPickle(bytes, kLargest));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_ReadPickle)->Unit(benchmark::kMillisecond);

void BM_ParseSnapshotModel(benchmark::State& state) {
  std::string bytes(InputText::Load(kLargest).text());
  for (auto _ : state) benchmark::DoNotOptimize(ParseMemorySnapshot(bytes, kLargest));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_ParseSnapshotModel)->Unit(benchmark::kMillisecond);

void BM_Analyze(benchmark::State& state) {
  MemorySnapshot s = LoadMemorySnapshot(kLargest);
  for (auto _ : state) benchmark::DoNotOptimize(AnalyzeSnapshot(s));
  state.counters["trace_entries"] = static_cast<double>(s.device_traces[0].size());
}
BENCHMARK(BM_Analyze)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sextant
