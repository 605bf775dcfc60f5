// Training steps measured in profiler traces that carry no per-layer ranges (a
// torch.compile'd model whose layers inductor fused, a plain training loop): per iteration,
// the GPU computation launched by the forward, by autograd's backward and by the optimizer
// step, the communication and how much of it no computation hid, and the GPU's idle time.
//
// `--profiling-mode trace` anchors the projection on them (StepAnchor): at the traced layout
// every modelled component is scaled to what was measured, and the model carries each one to
// the projected scale — compute per micro-batch as measured, the optimizer step as the model
// says it shrinks with sharding, exposed data-parallel communication as the model says it
// grows with the group, the idle time per iteration as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job/job.h"
#include "projection/iteration_communication.h"
#include "projection/layer_timing.h"
#include "projection/trace_layer_times.h"

namespace sextant {

struct MeasuredStep {
  std::vector<std::string> files;
  int64_t ranks = 0;        // traces read (one per rank)
  int64_t world_size = 0;   // of the traced run: distributedInfo, else the rank count
  std::string device_name;  // deviceProperties name of the first trace, "" when absent
  int64_t iterations = 0;   // ProfilerStep ranges of one rank (the first trace)
  // Backward passes per iteration: runs of backward launches after forward ones.
  int64_t micro_batches = 0;
  // Per iteration, mean over the ranks (GPU figures: the traced window over its steps).
  double step_s = 0;                                      // ProfilerStep duration
  double forward_s = 0, backward_s = 0, optimizer_s = 0;  // GPU computation by phase
  double communication_s = 0;                             // collective kernels, all of them
  double exposed_communication_s = 0;                     // ... that no computation overlapped
  double other_s = 0;  // idle and exposed copies: host-bound launches, waits for peers
};

// Reads every rank's trace of one run. A GPU activity belongs to the optimizer when its launch
// is inside an "Optimizer.step#" / "Optimizer.zero_grad#" range, to the backward when it is
// inside autograd's "autograd::engine::evaluate_function: ..." ops, else to the forward (loss
// included). Throws UserError naming the file when a trace has no GPU computation or no
// backward.
MeasuredStep MeasureStepPhases(const std::vector<ProfiledFile>& files);

// The job as it ran in the traces: the same model, micro-batch and TP/PP/CP/EP on the traced
// world size, with the measured micro-batches per iteration. Throws UserError when the world
// size does not fit the job's model-parallel layout, the job is pipelined (a rank's forward
// is then one stage's, which the per-step phases cannot split), the traces ran another GPU,
// or the job on the traced GPUs would run another number of micro-batches than they did.
Job TracedJob(const MeasuredStep& measured, const Job& job);

struct StepAnchor {
  double forward_scale = 1;    // measured / modelled computation, per micro-batch
  double backward_scale = 1;   // ... of the backward (recomputation included)
  double optimizer_scale = 1;  // measured / modelled optimizer step
  // Exposed data-parallel communication per second of modelled data-parallel communication
  // (before overlap) at the traced layout; applies where `dp_anchored`.
  double dp_exposed_per_modelled = 0;
  bool dp_anchored = false;
  // Without data parallelism in the traces, measured / modelled communication of the layers
  // (TP, CP, EP), applied to theirs.
  double layer_comm_scale = 1;
  // Measured idle per iteration, and exposed communication neither the layers nor data
  // parallelism account for: kept at every scale.
  double other_s = 0;
  std::vector<std::string> assumptions;
  // A phase scaled by under half or over twice: within what is accepted, yet more than
  // in-training speed explains (a trace of another model size or layout, most likely).
  std::vector<std::string> warnings;
};

// `modelled` and `dp` are the model's view of `traced` (TracedJob).
StepAnchor AnchorOnStep(const MeasuredStep& measured, const Job& traced,
                        const ModelTimings& modelled, const DataParallelCost& dp);

// Scales the computation of every piece and the optimizer step, and the pieces' communication
// by layer_comm_scale, and adds the anchor's assumptions.
void ApplyStepAnchor(const StepAnchor& anchor, ModelTimings* timings);

}  // namespace sextant
