// Layer times measured in profiler traces of a short run (`--profiling-mode trace --trace F`):
// the GPU time of each per-layer annotation range named "<piece>(<F|B|W>)" — the ranges
// DualPipe and Megatron-style training loops record: attn(F), mlp(B), dispatch(F),
// combine(B), attn(W), ... — averaged over the layer instances the trace holds. These replace
// the cost model's layers of the same kind; the pipeline schedule, the other layers,
// communication at the target scale and the optimizer step stay modelled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projection/layer_timing.h"
#include "trace/event_store.h"

namespace sextant {

// A profiler trace file as read: one TraceData per rank or device it holds.
struct ProfiledFile {
  std::string path;
  std::vector<TraceData> traces;
};

std::vector<ProfiledFile> ReadProfiledFiles(const std::vector<std::string>& paths);

// Whether any trace has a range named like a layer piece, "attn(F)", "mlp(B)" — the traces
// MeasureLayerTimes reads; the others are measured per step (trace_step_phases.h).
bool HasLayerRanges(const std::vector<ProfiledFile>& files);

// One piece of a layer (attention, MLP, MoE dispatch, ...) per layer instance.
struct MeasuredPiece {
  std::string name;  // the annotation's name before "(F)"
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  int64_t instances = 0;       // ranges of its F phase (B and W are averaged over their own)
  bool communication = false;  // MoE token dispatch / combine: expert-parallel all-to-all
};

struct MeasuredLayerTimes {
  std::vector<std::string> files;
  std::string device_name;  // deviceProperties of the first trace that names one
  std::string device_file;  // ... and that trace's file
  std::string device_key = "deviceProperties";  // where in device_file the name is
  std::vector<MeasuredPiece> pieces;
  int64_t layers = 0;  // layer instances: the most instances any piece's F phase has
  bool moe = false;    // the layers route tokens (dispatch / combine pieces present)
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0;  // per layer, all pieces
  double ep_comm_s = 0;          // the dispatch / combine part of the above, F + B
  double ep_comm_forward_s = 0;  // ... of the forward alone
  // How much of the token exchange the run left exposed, per layer: when a range encloses all
  // the per-layer ranges (DualPipe's "1F1B" around an overlapped forward/backward chunk pair),
  // its GPU span per layer less the layer's compute; without one, all of it.
  double exposed_ep_comm_s = 0;
  std::string overlap_note;  // how exposed_ep_comm_s was found
};

// Reads every trace (they are ranks or steps of one run: instances add up). Throws UserError
// naming the file when a trace has no "<piece>(F)" ranges with GPU work.
MeasuredLayerTimes MeasureLayerTimes(const std::vector<ProfiledFile>& files);
MeasuredLayerTimes MeasureLayerTimes(const std::vector<std::string>& traces);  // reads them

// Refuses layer times that cannot be this job's: recorded on another GPU, or whose compute
// per layer is a fifth or five times what the model gives for the job's layers of that kind
// (a trace of another model, micro-batch or sequence length). `modelled` are the job's
// modelled timings. Times recorded on a part the library does not hold are used, with the
// warning returned.
std::vector<std::string> CheckMeasuredLayers(const MeasuredLayerTimes& measured, const Job& job,
                                             const ModelTimings& modelled);

// Puts the measured times in place of every layer of the measured kind ("moe" when the
// trace routes tokens, else "dense") and says in `timings->assumptions` what was measured and
// what stays modelled. Throws UserError when the job has no layer of that kind.
void ApplyMeasuredLayers(const MeasuredLayerTimes& measured, ModelTimings* timings);

}  // namespace sextant
