// Floating-point operations of one training iteration (forward + backward, no optimizer),
// counted the way published throughput and MFU figures count them. All results are FLOPs per
// iteration of `global_batch` sequences of `seq_length` tokens (2 FLOPs per multiply-add).
#pragma once

#include <cstdint>

#include "model/model_spec.h"

namespace sextant {

struct FlopInputs {
  int64_t seq_length = 0;
  int64_t global_batch = 0;  // sequences per iteration
  int64_t vocab_size = 0;    // the vocabulary the logit GEMM uses (Megatron: padded); 0 = unpadded
};

// Megatron-LM training.py num_floating_point_operations (transformer_flops), generalised to
// GQA, SwiGLU, MoE (routed top-k + shared experts, dense/MoE layer pattern), MLA and MTP.
// Causal attention: the score and value GEMMs count half of the s×s matrix. These are model
// FLOPs: recomputation is not counted.
double MegatronModelFlops(const ModelSpec& model, const FlopInputs& in);

// Hardware FLOPs with full activation recomputation: every transformer layer (and MTP block)
// runs its forward pass once more before its backward pass (4 passes instead of 3); the
// logit layer is not recomputed.
double MegatronFullRecomputeFlops(const ModelSpec& model, const FlopInputs& in);

// Korthikanti et al. 2022 (arXiv 2205.05198) §6 / Narayanan et al. 2021 (arXiv 2104.04473)
// model FLOPs, 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)), which assumes MHA, a 4h two-matrix MLP
// and non-causal attention counting.
double NarayananModelFlops(const ModelSpec& model, const FlopInputs& in);

// Narayanan et al. 2021 eq. (3), with full recomputation: 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)).
double NarayananFullRecomputeFlops(const ModelSpec& model, const FlopInputs& in);

// NeMo's "Model TFLOP/s" (nemo/utils/flops_formulas.py, llama2/llama3 family):
// B·s·L·h²·(12 + 12·g/a + 18·f/h + 12·s/h + 6·V/(L·h)) with g KV heads of a query heads and a
// gated MLP of width f. Attention is counted non-causal (4·s²·h forward per layer) — NeMo's
// published LLAMA2-7B row (16634 tokens/s/GPU, 767 TFLOP/s, NeMo 24.07) is reproduced only that
// way. A two-matrix MLP counts 12·f/h; MoE layers count top-k experts plus shared experts.
double NemoModelFlops(const ModelSpec& model, const FlopInputs& in);

// Megatron model FLOPs per token at the model's default sequence length.
double MegatronFlopsPerToken(const ModelSpec& model);

}  // namespace sextant
