// Activation memory stored for the backward pass, per micro-batch, on one GPU.
//
// Baseline: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models" (arXiv 2205.05198) §4, which gives 34·s·b·h bytes per layer (+5·a·s²·b without
// flash attention) for a GPT layer with MHA, a 4h GeLU MLP and dropout. We derive the same
// terms tensor by tensor so they generalise to GQA, MLA, SwiGLU, MoE, post-norms, CP and FP8:
//
//   replicated over TP (÷TP only with sequence parallelism), bytes per token:
//     each norm input 2h; QKV input 2h; attention-output dropout mask h; MLP input 2h;
//     MLP-output dropout mask h
//   sharded over TP, bytes per token:
//     Q 2·nq·d, K and V 2·2·g·d, core-attention output 2·nq·d,
//     MLP: up-projection output 2·f·(2 if gated else 1), activation output 2·f
//   attention scores (unfused softmax only): (2 + 3 if attention dropout) bytes per score;
//   flash attention keeps only the fp32 log-sum-exp (4 bytes per query per head).
// With MHA, f = 4h, dropout, no gating these add up to 34·sbh (10 + 24/t without SP),
// reproducing the paper and Megatron's theoretical_memory_usage.py exactly.
#pragma once

#include <cstdint>
#include <string>

#include "job/job.h"

namespace sextant {

// One layer's stored activations, bytes per micro-batch, split for reporting.
struct LayerActivation {
  int64_t attention = 0;  // norms before attention, QKV, scores/LSE, output projection
  int64_t mlp = 0;        // norms before MLP, dense MLP or router + experts + shared experts
  int64_t lora = 0;       // LoRA adapters' dropout masks and gathered inputs (lora_adapters.h)
  int64_t Total() const { return attention + mlp + lora; }
};

// Stored activations of transformer layer `layer` when it is NOT fully recomputed.
LayerActivation LayerActivationBytes(const Job& job, int64_t layer);

// What a fully recomputed layer keeps: its input hidden state.
int64_t RecomputedLayerInputBytes(const Job& job);

// Embedding stage extras (token ids, embedding dropout mask), per micro-batch.
int64_t EmbeddingActivationBytes(const Job& job);

// Final norm, LM head input, logits and loss (fused or unfused cross-entropy), per micro-batch.
int64_t OutputActivationBytes(const Job& job);

// The fused loss is Transformer Engine's Triton cross-entropy, which writes the logits'
// gradient into the logits themselves: no loss transient on top of what is stored.
bool InPlaceCrossEntropy(const TrainingSettings& training);

// Tokens of one micro-batch held by one GPU (sequence split by CP).
int64_t TokensPerRank(const Job& job);

}  // namespace sextant
