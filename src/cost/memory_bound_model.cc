#include "cost/memory_bound_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

namespace {
double Elements(int64_t tokens, int64_t width) {
  return static_cast<double>(tokens) * static_cast<double>(width);
}
}  // namespace

OpBytes NormBytes(int64_t tokens, int64_t width, double b) {
  const double n = Elements(tokens, width);
  const double stats = static_cast<double>(tokens) * 4.0;
  return {2.0 * n * b + stats, 3.0 * n * b + stats};
}

OpBytes RotaryBytes(int64_t tokens, int64_t q_width, int64_t k_width, double b) {
  const double n = Elements(tokens, q_width + k_width);
  return {2.0 * n * b, 2.0 * n * b};
}

OpBytes SwiGluBytes(int64_t tokens, int64_t ffn_width, double b) {
  const double n = Elements(tokens, ffn_width);
  return {3.0 * n * b, 5.0 * n * b};
}

OpBytes GeluBytes(int64_t tokens, int64_t ffn_width, double b) {
  const double n = Elements(tokens, ffn_width);
  return {2.0 * n * b, 3.0 * n * b};
}

OpBytes ResidualAddBytes(int64_t tokens, int64_t width, double b) {
  const double n = Elements(tokens, width);
  return {3.0 * n * b, 3.0 * n * b};
}

OpBytes DropoutBytes(int64_t tokens, int64_t width, double b) {
  const double n = Elements(tokens, width);
  return {n * (2.0 * b + 1.0), n * (2.0 * b + 1.0)};
}

OpBytes CrossEntropyBytes(int64_t tokens, int64_t vocab_local, double b, bool fused) {
  const double n = Elements(tokens, vocab_local);
  if (fused) return {n * b, 2.0 * n * b};
  return {3.0 * n * b, 3.0 * n * b};
}

OpBytes PermuteBytes(int64_t tokens, int64_t topk, int64_t hidden, double b, bool sort_by_expert) {
  const double copies = static_cast<double>(tokens) * static_cast<double>(topk);
  double bytes = (static_cast<double>(tokens) + copies) * hidden * b;
  if (sort_by_expert) bytes += 2.0 * copies * hidden * b;
  return {bytes, bytes};
}

OpBytes UnfusedPermuteBytes(int64_t tokens, int64_t topk, int64_t hidden, double b,
                            bool sort_by_expert) {
  const double copies = static_cast<double>(tokens) * static_cast<double>(topk) * hidden * b;
  const double rows = static_cast<double>(tokens) * hidden * b;
  const double sort = sort_by_expert ? 2.0 * copies : 0.0;
  return {rows + copies + sort, rows + sort};
}

OpBytes UnfusedUnpermuteBytes(int64_t tokens, int64_t topk, int64_t hidden, double b,
                              bool sort_by_expert, bool probs) {
  const double copies = static_cast<double>(tokens) * static_cast<double>(topk) * hidden * b;
  const double rows = static_cast<double>(tokens) * hidden * b;
  const double sort = sort_by_expert ? 2.0 * copies : 0.0;
  const double multiply_forward = probs ? 2.0 * copies : 0.0;
  const double multiply_backward = probs ? 4.0 * copies : 0.0;
  return {rows + multiply_forward + sort, rows + copies + multiply_backward + sort};
}

OpBytes EmbeddingBytes(int64_t tokens, int64_t hidden, double b) {
  const double n = Elements(tokens, hidden);
  return {2.0 * n * b, n * (b + 8.0)};
}

OpBytes RouterBytes(int64_t tokens, int64_t experts) {
  const double n = Elements(tokens, experts);
  return {3.0 * n * 4.0, 3.0 * n * 4.0};
}

double UnfusedGradAccumulationBytes(int64_t weights, double grad_bytes, double main_grad_bytes) {
  return static_cast<double>(weights) * (grad_bytes + 2.0 * main_grad_bytes);
}

OpBytes LowPrecisionCastBytes(int64_t tokens, int64_t in, int64_t out, double b, double low) {
  return {Elements(tokens, in) * (b + 2.0 * low), Elements(tokens, out) * (b + 2.0 * low)};
}

OpBytes EagerRmsNormBytes(int64_t tokens, int64_t width, double b) {
  const double n = Elements(tokens, width);
  const double forward = (b + 4) + 8 + 4 + 8 + (4 + b) + 2 * b;
  const double backward = 4 * b + (b + 4) + 20 + 4 + 12 + 12 + (4 + b);
  return {forward * n, backward * n};
}

OpBytes EagerRotaryBytes(int64_t tokens, int64_t q_width, int64_t k_width, double b) {
  const double n = Elements(tokens, q_width + k_width);
  const double pass = (b + 4) + 8 + (4 + b);
  return {pass * n, pass * n};
}

OpBytes EagerSwiGluBytes(int64_t tokens, int64_t ffn_width, double b) {
  const double n = Elements(tokens, ffn_width);
  return {5 * b * n, 9 * b * n};
}

OpBytes RepeatKvBytes(int64_t tokens, int64_t kv_width, int64_t q_width, double b) {
  const double bytes = 2.0 * (Elements(tokens, kv_width) + Elements(tokens, q_width)) * b;
  return {bytes, bytes};
}

OpBytes AmaxBytes(int64_t tokens, int64_t in, int64_t out, double b) {
  return {Elements(tokens, in) * b, Elements(tokens, out) * b};
}

MemoryBoundModel::MemoryBoundModel(GpuSpec gpu, EfficiencyTable table)
    : gpu_(std::move(gpu)), table_(std::move(table)) {
  if (gpu_.hbm_bandwidth <= 0) {
    ThrowUserError(fmt::format("GPU {}: hbm_bandwidth must be positive", gpu_.name));
  }
}

namespace {
// PyTorch's CUDA scatter_add_ and index_add_ issue one atomic add per element, so they run at
// the L2's atomic throughput. Measured on an H200 (tests/data/h200/permute.csv from
// bench/gpu/moe_permute_sweep.py: T·k rows of H bf16 values into T rows, k = 1-8,
// H = 2048-7168, T = 4096-32768): scatter_add_ 258-272 G adds/s, index_add_ 120-131 G adds/s,
// flat across shapes and collision counts. Every Hopper part (H100, H200, H800) has the same
// die and L2; other GPUs are assumed to scale with their memory system, by HBM bandwidth from
// the H200's 4.8 TB/s, until measured.
constexpr double kScatterAddsPerSecond = 268e9;
constexpr double kIndexAddsPerSecond = 122.5e9;
constexpr double kMeasuredHbmBandwidth = 4.8e12;
}  // namespace

bool AtomicAddRatesMeasured(const GpuSpec& gpu) {
  return gpu.vendor == Vendor::kNVIDIA && gpu.arch == "sm_90";
}

double AtomicAddsPerSecond(const GpuSpec& gpu, AtomicAdd op) {
  const double measured =
      op == AtomicAdd::kScatterAdd ? kScatterAddsPerSecond : kIndexAddsPerSecond;
  return AtomicAddRatesMeasured(gpu) ? measured
                                     : measured * gpu.hbm_bandwidth / kMeasuredHbmBandwidth;
}

double MemoryBoundModel::AtomicAddTime(double elements, AtomicAdd op) const {
  if (elements <= 0) return 0;
  return std::max(elements / AtomicAddsPerSecond(gpu_, op), table_.min_kernel_seconds());
}

double MemoryBoundModel::Time(double bytes) const {
  if (bytes <= 0) return 0;
  return std::max(bytes / (gpu_.hbm_bandwidth * table_.HbmFraction(bytes)),
                  table_.min_kernel_seconds());
}

}  // namespace sextant
