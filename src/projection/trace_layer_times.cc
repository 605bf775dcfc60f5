#include "projection/trace_layer_times.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware/hardware_library.h"
#include "trace/annotation_summary.h"
#include "trace/gpu_timeline.h"
#include "trace/trace_runner.h"
#include "util/error.h"

namespace sextant {
namespace {

// "attn(F)" -> {"attn", 'F'}; anything else -> nullopt.
std::optional<std::pair<std::string, char>> PieceAndPhase(std::string_view name) {
  if (name.size() < 4 || name.back() != ')' || name[name.size() - 3] != '(') return std::nullopt;
  const char phase = name[name.size() - 2];
  if (phase != 'F' && phase != 'B' && phase != 'W') return std::nullopt;
  std::string piece(name.substr(0, name.size() - 3));
  if (piece.empty() || piece.size() > 64) return std::nullopt;
  return std::make_pair(piece, phase);
}

// DeepEP's and Megatron's names for the expert-parallel token exchange.
bool IsTokenExchange(const std::string& piece) {
  for (const char* name : {"dispatch", "combine", "a2a", "alltoall", "all_to_all"}) {
    if (piece.find(name) != std::string::npos) return true;
  }
  return false;
}

std::string Ms(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

}  // namespace

std::vector<ProfiledFile> ReadProfiledFiles(const std::vector<std::string>& paths) {
  std::vector<ProfiledFile> files;
  for (const std::string& path : paths) files.push_back({path, ReadTraceFile(path)});
  return files;
}

bool HasLayerRanges(const std::vector<ProfiledFile>& files) {
  for (const ProfiledFile& f : files) {
    for (const TraceData& trace : f.traces) {
      for (const CpuEvent& ev : trace.cpu) {
        if (ev.kind == CpuKind::kAnnotation && PieceAndPhase(trace.Name(ev.name))) {
          return true;
        }
      }
    }
  }
  return false;
}

MeasuredLayerTimes MeasureLayerTimes(const std::vector<std::string>& traces) {
  return MeasureLayerTimes(ReadProfiledFiles(traces));
}

MeasuredLayerTimes MeasureLayerTimes(const std::vector<ProfiledFile>& files) {
  if (files.empty()) ThrowUserError("--profiling-mode trace needs --trace FILE...");
  struct Sum {
    int64_t ns = 0, instances = 0;
  };
  std::map<std::string, std::map<char, Sum>> sums;
  MeasuredLayerTimes m;
  // The widest range around every per-layer range of a trace: its GPU span is the wall time
  // the layers took together, overlap included.
  int64_t enclosing_span_ns = 0;
  std::string enclosing_name;
  bool every_trace_enclosed = true;
  for (const ProfiledFile& profiled : files) {
    const std::string& file = profiled.path;
    bool found = false;
    for (const TraceData& trace : profiled.traces) {
      if (m.device_name.empty() && !trace.device_name.empty()) {
        m.device_name = trace.device_name;
        m.device_file = file;
      }
      const std::vector<AnnotationStats> stats = SummarizeAnnotations(trace, TimelineEvents(trace));
      int64_t piece_kernels = 0;
      for (const AnnotationStats& a : stats) {
        const auto piece = PieceAndPhase(a.name);
        if (!piece || a.kernel_ns <= 0) continue;
        Sum& s = sums[piece->first][piece->second];
        s.ns += a.kernel_ns;
        s.instances += a.count;
        piece_kernels += a.kernels;
        found = true;
      }
      const AnnotationStats* enclosing = nullptr;
      for (const AnnotationStats& a : stats) {
        if (PieceAndPhase(a.name) || a.kernels < piece_kernels) continue;
        if (enclosing == nullptr || a.gpu_span_ns < enclosing->gpu_span_ns) enclosing = &a;
      }
      if (enclosing != nullptr && piece_kernels > 0) {
        enclosing_span_ns += enclosing->gpu_span_ns;
        enclosing_name = enclosing->name;
      } else if (piece_kernels > 0) {
        every_trace_enclosed = false;
      }
    }
    if (!found) {
      ThrowUserError(SourceLocation{file}, "user_annotation",
                     "has no per-layer ranges named like attn(F), mlp(B), attn(W) with GPU work "
                     "under them: --profiling-mode trace takes layer times from such ranges "
                     "(record_function around each layer's pieces)");
    }
    m.files.push_back(file);
  }
  for (const auto& entry : sums) {
    const std::map<char, Sum>& phases = entry.second;  // captured below: not a binding
    MeasuredPiece p;
    p.name = entry.first;
    p.communication = IsTokenExchange(p.name);
    auto per_instance = [&](char phase) {
      const auto it = phases.find(phase);
      if (it == phases.end() || it->second.instances == 0) return 0.0;
      return static_cast<double>(it->second.ns) * 1e-9 / static_cast<double>(it->second.instances);
    };
    p.forward_s = per_instance('F');
    p.backward_input_s = per_instance('B');
    p.backward_weight_s = per_instance('W');
    if (const auto it = phases.find('F'); it != phases.end()) p.instances = it->second.instances;
    m.layers = std::max(m.layers, p.instances);
    m.moe = m.moe || p.communication;
    m.forward_s += p.forward_s;
    m.backward_input_s += p.backward_input_s;
    m.backward_weight_s += p.backward_weight_s;
    if (p.communication) {
      m.ep_comm_s += p.forward_s + p.backward_input_s;
      m.ep_comm_forward_s += p.forward_s;
    }
    m.pieces.push_back(std::move(p));
  }
  const double compute_s = m.forward_s + m.backward_input_s + m.backward_weight_s - m.ep_comm_s;
  m.exposed_ep_comm_s = m.ep_comm_s;
  if (m.ep_comm_s > 0 && every_trace_enclosed && enclosing_span_ns > 0 && m.layers > 0) {
    const double wall_s = static_cast<double>(enclosing_span_ns) * 1e-9 / m.layers;
    m.exposed_ep_comm_s = std::clamp(wall_s - compute_s, 0.0, m.ep_comm_s);
    m.overlap_note = fmt::format(
        "the \"{}\" range around the layers spans {} per layer on the GPU against {} of "
        "compute: {} of the {} token exchange per layer is exposed",
        enclosing_name, Ms(wall_s), Ms(compute_s), Ms(m.exposed_ep_comm_s), Ms(m.ep_comm_s));
  } else if (m.ep_comm_s > 0) {
    m.overlap_note = fmt::format(
        "no range encloses the layers to show how much of the token exchange overlapped: all "
        "{} per layer counted as exposed",
        Ms(m.ep_comm_s));
  }
  if (m.layers == 0) {
    ThrowUserError(SourceLocation{files.front().path}, "user_annotation",
                   "has B or W ranges but no forward (F) ranges: a layer's forward is needed");
  }
  return m;
}

std::vector<std::string> CheckMeasuredLayers(const MeasuredLayerTimes& measured, const Job& job,
                                             const ModelTimings& modelled) {
  std::vector<std::string> warnings;
  if (const std::string differs = DeviceMismatch(measured.device_name, job.cluster.gpu);
      !differs.empty()) {
    // Another GPU: project that one. A part the library does not hold of the job's own chip
    // (H100 NVL for an H100 job) has no entry to project; its times are used, and the user
    // told.
    if (!DeviceMayStandFor(measured.device_name, job.cluster.gpu)) {
      const GpuSpec* gpu = FindGpuForDevice(measured.device_name);
      ThrowUserError(
          SourceLocation{measured.device_file}, measured.device_key,
          fmt::format("{}: layer times hold for the GPU they ran on{}", differs,
                      gpu ? fmt::format(" (project --gpu-arch {})", gpu->name) : std::string()));
    }
    warnings.push_back(
        fmt::format("--profiling-mode trace: {} {}: its layer times are taken as "
                    "the {}'s",
                    measured.device_file, differs, job.cluster.gpu.name));
  }
  const std::string kind = measured.moe ? "moe" : "dense";
  const auto layer = std::find_if(modelled.layers.begin(), modelled.layers.end(),
                                  [&](const PieceTiming& l) { return l.type == kind; });
  if (layer == modelled.layers.end()) return warnings;  // ApplyMeasuredLayers says so
  // Compute only on both sides: how much of the token exchange a run hides depends on its
  // schedule, not on the model.
  const double model_s = layer->forward_s - layer->forward_comm_s + layer->backward_input_s -
                         layer->backward_input_comm_s + layer->backward_weight_s -
                         layer->backward_weight_comm_s;
  const double measured_s = measured.forward_s + measured.backward_input_s +
                            measured.backward_weight_s - measured.ep_comm_s;
  if (model_s <= 0) return warnings;
  // Kernels inside a training step run at a fraction of the model's speed or somewhat above
  // it, not at a fifth or five times (the bound the per-step anchor uses too).
  const double ratio = measured_s / model_s;
  if (ratio < 0.2 || ratio > 5) {
    ThrowUserError(fmt::format(
        "the traces measure {} of compute per {} layer (forward and backward) where the model of "
        "this job gives {} ({:.3f}x): they are not of this model, micro-batch, sequence length "
        "and TP ({})",
        Ms(measured_s), kind, Ms(model_s), ratio, fmt::join(measured.files, ", ")));
  }
  return warnings;
}

void ApplyMeasuredLayers(const MeasuredLayerTimes& measured, ModelTimings* timings) {
  const std::string kind = measured.moe ? "moe" : "dense";
  int replaced = 0;
  for (PieceTiming& layer : timings->layers) {
    if (layer.type != kind) continue;
    // Recomputation repeats (part of) the forward's compute: the model's share of its forward,
    // applied to the measured compute (the token exchange is not repeated).
    const double recompute_share = layer.forward_s > 0 ? layer.recompute_s / layer.forward_s : 0;
    // Compute as measured; the token exchange only as far as the run left it exposed, split
    // between forward and backward as it was measured.
    const double exposed_share =
        measured.ep_comm_s > 0 ? measured.exposed_ep_comm_s / measured.ep_comm_s : 0;
    const double comm_forward = measured.ep_comm_forward_s;
    const double comm_backward = measured.ep_comm_s - measured.ep_comm_forward_s;
    layer.forward_s = measured.forward_s - comm_forward * (1 - exposed_share);
    layer.backward_input_s = measured.backward_input_s - comm_backward * (1 - exposed_share);
    layer.backward_weight_s = measured.backward_weight_s;
    layer.recompute_s = recompute_share * (measured.forward_s - comm_forward);
    layer.tp_comm_s = 0;  // inside the measured times
    layer.cp_comm_s = 0;
    layer.ep_comm_s = measured.exposed_ep_comm_s;
    layer.forward_comm_s = comm_forward * exposed_share;
    layer.backward_input_comm_s = comm_backward * exposed_share;
    layer.backward_weight_comm_s = 0;
    ++replaced;
  }
  if (replaced == 0) {
    ThrowUserError(fmt::format(
        "--trace measured {} layers ({}), but the job has none: the trace must be of the "
        "model being projected",
        kind, fmt::join(measured.files, ", ")));
  }
  std::vector<std::string> pieces;
  for (const MeasuredPiece& p : measured.pieces) {
    pieces.push_back(fmt::format("{} F {:.3f} B {:.3f} W {:.3f}", p.name, p.forward_s * 1e3,
                                 p.backward_input_s * 1e3, p.backward_weight_s * 1e3));
  }
  timings->assumptions.push_back(fmt::format(
      "measured (--profiling-mode trace): the {} {} layers take F {}, B {}, W {} each (GPU "
      "time of their annotation ranges averaged over {} layer instances in {}; per piece, ms: "
      "{}), at the trace's micro-batch and parallel layout",
      replaced, kind, Ms(measured.forward_s), Ms(measured.backward_input_s),
      Ms(measured.backward_weight_s), measured.layers, fmt::join(measured.files, ", "),
      fmt::join(pieces, "; ")));
  if (!measured.overlap_note.empty()) {
    timings->assumptions.push_back("measured token exchange: " + measured.overlap_note);
  }
  timings->assumptions.push_back(fmt::format(
      "modelled: {} layers, embedding, output head, optimizer step, pipeline schedule and "
      "data-/pipeline-parallel communication at the projected scale",
      measured.moe ? "dense" : "MoE"));
}

}  // namespace sextant
