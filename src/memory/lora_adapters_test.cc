#include "memory/lora_adapters.h"

#include <gtest/gtest.h>

#include "cost/layer_cost.h"
#include "job/test_job.h"
#include "memory/model_state_memory.h"

namespace sextant {
namespace {

Job WithLora(Job job, std::vector<std::string> targets = {}) {
  job.training.lora.enabled = true;
  if (!targets.empty()) job.training.lora.target_modules = std::move(targets);
  return job;
}

// Llama 3 8B (32 layers, hidden 4096, 32 heads of 128, 8 KV heads, FFN 14336, SwiGLU), LoRA
// rank 32 on linear_qkv, linear_proj, linear_fc1 and linear_fc2, r·(in + out) each:
//   TP 1: 32·((4096 + 6144) + (4096 + 4096) + (4096 + 28672) + (14336 + 4096)) = 32·69,632
//         = 2,228,224 per layer, 71,303,168 for the model (the 71.3 M Primus's log prints);
//   TP 2: A and B are both split over the two ranks (ParallelLinearAdapter), so each GPU holds
//         half: 1,114,112 per layer, 35,651,584 for its 32 layers. Layer by layer:
//         QKV (column) 32·4096/2 + 32·3072 = 163,840; O (row) 32·2048 + 32·4096/2 = 131,072;
//         fc1 (column) 32·4096/2 + 32·14336 = 524,288; fc2 (row) 32·7168 + 32·4096/2 = 294,912.
TEST(LoraAdapters, HandCountForLlama3_8B) {
  const Job tp1 = WithLora(TestJob("llama3_8B").Cluster("MI355X").Dp(8));
  EXPECT_EQ(LoraAdapterParams(tp1, 0), 2228224);
  EXPECT_EQ(LoraAdapterParamsPerRank(tp1, tp1.parallel), std::vector<int64_t>{71303168});
  const Job tp2 = WithLora(TestJob("llama3_8B").Cluster("MI355X").Parallel(2).Dp(4));
  EXPECT_EQ(LoraAdapterParams(tp2, 31), 1114112);
  // PP 2 splits the layers, 16 on each rank.
  const Job pp2 = WithLora(TestJob("llama3_8B").Cluster("MI355X").Parallel(2, 2).Dp(2));
  EXPECT_EQ(LoraAdapterParamsPerRank(pp2, pp2.parallel),
            (std::vector<int64_t>{16 * 1114112, 16 * 1114112}));
  Job off = tp1;
  off.training.lora.enabled = false;
  EXPECT_EQ(LoraAdapterParams(off, 0), 0);
}

// The frozen model keeps its bf16 weights only; the adapters carry 2 + 4 + 12/DP bytes
// (bf16 weight, fp32 main gradient, fp32 master weight and two moments sharded over DP 8).
TEST(LoraAdapters, FrozenWeightsHaveNoGradientsOrOptimizerState) {
  Job job = WithLora(TestJob("llama3_8B").Cluster("MI355X").Dp(8).DistributedOptimizer());
  const RankParams params = ParamsPerRank(job.model, job.parallel).front();
  const ModelStateMemory m = ModelStateBytes(job, params, 71303168);
  EXPECT_EQ(m.params_bytes, 2 * (params.Total() + 71303168));
  EXPECT_EQ(m.grads_bytes, 4 * 71303168);
  EXPECT_EQ(m.optimizer_bytes, 12 * 71303168 / 8);
  // The optimizer steps over the adapters' shard alone.
  EXPECT_EQ(OptimizerParamsPerGpu(job), 71303168 / 8);
}

// What the adapters store beyond full training, Llama 3 8B at TP 2 with sequence parallelism,
// 4096 tokens, dropout 0.1 before A. Dropout masks, 1 byte per adapter input element:
// QKV 4096·4096 + O 4096·2048 + fc1 4096·4096 + fc2 4096·7168 = 71,303,168. The adapters
// beside the column-parallel QKV and fc1 keep the whole gathered sequence where the frozen
// layer keeps its half: 2 x 4096·4096·2 bytes·(1 - 1/2) = 33,554,432. Total 104,857,600.
TEST(LoraAdapters, DropoutMasksAndGatheredInputsAreStored) {
  Job job = WithLora(
      TestJob("llama3_8B").Cluster("MI355X").Parallel(2).SequenceParallel().Dp(4).MicroBatch(1));
  job.training.lora.dropout = 0.1;
  EXPECT_EQ(LoraActivationBytes(job, 0), 104857600);
  job.training.lora.dropout_before = false;  // dropout on B's output: no mask on the inputs
  EXPECT_EQ(LoraActivationBytes(job, 0), 33554432);
  job.parallel.sequence_parallel = false;
  EXPECT_EQ(LoraActivationBytes(job, 0), 0);
}

// The memory model and the layer cost model enumerate the same adapted layers: GQA with TP,
// and multi-latent attention with routed and shared experts, every Megatron module name on.
TEST(LoraAdapters, AgreeWithTheLayerCostModel) {
  const std::vector<std::string> every = {
      "linear_qkv",         "linear_proj",      "linear_fc1",
      "linear_fc2",         "router",           "linear_q_proj",
      "linear_q_down_proj", "linear_q_up_proj", "linear_kv_down_proj",
      "linear_kv_up_proj"};
  for (const Job& job :
       {WithLora(TestJob("llama3_8B").Cluster("MI355X").Parallel(2).Dp(4), every),
        WithLora(TestJob("deepseek_v2_lite").Cluster("MI355X").Ep(8).Dp(8), every),
        WithLora(TestJob("deepseek_v3").Cluster("MI355X").Parallel(2).Ep(8).Dp(4), every)}) {
    const LayerCostModel model(job, EfficiencyTable::Default(job.cluster.gpu), nullptr);
    for (int64_t layer : {int64_t{0}, job.model.num_layers - 1}) {
      SCOPED_TRACE(job.model.name + " layer " + std::to_string(layer));
      EXPECT_GT(LoraAdapterParams(job, layer), 0);
      EXPECT_EQ(model.TransformerLayer(layer).lora_params, LoraAdapterParams(job, layer));
    }
  }
}

}  // namespace
}  // namespace sextant
