// Per-micro-batch times of every piece of the model on one GPU of the job, taken from the
// analytical cost models (cost/) — the single place the performance projection asks "how long
// does this layer take".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/efficiency_table.h"
#include "job/job.h"

namespace sextant {

struct PieceTiming {
  std::string type;              // "dense", "moe", "embedding", "output", "mtp"
  double forward_s = 0;          // incl. the communication it waits for
  double backward_input_s = 0;   // B
  double backward_weight_s = 0;  // W
  double recompute_s = 0;        // forward work repeated before B under recomputation
  double tp_comm_s = 0;          // forward + backward exposed communication, for the breakdown
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  // The communication inside forward_s, backward_input_s and backward_weight_s.
  double forward_comm_s = 0, backward_input_comm_s = 0, backward_weight_comm_s = 0;
  double Backward() const { return backward_input_s + backward_weight_s; }
};

struct ModelTimings {
  std::vector<PieceTiming> layers;  // one per transformer layer
  PieceTiming embedding;
  PieceTiming output;           // final norm, LM head, loss
  PieceTiming mtp;              // one MTP module
  double optimizer_step_s = 0;  // whole step on one GPU
  // FLOPs the GPUs execute over what the same job computes when every weight trains and each
  // token goes through its top-k experts only: below 1 under LoRA (no weight gradients for
  // frozen weights, small adapters), above 1 for MaxText's dense_matmul (dispatch/combine
  // einsums, capacity slots), else 1.
  double executed_flops_ratio = 1.0;
  // FLOPs that recomputation re-runs over the FLOPs of one forward and backward of every layer
  // (per GPU and micro-batch): hardware FLOPs = model FLOPs x (1 + this) under selective
  // recompute. Not counted: torchtitan's per-op policy, whose re-run matmuls are timed only.
  double recompute_flops_ratio = 0.0;
  // Forward FLOPs of the recomputed transformer layers / those of all of them: the share of
  // Megatron's full-recompute extra forward that a partial recompute (recompute_num_layers,
  // recompute_layer_ids) runs.
  double recomputed_layer_forward_share = 0.0;
  std::vector<std::string> assumptions;
};

// Fraction of the isolated-kernel speed that kernels reach inside a full training step
// (launch gaps, power-capped clocks, allocator and framework overhead). The cost models in
// cost/ describe kernels run alone; published end-to-end runs are slower by this factor.
// Fitted once over every projectable throughput / iteration-time row of
// corpus/validation/published_runs.csv (`sextant validate --fit-efficiency`, docs/validate.md);
// one constant for all rows and GPUs, never per row.
inline constexpr double kInTrainingEfficiency = 0.81;

// Transformer Engine's cuDNN attention on Hopper (Megatron, NeMo, Primus, MaxText),
// as a fraction of FlashAttention-3's published 75% (forward) / 50% (backward) of peak. The
// cuDNN 9.0-9.2 of the 2024 NeMo containers predates FlashAttention-3-class kernels; fitted on
// the 13 NeMo rows of corpus/validation/published_runs.csv (the only H100 rows that run TE
// attention; `sextant validate --fit-efficiency`), never per row.
inline constexpr double kCudnnAttentionScale = 0.74;

// The fitted constants of the performance projection (docs/validate.md lists the rows each
// one was fitted on).
struct Calibration {
  // Scales the compute parts (GEMM, attention, memory-bound) of every piece; communication is
  // not scaled.
  double in_training_efficiency = kInTrainingEfficiency;
  double cudnn_attention_scale = kCudnnAttentionScale;
};

// Whether the job's attention runs through Transformer Engine / cuDNN fused attention on an
// NVIDIA Hopper GPU (the kernels kCudnnAttentionScale describes; Blackwell keeps its table).
bool UsesCudnnAttentionOnHopper(const Job& job);

// `gemm_table`, when given, replaces the GPU's default efficiency table (e.g. one calibrated
// from measured GEMMs); the attention adjustments for the framework still apply.
ModelTimings ComputeModelTimings(const Job& job, const Calibration& calibration = {},
                                 const EfficiencyTable* gemm_table = nullptr);

}  // namespace sextant
