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
//   TP 2: 32·((4096 + 3072) + (2048 + 4096) + (4096 + 14336) + (7168 + 4096)) = 32·43,008
//         = 1,376,256 per layer on each GPU, 44,040,192 for its 32 layers.
TEST(LoraAdapters, HandCountForLlama3_8B) {
  const Job tp1 = WithLora(TestJob("llama3_8B").Cluster("MI355X").Dp(8));
  EXPECT_EQ(LoraAdapterParams(tp1, 0), 2228224);
  EXPECT_EQ(LoraAdapterParamsPerRank(tp1, tp1.parallel), std::vector<int64_t>{71303168});
  const Job tp2 = WithLora(TestJob("llama3_8B").Cluster("MI355X").Parallel(2).Dp(4));
  EXPECT_EQ(LoraAdapterParams(tp2, 31), 1376256);
  // PP 2 splits the layers, 16 on each rank.
  const Job pp2 = WithLora(TestJob("llama3_8B").Cluster("MI355X").Parallel(2, 2).Dp(2));
  EXPECT_EQ(LoraAdapterParamsPerRank(pp2, pp2.parallel),
            (std::vector<int64_t>{16 * 1376256, 16 * 1376256}));
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
