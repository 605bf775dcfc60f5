#include "projection/trace_step_phases.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware/hardware_library.h"
#include "trace/gpu_timeline.h"
#include "util/error.h"

namespace sextant {
namespace {

enum class Phase : uint8_t { kForward, kBackward, kOptimizer };

// PyTorch's names: Optimizer.step / zero_grad are recorded by every torch.optim optimizer
// (torch/optim/optimizer.py, profile_hook_step), and the autograd engine runs each backward
// node inside "autograd::engine::evaluate_function: <Node>" (torch/csrc/autograd/engine.cpp).
std::optional<Phase> OwnPhase(std::string_view name) {
  if (name.starts_with("Optimizer.step#") || name.starts_with("Optimizer.zero_grad#")) {
    return Phase::kOptimizer;
  }
  if (name.starts_with("autograd::engine::evaluate_function")) return Phase::kBackward;
  return std::nullopt;
}

// Phase of every CPU event: its own, else its innermost enclosing event's (parents precede
// children in the store).
std::vector<Phase> PhasesOfCpuEvents(const TraceData& trace) {
  std::vector<Phase> phase(trace.cpu.size(), Phase::kForward);
  for (size_t i = 0; i < trace.cpu.size(); ++i) {
    const CpuEvent& ev = trace.cpu[i];
    if (const auto own = OwnPhase(trace.Name(ev.name))) {
      phase[i] = *own;
    } else if (ev.parent >= 0) {
      phase[i] = phase[ev.parent];
    }
  }
  return phase;
}

struct RankStep {
  double iterations = 1;
  double step_s = 0;
  double forward_s = 0, backward_s = 0, optimizer_s = 0;
  double communication_s = 0, exposed_communication_s = 0, other_s = 0;
  int64_t backward_runs = 0;
  // Every measurement equal, to the nanosecond of the sums they come from: two ranks of a
  // real run never are, two copies of one trace always.
  bool operator==(const RankStep&) const = default;
};

RankStep MeasureRank(const TraceData& trace, const std::string& file) {
  RankStep r;
  const std::vector<uint32_t> events = TimelineEvents(trace);
  const GpuTimeline timeline = ComputeGpuTimeline(trace, events);
  const std::vector<Phase> phases = PhasesOfCpuEvents(trace);
  // Kernel time of the computation per phase; the timeline's computation time (overlapping
  // kernels counted once) is split in these proportions.
  double by_phase[3] = {0, 0, 0};
  std::vector<std::pair<int64_t, Phase>> launches;  // (launch time, phase) of computation
  for (uint32_t gi : events) {
    const GpuEvent& g = trace.gpu[gi];
    if (g.kind == GpuKind::kMemcpy || g.launcher < 0) continue;
    if (g.kind == GpuKind::kKernel && IsCommunicationKernelName(trace.Name(g.name))) continue;
    const Phase p = phases[g.launcher];
    by_phase[static_cast<int>(p)] += static_cast<double>(g.dur_ns);
    launches.emplace_back(trace.cpu[g.launcher].ts_ns, p);
  }
  const double kernel_sum = by_phase[0] + by_phase[1] + by_phase[2];
  if (kernel_sum <= 0) {
    ThrowUserError(SourceLocation{file}, "traceEvents",
                   "has no GPU computation launched inside the profiled window: nothing to "
                   "anchor the projection on");
  }
  if (by_phase[static_cast<int>(Phase::kBackward)] <= 0) {
    ThrowUserError(SourceLocation{file}, "traceEvents",
                   "has no GPU work launched by autograd's backward (\"autograd::engine::"
                   "evaluate_function\" ops): --profiling-mode trace needs a trace of training "
                   "steps recorded with the PyTorch profiler's CPU activities");
  }
  // Backward passes: each run of backward launches that follows forward ones.
  std::stable_sort(launches.begin(), launches.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Phase previous = Phase::kOptimizer;
  for (const auto& launch : launches) {
    if (launch.second == Phase::kBackward && previous == Phase::kForward) ++r.backward_runs;
    previous = launch.second;
  }
  r.iterations = static_cast<double>(std::max<size_t>(1, trace.iterations.size()));
  const double per = 1e-9 / r.iterations;
  const double computation = static_cast<double>(timeline.computation_ns) * per;
  r.forward_s = computation * by_phase[0] / kernel_sum;
  r.backward_s = computation * by_phase[1] / kernel_sum;
  r.optimizer_s = computation * by_phase[2] / kernel_sum;
  r.communication_s = static_cast<double>(timeline.communication_ns) * per;
  r.exposed_communication_s = static_cast<double>(timeline.exposed_communication_ns) * per;
  r.other_s = static_cast<double>(timeline.idle_ns + timeline.exposed_memcpy_ns) * per;
  r.step_s = MeanIterationNs(trace, timeline) * 1e-9;
  return r;
}

std::string StepMs(double seconds) { return fmt::format("{:.2f} ms", seconds * 1e3); }

}  // namespace

MeasuredStep MeasureStepPhases(const std::vector<ProfiledFile>& files) {
  if (files.empty()) ThrowUserError("--profiling-mode trace needs --trace FILE...");
  MeasuredStep m;
  double backward_runs = 0, iterations = 0;
  std::map<int64_t, std::string> rank_files;  // distributedInfo rank -> its trace
  // What each trace measures: a copy of one under another name (with its rank, without it, or
  // edited) would be averaged as a second rank.
  std::vector<std::pair<RankStep, std::string>> measured;
  for (const ProfiledFile& f : files) {
    m.files.push_back(f.path);
    for (const TraceData& trace : f.traces) {
      // A rank twice (a copy of one file) would be averaged as two.
      if (trace.rank >= 0) {
        const auto [it, added] = rank_files.emplace(trace.rank, f.path);
        if (!added) {
          ThrowUserError(SourceLocation{f.path}, "distributedInfo.rank",
                         fmt::format("rank {} again ({} is rank {} too): one trace per rank",
                                     trace.rank, it->second, trace.rank));
        }
      }
      const RankStep r = MeasureRank(trace, f.path);
      for (const auto& [other, other_path] : measured) {
        if (other == r && r.step_s > 0) {
          ThrowUserError(
              SourceLocation{f.path}, "",
              fmt::format("measures exactly what {} does (step {}, forward {}, "
                          "backward {}): one trace given twice? One trace per rank",
                          other_path, StepMs(r.step_s), StepMs(r.forward_s), StepMs(r.backward_s)));
        }
      }
      measured.emplace_back(r, f.path);
      if (m.ranks == 0) {
        m.iterations = static_cast<int64_t>(r.iterations);
        m.device_name = trace.device_name;
      }
      ++m.ranks;
      m.world_size = std::max(m.world_size, trace.world_size);
      m.step_s += r.step_s;
      m.forward_s += r.forward_s;
      m.backward_s += r.backward_s;
      m.optimizer_s += r.optimizer_s;
      m.communication_s += r.communication_s;
      m.exposed_communication_s += r.exposed_communication_s;
      m.other_s += r.other_s;
      backward_runs += static_cast<double>(r.backward_runs);
      iterations += r.iterations;
    }
  }
  if (m.ranks == 0) ThrowUserError(SourceLocation{files.front().path}, "", "holds no trace");
  const double n = static_cast<double>(m.ranks);
  for (double* v : {&m.step_s, &m.forward_s, &m.backward_s, &m.optimizer_s, &m.communication_s,
                    &m.exposed_communication_s, &m.other_s}) {
    *v /= n;
  }
  if (m.world_size <= 0) m.world_size = m.ranks;
  if (m.ranks > m.world_size) {
    ThrowUserError(
        fmt::format("{} rank traces of a run of {} GPUs (distributedInfo.world_size): one "
                    "trace per rank ({})",
                    m.ranks, m.world_size, fmt::join(m.files, ", ")));
  }
  // The window may cut a step at either end: the nearest whole number of passes per step.
  m.micro_batches = std::max<int64_t>(1, std::llround(backward_runs / iterations));
  return m;
}

Job TracedJob(const MeasuredStep& measured, const Job& job) {
  const ParallelPlan& p = job.parallel;
  if (p.pp > 1) {
    ThrowUserError(fmt::format(
        "the traces have no per-layer ranges (attn(F), mlp(B), ...), so they are measured per "
        "step, which needs a job without pipeline parallelism (PP is {}): record per-layer "
        "ranges, or project PP 1",
        p.pp));
  }
  const int64_t model_parallel = static_cast<int64_t>(p.tp) * p.pp * p.cp;
  if (measured.world_size % model_parallel != 0) {
    ThrowUserError(fmt::format(
        "the traced run has {} ranks, not a multiple of TP {} x PP {} x CP {}: the traces must "
        "be of the job's model-parallel layout",
        measured.world_size, p.tp, p.pp, p.cp));
  }
  // A part the library does not hold of the job's own chip (H100 NVL for an H100 job) is
  // taken as the job's GPU, with a warning (AnchorOnStep); another GPU is refused.
  if (const std::string differs = DeviceMismatch(measured.device_name, job.cluster.gpu);
      !differs.empty() && !DeviceMayStandFor(measured.device_name, job.cluster.gpu)) {
    const GpuSpec* gpu = FindGpuForDevice(measured.device_name);
    ThrowUserError(fmt::format("{} {}: project the traced GPU{}", measured.files.front(), differs,
                               gpu ? fmt::format(" (--gpu-arch {})", gpu->name) : std::string()));
  }
  const int64_t dp = measured.world_size / model_parallel;
  if (job.parallel.WorldSize() == measured.world_size) {
    // On the traced GPUs the job must run the traced step: the same micro-batches per rank.
    const int64_t expected = job.training.NumMicroBatches(static_cast<int>(dp));
    if (expected != measured.micro_batches) {
      ThrowUserError(fmt::format(
          "the traces ran {} micro-batch(es) per iteration on {} GPUs, the job would run {} "
          "(global batch {} / (micro-batch {} x DP {})): give the traced run's "
          "--micro-batch-size and --global-batch-size",
          measured.micro_batches, measured.world_size, expected, job.training.global_batch_size,
          job.training.micro_batch_size, dp));
    }
  }
  Job traced = job;
  traced.parallel.dp = static_cast<int>(dp);
  const int per_node = job.cluster.gpus_per_node;
  if (measured.world_size < per_node)
    traced.cluster.gpus_per_node = static_cast<int>(measured.world_size);
  traced.cluster.num_nodes = static_cast<int>(
      (measured.world_size + traced.cluster.gpus_per_node - 1) / traced.cluster.gpus_per_node);
  traced.training.global_batch_size =
      job.training.micro_batch_size * traced.parallel.dp * measured.micro_batches;
  return traced;
}

StepAnchor AnchorOnStep(const MeasuredStep& m, const Job& traced, const ModelTimings& t,
                        const DataParallelCost& dp) {
  StepAnchor a;
  double forward = 0, backward = 0, layer_comm = 0;
  auto add = [&](const PieceTiming& p) {
    forward += p.forward_s - p.forward_comm_s;
    backward += p.backward_input_s - p.backward_input_comm_s + p.backward_weight_s -
                p.backward_weight_comm_s + p.recompute_s;
    layer_comm += p.tp_comm_s + p.cp_comm_s + p.ep_comm_s;
  };
  for (const PieceTiming& l : t.layers) add(l);
  add(t.embedding);
  add(t.output);
  for (int64_t i = 0; i < traced.model.mtp_num_layers; ++i) add(t.mtp);
  const double mb = static_cast<double>(m.micro_batches);
  if (forward > 0) a.forward_scale = m.forward_s / mb / forward;
  if (backward > 0) a.backward_scale = m.backward_s / mb / backward;
  // Kernels inside a training step run at a fraction of the model's speed or somewhat above
  // it, not at a fifth or five times: such a gap means a trace of another model, micro-batch
  // or sequence length, and scaling the model by it would project nonsense.
  for (const auto& [what, scale, modelled] : {std::tuple{"forward", a.forward_scale, forward},
                                              {"backward", a.backward_scale, backward}}) {
    if (scale < 0.2 || scale > 5) {
      ThrowUserError(fmt::format(
          "the traces measure {} of {} computation per micro-batch where the model of this "
          "job gives {} ({:.3f}x): they are not of this model, micro-batch and sequence length "
          "({})",
          StepMs(scale * modelled), what, StepMs(modelled), scale, fmt::join(m.files, ", ")));
    }
  }
  if (const std::string differs = DeviceMismatch(m.device_name, traced.cluster.gpu);
      !differs.empty()) {
    a.warnings.push_back(
        fmt::format("--profiling-mode trace: {} {}: its steps are taken as the "
                    "{}'s",
                    m.files.front(), differs, traced.cluster.gpu.name));
  }
  for (const auto& [what, scale] :
       {std::pair{"forward", a.forward_scale}, {"backward", a.backward_scale}}) {
    if (scale < 0.5 || scale > 2) {
      a.warnings.push_back(fmt::format(
          "--profiling-mode trace: the traces' {} computation is {:.3f}x what the model gives "
          "this job, and every layer is scaled by it: check that they are of this model (layers, "
          "widths), micro-batch, sequence length and TP",
          what, scale));
    }
  }
  if (t.optimizer_step_s > 0 && m.optimizer_s > 0) {
    a.optimizer_scale = m.optimizer_s / t.optimizer_step_s;
  }
  // What the traced run left exposed beyond the layers' own (modelled) communication is the
  // data-parallel part: gradient reduction and parameter gathering, waits for late peers
  // included.
  const double exposed_dp = std::max(0.0, m.exposed_communication_s - layer_comm * mb);
  a.other_s = m.other_s;
  std::string communication;
  if (dp.total_s > 0) {
    a.dp_anchored = true;
    a.dp_exposed_per_modelled = exposed_dp / dp.total_s;
    communication = fmt::format(
        "exposed data-parallel communication {}, scaled with the model's data-parallel "
        "communication ({} at the traced {} GPUs)",
        StepMs(exposed_dp), StepMs(dp.total_s), m.world_size);
  } else if (layer_comm > 0) {
    // No data parallelism traced: what was exposed is the layers' own (TP, CP, EP).
    a.layer_comm_scale = m.exposed_communication_s / (layer_comm * mb);
    communication = fmt::format(
        "the layers' communication x {:.3f} (no data parallelism traced: the {} exposed is "
        "theirs)",
        a.layer_comm_scale, StepMs(m.exposed_communication_s));
  } else {
    a.other_s += m.exposed_communication_s;
    communication = fmt::format(
        "the {} of exposed communication kept (the model has none at the traced layout)",
        StepMs(m.exposed_communication_s));
  }
  a.assumptions.push_back(fmt::format(
      "measured (--profiling-mode trace): {} rank trace(s) of {} GPUs, {} iteration(s) each, "
      "{} micro-batch(es) per iteration; per iteration: forward {}, backward {}, optimizer step "
      "{} of GPU computation, {} of communication of which {} exposed, {} idle (mean over "
      "ranks; measured step {})",
      m.ranks, m.world_size, m.iterations, m.micro_batches, StepMs(m.forward_s),
      StepMs(m.backward_s), StepMs(m.optimizer_s), StepMs(m.communication_s),
      StepMs(m.exposed_communication_s), StepMs(m.other_s), StepMs(m.step_s)));
  a.assumptions.push_back(fmt::format(
      "anchored on the traces (no per-layer ranges: one scale per phase): the model's "
      "computation x {:.3f} forward, x {:.3f} backward, its optimizer step x {:.3f}; {}; {} of "
      "idle per iteration kept; the traces are taken to run the projected micro-batch, TP, CP "
      "and EP",
      a.forward_scale, a.backward_scale, a.optimizer_scale, communication, StepMs(m.other_s)));
  return a;
}

void ApplyStepAnchor(const StepAnchor& a, ModelTimings* t) {
  const double c = a.layer_comm_scale;
  auto scale = [&](PieceTiming& p) {
    p.forward_s = (p.forward_s - p.forward_comm_s) * a.forward_scale + p.forward_comm_s * c;
    p.backward_input_s = (p.backward_input_s - p.backward_input_comm_s) * a.backward_scale +
                         p.backward_input_comm_s * c;
    p.backward_weight_s = (p.backward_weight_s - p.backward_weight_comm_s) * a.backward_scale +
                          p.backward_weight_comm_s * c;
    p.recompute_s *= a.backward_scale;
    for (double* comm : {&p.forward_comm_s, &p.backward_input_comm_s, &p.backward_weight_comm_s,
                         &p.tp_comm_s, &p.cp_comm_s, &p.ep_comm_s}) {
      *comm *= c;
    }
  };
  for (PieceTiming& l : t->layers) scale(l);
  scale(t->embedding);
  scale(t->output);
  scale(t->mtp);
  t->optimizer_step_s *= a.optimizer_scale;
  t->assumptions.insert(t->assumptions.end(), a.assumptions.begin(), a.assumptions.end());
}

}  // namespace sextant
