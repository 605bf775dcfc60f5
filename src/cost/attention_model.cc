#include "cost/attention_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.h"
#include "util/units.h"

namespace sextant {

namespace {

// Query rows per workgroup: FlashAttention-2/3 forward and the CK / aiter kernels on MI300
// use 128-row query blocks for head dimensions up to 128.
constexpr int64_t kQueryBlock = 128;

void Validate(const AttentionShape& s) {
  if (s.batch <= 0 || s.q_heads <= 0 || s.kv_heads <= 0 || s.seq <= 0 || s.head_dim_qk <= 0 ||
      s.head_dim_v <= 0 || s.cp <= 0 || s.window < 0) {
    ThrowUserError(fmt::format(
        "attention shape needs positive batch, heads, sequence, head dims and CP (got batch {}, "
        "heads {}/{}, seq {}, dims {}/{}, cp {}, window {})",
        s.batch, s.q_heads, s.kv_heads, s.seq, s.head_dim_qk, s.head_dim_v, s.cp, s.window));
  }
}

}  // namespace

double AttentionPairs(int64_t seq, bool causal, int64_t window) {
  const double s = static_cast<double>(seq);
  if (!causal) {
    return window > 0 && window < seq ? s * static_cast<double>(window) : s * s;
  }
  if (window <= 0 || window >= seq) return s * (s + 1) / 2;
  // Query i sees min(i + 1, w) keys: a triangle for the first w queries, then w each.
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (s - w) * w;
}

AttentionModel::AttentionModel(GpuSpec gpu, EfficiencyTable table)
    : gpu_(std::move(gpu)), table_(std::move(table)) {}

AttentionEstimate AttentionModel::Evaluate(const AttentionShape& s, DType dtype,
                                           double flops_per_pair, double bytes,
                                           double fraction) const {
  if (gpu_.compute_units <= 0 || gpu_.hbm_bandwidth <= 0) {
    ThrowUserError(
        fmt::format("GPU {}: compute_units and hbm_bandwidth must be positive", gpu_.name));
  }
  AttentionEstimate e;
  // The load-balanced split gives every CP rank exactly 1/cp of the causal pairs (rank r's
  // chunks r and 2cp-1-r together see the same number of keys on every rank).
  e.pairs = AttentionPairs(s.seq, s.causal, s.window) / s.cp;
  e.flops = flops_per_pair * e.pairs * s.batch * s.q_heads;
  e.hbm_bytes = bytes;
  const int64_t local_seq = CeilDiv(s.seq, s.cp);
  const int64_t workgroups = s.batch * s.q_heads * CeilDiv(local_seq, kQueryBlock);
  const int64_t waves = CeilDiv(workgroups, gpu_.compute_units);
  const double quantisation =
      static_cast<double>(waves * gpu_.compute_units) / static_cast<double>(workgroups);
  const double peak = gpu_.PeakTflops(dtype) * 1e12;
  e.compute_seconds = e.flops / (peak * fraction) * quantisation;
  e.memory_seconds = bytes / (gpu_.hbm_bandwidth * table_.HbmFraction(bytes));
  e.seconds = std::max({e.compute_seconds, e.memory_seconds, table_.min_kernel_seconds()});
  return e;
}

AttentionEstimate AttentionModel::Forward(const AttentionShape& s, DType dtype) const {
  Validate(s);
  const double b = DTypeBytes(dtype);
  const double q_tokens = static_cast<double>(s.batch) * CeilDiv(s.seq, s.cp);
  const double kv_tokens = static_cast<double>(s.batch) * s.seq;
  // Read Q, K, V; write O and the fp32 log-sum-exp kept for the backward pass.
  const double bytes = q_tokens * s.q_heads * s.head_dim_qk * b +
                       kv_tokens * s.kv_heads * (s.head_dim_qk + s.head_dim_v) * b +
                       q_tokens * s.q_heads * s.head_dim_v * b + q_tokens * s.q_heads * 4.0;
  return Evaluate(s, dtype, 2.0 * (s.head_dim_qk + s.head_dim_v), bytes,
                  table_.attention_forward_fraction());
}

AttentionEstimate AttentionModel::Backward(const AttentionShape& s, DType dtype) const {
  Validate(s);
  const double b = DTypeBytes(dtype);
  const double q_tokens = static_cast<double>(s.batch) * CeilDiv(s.seq, s.cp);
  const double kv_tokens = static_cast<double>(s.batch) * s.seq;
  // Read Q, O, dO, LSE and D = rowsum(dO∘O); read K, V and write dK, dV; dQ is accumulated in
  // fp32 (FlashAttention-2 Algorithm 2) and written once.
  const double q_side =
      q_tokens * s.q_heads *
      (s.head_dim_qk * b + 2.0 * s.head_dim_v * b + 2 * 4.0 + s.head_dim_qk * 4.0);
  const double kv_side = kv_tokens * s.kv_heads * (s.head_dim_qk + s.head_dim_v) * b * 2.0;
  return Evaluate(s, dtype, 2.0 * (3.0 * s.head_dim_qk + 2.0 * s.head_dim_v), q_side + kv_side,
                  table_.attention_backward_fraction());
}

}  // namespace sextant
