// One memory projection of a 70B-class dense job and a DeepSeek-V3-class MoE job.
// Target (SPEC §5): < 1 ms per projection.
#include <benchmark/benchmark.h>

#include "job/test_job.h"
#include "memory/memory_model.h"
#include "util/units.h"

namespace sextant {
namespace {

Job DenseJob() {
  ModelSpec m;
  m.name = "llama3.1_70B-like";
  m.num_layers = 80;
  m.hidden_size = 8192;
  m.ffn_hidden_size = 28672;
  m.num_attention_heads = 64;
  m.num_query_groups = 8;
  m.kv_channels = 128;
  m.vocab_size = 128256;
  GpuSpec gpu;  // the memory projection reads only the capacity
  gpu.name = "MI300X";
  gpu.hbm_bytes = 192 * kGiB;
  return TestJob(m)
      .Cluster(gpu)
      .Parallel(8, 8, 5)
      .Dp(4)
      .SequenceParallel()
      .DistributedOptimizer()
      .SequenceLength(8192)
      .GlobalBatch(512)
      .Schedule("interleaved");
}

Job MoeJob() {
  Job job = DenseJob();
  ModelSpec& m = job.model;
  m.name = "deepseek-v3-like";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.ffn_hidden_size = 18432;
  m.num_attention_heads = 128;
  m.attention = AttentionType::kMultiLatent;
  m.mla = {1536, 512, 128, 64, 128};
  m.moe.num_experts = 256;
  m.moe.router_topk = 8;
  m.moe.ffn_hidden_size = 2048;
  m.moe.shared_expert_ffn_hidden_size = 2048;
  m.moe.moe_layers.assign(61, true);
  for (int i = 0; i < 3; ++i) m.moe.moe_layers[i] = false;
  m.mtp_num_layers = 1;
  job.parallel.tp = 1;
  job.parallel.pp = 16;
  job.parallel.vpp = 1;
  job.parallel.ep = 64;
  job.parallel.dp = 64;
  job.parallel.layout = "Et*3|(tt|)*29,m|L";
  job.parallel.vpp = 2;
  job.training.seq_length = 4096;
  job.training.global_batch_size = 8192;
  return job;
}

void BM_MemoryProjectionDense(benchmark::State& state) {
  const Job job = DenseJob();
  for (auto _ : state) benchmark::DoNotOptimize(ProjectMemory(job));
}
BENCHMARK(BM_MemoryProjectionDense)->Unit(benchmark::kMicrosecond);

void BM_MemoryProjectionMoe(benchmark::State& state) {
  const Job job = MoeJob();
  for (auto _ : state) benchmark::DoNotOptimize(ProjectMemory(job));
}
BENCHMARK(BM_MemoryProjectionMoe)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sextant
