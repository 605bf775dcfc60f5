// Roofline / efficiency of GEMM, attention, elementwise and normalisation ops, from the
// shapes recorded on cpu_op events (record_shapes=True). For each op signature
// (name, input dims, input types): FLOPs and bytes per call from an analytic model, the
// measured GPU time of its kernels (subtree), achieved TFLOP/s and TB/s, arithmetic
// intensity, the roofline bound (compute if FLOPs/peak >= bytes/bandwidth) and the fraction
// of the roofline reached.
//
// Models (per call; bpe = bytes per element of the first input's dtype):
//   mm       A[M,K]·B[K,N]: FLOPs 2MNK; bytes (MK + KN + MN)·bpe                     [1]
//   addmm    C + A·B: FLOPs 2MNK + MN; bytes (MK + KN + MN + N)·bpe                  [1]
//   bmm      batch b of mm; baddbmm adds b·M·N FLOPs                                 [1]
//   linear   x[..., K]·W[N, K]ᵀ (+ bias): as mm/addmm with M = numel(x)/K              [1]
//   matmul   A[..., M, K]·B[..., K, N]: as bmm with b = batch of the larger operand  [1]
//   attention forward: 2·B·Hq·Nq·Nkv·(d_qk + d_v), halved when causal;
//            bytes (Q + K + V + O)·bpe; backward: 2.5 × forward FLOPs,
//            bytes (2Q + 2K + 2V + dO)·bpe                                            [1][2]
//   elementwise binary (add, mul, sub, div): FLOPs = numel(out); bytes (n1 + n2 + out)·bpe;
//            unary (relu, gelu, silu, ...): FLOPs n; bytes 2n·bpe                      [1]
//   layer/batch/group norm: FLOPs 8 per element (mean 1, variance 3, normalise 2, affine 2);
//            bytes 2n·bpe + 2C·bpe (scale and shift)                     [ours, see docs]
//   rms norm: FLOPs (n/C)(2C + 2) + 2n; bytes 2n·bpe + C·bpe                          [1]
// [1] TraceLens PerfModel/perf_model.py (AMD-AGI/TraceLens), summarised in
//     research/trace-anchors.md §b.1.
// [2] torch/utils/flop_counter.py: SDPA backward = five matmuls = 2.5 × forward for d_qk = d_v.
// Causal attention: TraceLens halves, flop_counter does not; we halve and say so in `notes`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "trace/event_store.h"
#include "trace/op_breakdown.h"

namespace sextant {

// The problem a GEMM call solves: `batch` independent C[m,n] = A[m,k]·B[k,n].
struct GemmDims {
  double batch = 0, m = 0, n = 0, k = 0;
};

// One attention call's geometry (per the op's own layout: [B, H, N, D] or [B, N, H, D]).
struct AttentionDims {
  double batch = 0, q_heads = 0, kv_heads = 0, seq_q = 0, seq_kv = 0, head_dim_qk = 0,
         head_dim_v = 0;
  bool causal = false;
  bool backward = false;
};

struct OpCost {
  std::string family;  // "GEMM", "attention", "elementwise", "norm"
  double flops = 0;
  double bytes = 0;
  bool matrix = false;  // runs on matrix units (GEMM, attention)
  int bytes_per_element = 0;
  std::string note;         // e.g. "causal: FLOPs halved"
  GemmDims gemm;            // GEMM family only
  AttentionDims attention;  // attention family only
};

// The cost model of one op call, or nullopt if the op is not modelled or its shapes are
// missing or unusable.
std::optional<OpCost> ModelOpCost(std::string_view name, std::string_view input_dims,
                                  std::string_view input_types, std::string_view concrete_inputs);

struct RooflineRow {
  std::string name;
  std::string input_dims;
  std::string input_types;
  std::string family;
  std::string note;
  GemmDims gemm;            // GEMM family only: what calibration compares with the cost model
  AttentionDims attention;  // attention family only
  int bytes_per_element = 0;
  bool matrix = false;          // runs on the matrix (tensor) units
  bool tensor_float32 = false;  // FP32 operands, and every call's kernels ran in TF32 (by name)
  int64_t count = 0;
  int64_t tensor_float32_calls = 0;
  double flops_per_call = 0;
  double bytes_per_call = 0;
  int64_t kernel_ns = 0;  // summed over calls
  double achieved_tflops = 0;
  double achieved_tbps = 0;
  double intensity = 0;  // FLOPs per byte
  // Filled when the GPU's peaks are known:
  double peak_tflops = 0;
  double roofline_ns = 0;        // time the roofline allows for all calls
  double roofline_fraction = 0;  // roofline_ns / kernel_ns
  std::string bound;             // "compute" or "memory" ("" if no peak)
};

// Outermost modelled op of each call chain (aten::linear, not the addmm inside it), grouped by
// signature, largest kernel time first. Bounds come from `gpu`'s peaks (none if null).
std::vector<RooflineRow> ComputeRoofline(const TraceData& trace, const OpKernelTimes& times,
                                         const GpuSpec* gpu);

// A copy between host and device memory ("Memcpy HtoD (Pageable -> Device)",
// "CopyDeviceToHost"): timed by the host link, so never rated against HBM.
bool IsHostDeviceCopyName(std::string_view name);

// The dense peak an op of this kind runs against: vector FP32 for non-matrix ops, else the
// matrix rate of its element width (1 byte: FP8 where the GPU has it; 2: BF16, or FP16 on
// GPUs without BF16; 4: FP32, or TF32 where `tensor_float32` and the GPU has it). 0 if the
// GPU has no such unit.
double RooflinePeakTflops(const GpuSpec& gpu, bool matrix, int bytes_per_element,
                          bool tensor_float32 = false);

}  // namespace sextant
