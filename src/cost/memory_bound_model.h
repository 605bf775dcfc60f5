// Memory-bound operators (norms, rotary embeddings, activation functions, residual adds,
// dropout, softmax / cross-entropy, MoE permute / unpermute, embedding lookup, router top-k):
// the HBM bytes each kernel moves, and the time at the achievable bandwidth.
#pragma once

#include <cstdint>

#include "cost/efficiency_table.h"
#include "hardware/gpu_spec.h"

namespace sextant {

// Bytes read plus written by one operator in the forward and in the backward pass.
// `b` is the activation element size in bytes; "elements" are tokens x width.
struct OpBytes {
  double forward = 0;
  double backward = 0;
};

// RMSNorm / LayerNorm: fwd reads x, writes y and the fp32 per-row statistic; bwd reads x and
// dy, writes dx (the weight-gradient partials are per row block and negligible).
OpBytes NormBytes(int64_t tokens, int64_t width, double b);
// Rotary position embedding applied to q and k: read and write both, in either pass.
OpBytes RotaryBytes(int64_t tokens, int64_t q_width, int64_t k_width, double b);
// SwiGLU: fwd reads gate and up, writes the product; bwd reads gate, up and dy, writes dgate
// and dup.
OpBytes SwiGluBytes(int64_t tokens, int64_t ffn_width, double b);
// GELU (and other one-input activations): fwd reads x, writes y; bwd reads x and dy, writes dx.
OpBytes GeluBytes(int64_t tokens, int64_t ffn_width, double b);
// Residual add: fwd reads two streams, writes one; bwd adds the two gradient streams where
// the residual forks.
OpBytes ResidualAddBytes(int64_t tokens, int64_t width, double b);
// Dropout with a 1-byte mask: fwd reads x, writes y and the mask; bwd reads dy and the mask,
// writes dx.
OpBytes DropoutBytes(int64_t tokens, int64_t width, double b);
// Vocabulary cross-entropy over `tokens` x `vocab_local` logits. Unfused (Megatron's
// vocab-parallel implementation) is charged three passes over the logits each way, as in
// Primus (research/primus-projection.md §3.3.7); fused reads the logits once forward and
// reads + writes them once backward (the gradient is written in place).
OpBytes CrossEntropyBytes(int64_t tokens, int64_t vocab_local, double b, bool fused);
// MoE token permutation before the dispatch all-to-all: read `tokens` rows, write tokens·topk
// copies; with several local experts the received rows are sorted by expert again (Megatron
// alltoall dispatcher's sort_chunks_by_idxs), another read + write of tokens·topk rows.
// Unpermute (combine) moves the same bytes in reverse; the backward pass mirrors the forward.
OpBytes PermuteBytes(int64_t tokens, int64_t topk, int64_t hidden, double b, bool sort_by_expert);
// The same two steps through PyTorch ops (MoePermutation::kIndexSelect, kGatherScatter),
// R = tokens·topk copies of `hidden` elements:
//   permute   fwd: index_select / gather (read `tokens` rows, write R); bwd: the gradient
//             accumulated into a zero-filled [tokens, hidden] (the zero fill here, the atomic
//             adds in AtomicAddTime);
//   unpermute fwd: a zero-filled output (the scatter_add_ itself in AtomicAddTime); bwd: the
//             gradient gathered back to the copies (read `tokens`, write R).
//   `probs`: the copies are multiplied by their router probabilities before the scatter
//             (torchtitan): read + write R forward; backward the copies' gradient (read +
//             write R) and the probabilities' (read R copies and R gradients). Megatron applies
//             them inside the experts' activation instead.
// With several local experts each also sorts the received rows by expert and back (read +
// write R each way), as PermuteBytes.
OpBytes UnfusedPermuteBytes(int64_t tokens, int64_t topk, int64_t hidden, double b,
                            bool sort_by_expert);
OpBytes UnfusedUnpermuteBytes(int64_t tokens, int64_t topk, int64_t hidden, double b,
                              bool sort_by_expert, bool probs);
// PyTorch's CUDA scatter_add_ and index_add_ accumulate with one atomic add per element.
enum class AtomicAdd { kScatterAdd, kIndexAdd };
// Their rate on `gpu`: measured on Hopper, scaled by HBM bandwidth elsewhere.
double AtomicAddsPerSecond(const GpuSpec& gpu, AtomicAdd op);
// Whether that rate was measured on `gpu`'s architecture rather than scaled.
bool AtomicAddRatesMeasured(const GpuSpec& gpu);
// Embedding lookup: fwd reads `tokens` rows and writes them; bwd reads dy and
// read-modify-writes the rows of the fp32 gradient buffer.
OpBytes EmbeddingBytes(int64_t tokens, int64_t hidden, double b);
// Router softmax + top-k on fp32 logits: three passes over tokens x experts each way
// (Primus's router term, research/primus-projection.md §3.3.5).
OpBytes RouterBytes(int64_t tokens, int64_t experts);

// Casting a GEMM input to a low-precision format (fp8 / mxfp8 / fp4) for FP8 training:
// Transformer Engine's fused cast-transpose reads the bf16 tensor once and writes the
// low-precision copy and its transpose (the weight-gradient GEMM consumes the transpose).
// Forward casts the input activation [tokens x in]; backward casts the output gradient
// [tokens x out]. `b` is the activation size, `low` the low-precision element size.
OpBytes LowPrecisionCastBytes(int64_t tokens, int64_t in, int64_t out, double b, double low);
// Adding one micro-batch's weight gradient to the main-gradient buffer when the weight-gradient
// GEMM cannot accumulate into it (Megatron with gradient_accumulation_fusion off: the backward
// hook runs param.main_grad.add_(param.grad), distributed_data_parallel.py): the separate
// gradient is read (`grad_bytes` per element, the GEMM's output type), and main_grad read and
// written (`main_grad_bytes`). bf16 gradients into fp32 main grads: 2 + 4 + 4 = 10 B/weight.
double UnfusedGradAccumulationBytes(int64_t weights, double grad_bytes, double main_grad_bytes);
// The amax reduction that current (dynamic) FP8 scaling runs before each cast: one more read of
// the bf16 tensor, forward the input [tokens x in], backward the output gradient [tokens x out].
OpBytes AmaxBytes(int64_t tokens, int64_t in, int64_t out, double b);

// PyTorch eager (no torch.compile): torchtitan's RMSNorm, rotary embedding, SwiGLU and GQA
// key/value expansion run op by op. Bytes are counted kernel by kernel from torchtitan's model
// code (models/llama3 model.py, norms.py: x.float() -> pow(2) -> mean -> rsqrt -> mul ->
// type_as -> mul(weight); rotary through view_as_complex in fp32; silu(w1 x) * w3 x;
// repeat_kv) and the kernels autograd runs for each op. `b` is the activation element size;
// intermediate fp32 tensors are 4 bytes.
//   RMSNorm fwd: cast (b+4) + pow (8) + mean (4) + mul (8) + cast (4+b) + weight (2b)
//           bwd: weight (4b) + cast (b+4) + mul (8+12) + mean (4) + pow (12) + sum (12) + cast
OpBytes EagerRmsNormBytes(int64_t tokens, int64_t width, double b);
//   Rotary fwd and bwd: cast to fp32 (b+4) + complex multiply (8) + cast back (4+b).
OpBytes EagerRotaryBytes(int64_t tokens, int64_t q_width, int64_t k_width, double b);
//   SwiGLU fwd: silu (2b) + mul (3b); bwd: two products for the mul (6b) + silu's (3b).
OpBytes EagerSwiGluBytes(int64_t tokens, int64_t ffn_width, double b);
// GQA repeat_kv: K and V expanded from kv_width to q_width columns and materialised (read
// kv, write q, for both); the backward sums the copies back.
OpBytes RepeatKvBytes(int64_t tokens, int64_t kv_width, int64_t q_width, double b);

class MemoryBoundModel {
 public:
  MemoryBoundModel(GpuSpec gpu, EfficiencyTable table);
  // bytes / (HBM bandwidth x achievable fraction for a kernel of that size).
  double Time(double bytes) const;
  // `elements` atomic adds of 2-byte values by `op`: limited by the L2's atomic throughput,
  // not by HBM bandwidth (rates in memory_bound_model.cc, measured on an H200).
  double AtomicAddTime(double elements, AtomicAdd op) const;
  const GpuSpec& gpu() const { return gpu_; }

 private:
  GpuSpec gpu_;
  EfficiencyTable table_;
};

}  // namespace sextant
