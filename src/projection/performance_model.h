// Iteration time, throughput, TFLOP/s and MFU of a training job (SPEC §3.5):
//   iteration = simulated pipeline step (with P2P transfers)
//             + exposed data-parallel communication + optimizer step
//             (+ the idle time a step trace measured, under --profiling-mode trace).
// Layer times come from the analytical cost models; the pipeline from the event simulator.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "job/job.h"
#include "pipeline/pipeline_simulator.h"
#include "pipeline/schedule.h"
#include "projection/layer_timing.h"
#include "projection/trace_layer_times.h"
#include "projection/trace_step_phases.h"

namespace sextant {

struct IterationBreakdown {
  double compute_ms = 0;          // busy time of the slowest rank, communication removed
  double pipeline_bubble_ms = 0;  // step - busy on the slowest rank
  double tp_comm_ms = 0;
  double cp_comm_ms = 0;
  double ep_comm_ms = 0;
  double pp_comm_ms = 0;  // P2P time on the critical rank
  double dp_comm_exposed_ms = 0;
  double optimizer_ms = 0;
  double measured_idle_ms = 0;  // GPU idle per iteration measured in step traces, kept as is
};

struct ScalingPoint {
  int nodes = 0;
  int dp = 0;
  int64_t micro_batches = 0;
  double iteration_time_ms = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  std::string note;  // e.g. micro-batch starvation
};

struct ScheduleResult {
  std::string schedule;
  bool ran = false;
  std::string skipped_because;
  double iteration_time_ms = 0;
  double bubble_ratio = 0;
  double tokens_per_s_per_gpu = 0;
  int64_t peak_activation_bytes = 0;
};

struct PerformanceReport {
  std::string model, gpu;
  int nodes = 0, gpus = 0;
  ParallelPlan parallel;
  int64_t micro_batches = 0;
  int64_t micro_batch_size = 0, global_batch_size = 0, seq_length = 0;
  // The configured global batch when it was rounded to whole micro-batches at this scale.
  int64_t configured_global_batch_size = 0;
  std::string gemm_precision;                        // PrecisionRecipe::GemmDescription
  ScheduleKind schedule_kind = ScheduleKind::k1F1B;  // the schedule simulated
  std::string schedule;                              // its name
  double iteration_time_ms = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  // Model FLOP/s over the dense peak of the transformer GEMMs' precision (FP8, MX, FP4) when
  // it is below 16 bits, which the 16-bit MFU can exceed 100% against; 0 otherwise.
  double mfu_at_gemm_precision = 0;
  std::string gemm_peak_dtype;  // that precision's name ("fp8", "mxfp4"); "" when none
  double bubble_ratio = 0;
  double dp_comm_total_ms = 0;  // before overlap
  IterationBreakdown breakdown;
  std::vector<PieceTiming> layer_types;  // one per distinct layer type
  std::vector<ScalingPoint> scaling;
  bool global_batch_grows_with_dp = false;     // the scaling rows keep the batch per DP rank
  std::vector<ScheduleResult> schedules;       // filled for schedule "all"
  PipelineSimulation simulation;               // of the chosen schedule
  Schedule schedule_ops;                       // its op lists, for exports
  std::vector<std::vector<double>> in_flight;  // per rank, per chunk: for the memory model
  std::vector<std::string> assumptions;
  // Measured inputs that may not hold for this job (a calibration that fits its kernels worse
  // than the default, traces of another GPU or run size): stderr and JSON "warnings".
  std::vector<std::string> warnings;
};

struct PerformanceOptions {
  // Also simulate every other schedule (`--pipeline-schedule-algorithm all`); the report's
  // numbers stay those of the job's schedule (1F1B, or interleaved when VPP > 1).
  bool compare_all_schedules = false;
  std::vector<int> scaling_nodes;  // empty: 1, 2, 4, ... up to 4x the job's nodes
  Calibration calibration;         // fitted constants, see layer_timing.h
  // Efficiency table calibrated from measured GEMMs (--gemm-timings); null = the GPU's default.
  std::shared_ptr<const EfficiencyTable> gemm_table;
  // Layer times measured in traces (--profiling-mode trace); null = all modelled.
  std::shared_ptr<const MeasuredLayerTimes> measured_layers;
  // Whole steps measured in traces without per-layer ranges (--profiling-mode trace); the
  // projection is anchored on them (trace_step_phases.h).
  std::shared_ptr<const MeasuredStep> measured_step;
};

PerformanceReport ProjectPerformance(const Job& job, const PerformanceOptions& options = {});

// Copy of `job` on `nodes` nodes: DP grows, GBS stays, rounded down to whole micro-batches
// (at least one per rank) when it does not split, with the change in the copy's warnings.
// Throws UserError when the layout does not fit the node count.
Job RescaleToNodes(const Job& job, int nodes);

}  // namespace sextant
