// Fused (flash) attention on one GPU: FLOPs from the number of query-key pairs actually
// scored (causal masks, sliding windows, context-parallel load balancing), workgroup wave
// quantisation over the CUs/SMs, and a roofline against the Q/K/V/O traffic.
#pragma once

#include <cstdint>

#include "cost/efficiency_table.h"
#include "hardware/gpu_spec.h"
#include "util/dtype.h"

namespace sextant {

// One attention call. `seq` is the full sequence; with context parallelism each of the `cp`
// ranks holds seq/cp queries (Megatron's load-balanced split: 2·cp chunks, rank r takes chunks
// r and 2cp-1-r) and attends to keys from the whole sequence through the ring exchange.
struct AttentionShape {
  int64_t batch = 1;
  int64_t q_heads = 0;   // query heads on this GPU
  int64_t kv_heads = 0;  // key/value heads on this GPU (GQA/MQA: fewer than q_heads)
  int64_t seq = 0;
  int64_t head_dim_qk = 0;  // MLA: qk_head_dim + qk_pos_emb_head_dim
  int64_t head_dim_v = 0;   // MLA: v_head_dim
  bool causal = true;
  int64_t window = 0;  // sliding window in tokens (each query sees the last `window` keys); 0 = off
  int cp = 1;
};

struct AttentionEstimate {
  double seconds = 0;
  double flops = 0;
  double hbm_bytes = 0;
  double compute_seconds = 0;
  double memory_seconds = 0;
  double pairs = 0;  // query-key pairs scored per (batch, head) on this GPU
};

// Query-key pairs scored for one (batch, head) over the whole sequence.
double AttentionPairs(int64_t seq, bool causal, int64_t window);

class AttentionModel {
 public:
  AttentionModel(GpuSpec gpu, EfficiencyTable table);

  // Forward: S = QKᵀ and O = PV, 2·pairs·(d_qk + d_v) FLOPs per head.
  AttentionEstimate Forward(const AttentionShape& shape, DType dtype) const;
  // Backward: recompute S, then dV, dP, dQ, dK: 2·pairs·(3·d_qk + 2·d_v) FLOPs per head,
  // 2.5x the forward when d_qk = d_v (FlashAttention-2, Dao 2023, §3.1.2 / Algorithm 2).
  AttentionEstimate Backward(const AttentionShape& shape, DType dtype) const;

 private:
  AttentionEstimate Evaluate(const AttentionShape& shape, DType dtype, double flops_per_pair,
                             double bytes, double fraction) const;
  GpuSpec gpu_;
  EfficiencyTable table_;
};

}  // namespace sextant
