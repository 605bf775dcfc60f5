// A Job assembled in code, for tests and benchmarks that need one without an experiment file:
//   const Job job = TestJob("llama3.1_70B").Cluster("MI300X", 4).Parallel(8, 4).GlobalBatch(64);
// Each setter names the fields it sets and nothing else is derived (DP stays 1 unless Dp()
// sets it); the rest keeps Job's defaults: size 1 on every parallel axis, 4096 tokens, Adam,
// no overlap, and a GPU with no figures until Cluster() names one.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "hardware/hardware_library.h"
#include "job/job.h"
#include "model/model_library.h"

namespace sextant {

class TestJob {
 public:
  // A model of the built-in library by name or alias; throws std::invalid_argument if unknown.
  explicit TestJob(std::string_view library_model) {
    const ModelEntry* entry = FindModel(library_model);
    if (entry == nullptr) {
      throw std::invalid_argument("TestJob: no library model '" + std::string(library_model) + "'");
    }
    job_.model = entry->spec;
  }
  // A model written out by the test itself (an independent reference, a toy shape).
  explicit TestJob(ModelSpec model) { job_.model = std::move(model); }

  TestJob& Layers(int64_t num_layers) {
    job_.model.num_layers = num_layers;
    return *this;
  }

  // `nodes` nodes of `gpus_per_node` GPUs of the hardware library; throws
  // std::invalid_argument if the GPU is unknown.
  TestJob& Cluster(std::string_view library_gpu, int nodes = 1, int gpus_per_node = 8) {
    const GpuSpec* gpu = FindGpu(library_gpu);
    if (gpu == nullptr) {
      throw std::invalid_argument("TestJob: no library GPU '" + std::string(library_gpu) + "'");
    }
    return Cluster(*gpu, nodes, gpus_per_node);
  }
  TestJob& Cluster(GpuSpec gpu, int nodes = 1, int gpus_per_node = 8) {
    job_.cluster.gpu = std::move(gpu);
    job_.cluster.num_nodes = nodes;
    job_.cluster.gpus_per_node = gpus_per_node;
    return *this;
  }
  TestJob& HbmBytes(int64_t bytes) {
    job_.cluster.gpu.hbm_bytes = bytes;
    return *this;
  }

  // Tensor x pipeline (x virtual stages per pipeline rank).
  TestJob& Parallel(int tp, int pp = 1, int vpp = 1) {
    job_.parallel.tp = tp;
    job_.parallel.pp = pp;
    job_.parallel.vpp = vpp;
    return *this;
  }
  TestJob& Dp(int dp) {
    job_.parallel.dp = dp;
    return *this;
  }
  TestJob& Cp(int cp) {
    job_.parallel.cp = cp;
    return *this;
  }
  TestJob& Ep(int ep) {
    job_.parallel.ep = ep;
    return *this;
  }
  TestJob& SequenceParallel(bool on = true) {
    job_.parallel.sequence_parallel = on;
    return *this;
  }
  TestJob& DistributedOptimizer(bool on = true) {
    job_.parallel.distributed_optimizer = on;
    return *this;
  }

  TestJob& SequenceLength(int64_t tokens) {
    job_.training.seq_length = tokens;
    return *this;
  }
  TestJob& MicroBatch(int64_t sequences) {
    job_.training.micro_batch_size = sequences;
    return *this;
  }
  TestJob& GlobalBatch(int64_t sequences) {
    job_.training.global_batch_size = sequences;
    return *this;
  }
  TestJob& Schedule(std::string_view pipeline_schedule) {
    job_.training.pipeline_schedule = ParseScheduleKind(pipeline_schedule);
    return *this;
  }
  // Megatron's --overlap-grad-reduce and --overlap-param-gather together.
  TestJob& OverlapGradReduceAndParamGather() {
    job_.training.overlap_grad_reduce = true;
    job_.training.overlap_param_gather = true;
    return *this;
  }

  const Job& job() const { return job_; }
  operator Job() const { return job_; }  // NOLINT: `const Job job = TestJob(...)...;`

 private:
  Job job_;
};

}  // namespace sextant
