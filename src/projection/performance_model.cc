#include "projection/performance_model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cost/collective_model.h"
#include "cost/layer_cost.h"
#include "job/job_validation.h"
#include "job/torchtitan_schedules.h"
#include "memory/activation_memory.h"
#include "memory/memory_model.h"
#include "model/flop_count.h"
#include "parallel/sharding.h"
#include "pipeline/schedule_generators.h"
#include "projection/iteration_communication.h"
#include "projection/zero_bubble_memory_limit.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant {

namespace {

struct StagedCosts {
  PipelineCosts costs;
  std::vector<double> tp_comm, cp_comm, ep_comm;  // per virtual stage, per micro-batch
  std::vector<double> backward_last;              // per virtual stage: B + W of one micro-batch
  std::vector<double> forward;                    // per virtual stage: F
};

StagedCosts BuildStageCosts(const Job& job, const ModelTimings& t, ScheduleKind kind,
                            const CollectiveModel& comm) {
  const StageShape shape =
      ShapeOf(kind) == StageShape::kVShape ? StageShape::kVShape : StageShape::kInterleaved;
  ParallelPlan plan = job.parallel;
  if (shape == StageShape::kVShape) plan.vpp = 2;
  const auto stages = PlaceLayers(job.model, plan, shape);
  StagedCosts out;
  const bool split = SplitsBackward(kind);
  for (const auto& vs : stages) {
    StageCost c;
    double tp = 0, cp = 0, ep = 0;
    int64_t act = 0;
    auto add = [&](const PieceTiming& p) {
      c.forward_s += p.forward_s;
      c.backward_input_s += p.backward_input_s;
      c.backward_weight_s += p.backward_weight_s;
      c.recompute_s += p.recompute_s;
      tp += p.tp_comm_s;
      cp += p.cp_comm_s;
      ep += p.ep_comm_s;
    };
    for (int64_t i = 0; i < vs.num_layers; ++i) {
      add(t.layers[vs.first_layer + i]);
      // A fully recomputed layer keeps only its input until its backward pass.
      const bool full = job.training.recompute.granularity == RecomputeGranularity::kFull &&
                        IsLayerRecomputed(job.training.recompute, vs.first_layer + i, i);
      act += full ? RecomputedLayerInputBytes(job)
                  : LayerActivationBytes(job, vs.first_layer + i).Total();
    }
    for (int64_t i = 0; i < vs.mtp_layers; ++i) add(t.mtp);
    if (vs.has_embedding) {
      add(t.embedding);
      act += EmbeddingActivationBytes(job);
    }
    if (vs.has_output) {
      add(t.output);
      act += OutputActivationBytes(job);
    }
    if (!split) c.backward_combined_s = c.backward_input_s + c.backward_weight_s;
    c.activation_bytes = act;
    out.costs.stages.push_back(c);
    out.tp_comm.push_back(tp);
    out.cp_comm.push_back(cp);
    out.ep_comm.push_back(ep);
    out.backward_last.push_back(c.backward_input_s + c.backward_weight_s);
    out.forward.push_back(c.forward_s);
  }
  if (job.parallel.pp > 1) out.costs.p2p_s = {PipelineHandoffSeconds(job, comm)};
  out.costs.p2p_overlaps_compute = true;
  return out;
}

// The rank with the most work (the last to finish on a tie): its idle time is the pipeline's
// bubble. The last to finish is not it: in 1F1B and its interleaved form rank 0 runs the final
// backward, and with uneven stages it may be the least loaded. The header and the `all` table
// both read the bubble here, so they cannot disagree.
const RankSimulation& CriticalRank(const PipelineSimulation& sim) {
  const RankSimulation* crit = &sim.ranks.front();
  for (const auto& rk : sim.ranks) {
    if (rk.busy_s > crit->busy_s || (rk.busy_s == crit->busy_s && rk.end_s > crit->end_s)) {
      crit = &rk;
    }
  }
  return *crit;
}

double PeakTflopsForMfu(const Job& job) {
  const GpuSpec& g = job.cluster.gpu;
  const DType d = job.training.precision.HalfPrecision();
  return g.Supports(d) ? g.PeakTflops(d) : g.PeakTflops(DType::kBF16);
}

// The dense peak of the transformer GEMMs' input type when it is narrower than 16 bits and the
// GPU runs it natively; 0 otherwise.
double GemmPrecisionPeakTflops(const Job& job) {
  const GpuSpec& g = job.cluster.gpu;
  const DType d = job.training.precision.gemm;
  if (DTypeBytes(d) >= 2 || !g.Supports(d)) return 0;
  return g.PeakTflops(d);
}

}  // namespace

namespace {

// "global batch 128 -> 16000 (1 micro-batch of 2 x DP 8000)" for a job whose configured
// batch was rounded to whole micro-batches; "" otherwise.
std::string BatchRoundingNote(const Job& job) {
  const TrainingSettings& t = job.training;
  if (t.unrounded_global_batch_size <= 0) return "";
  const int64_t micro_batches = t.NumMicroBatches(job.parallel.dp);
  return fmt::format("global batch {} -> {} ({} micro-batch{} of {} x DP {})",
                     t.unrounded_global_batch_size, t.global_batch_size, micro_batches,
                     micro_batches == 1 ? "" : "es", t.micro_batch_size, job.parallel.dp);
}

}  // namespace

Job RescaleToNodes(const Job& job, int nodes) {
  Job j = job;
  j.warnings.clear();  // the copy's own changes only
  const ParallelPlan& p = job.parallel;
  const int world = nodes * job.cluster.gpus_per_node;
  const int model_parallel = p.tp * p.pp * p.cp;
  if (world % model_parallel != 0) {
    ThrowUserError(fmt::format("{} nodes x {} GPUs is not a multiple of TP {} x PP {} x CP {}",
                               nodes, job.cluster.gpus_per_node, p.tp, p.pp, p.cp));
  }
  j.parallel.dp = world / model_parallel;
  j.cluster.num_nodes = nodes;
  if (job.training.sequences_per_data_rank > 0) {
    // A batch fixed per data-parallel rank (TorchTitan, MaxText) grows with DP.
    j.training.global_batch_size = job.training.sequences_per_data_rank * j.parallel.dp;
    return j;
  }
  // A global batch that does not split into whole micro-batches over the new DP is rounded
  // down to whole micro-batches, at least one per rank, as Primus does (n_mb = GBS // (MBS·DP),
  // 0 forced to 1; research/primus-projection.md §3.9), and the change is said.
  // The batch the configuration states, not one already rounded for the job's own node count.
  const int64_t per_step = job.training.micro_batch_size * j.parallel.dp;
  const int64_t gbs = job.training.unrounded_global_batch_size > 0
                          ? job.training.unrounded_global_batch_size
                          : job.training.global_batch_size;
  j.training.global_batch_size = gbs;
  j.training.unrounded_global_batch_size = 0;
  if (per_step > 0 && gbs > 0 && gbs % per_step != 0) {
    const int64_t micro_batches = std::max<int64_t>(1, gbs / per_step);
    j.training.global_batch_size = micro_batches * per_step;
    j.training.unrounded_global_batch_size = gbs;
    j.warnings.push_back(BatchRoundingNote(j));
  }
  return j;
}

PerformanceReport ProjectPerformance(const Job& job, const PerformanceOptions& options) {
  PerformanceReport r;
  r.model = job.model.name;
  r.gpu = job.cluster.gpu.name;
  r.nodes = job.cluster.num_nodes;
  r.gpus = job.parallel.WorldSize();
  r.parallel = job.parallel;
  const int64_t m = job.training.NumMicroBatches(job.parallel.dp);
  r.micro_batches = m;
  r.micro_batch_size = job.training.micro_batch_size;
  r.global_batch_size = job.training.global_batch_size;
  r.configured_global_batch_size = job.training.unrounded_global_batch_size;
  r.seq_length = job.training.seq_length;
  r.gemm_precision = job.training.precision.GemmDescription();
  if (m < 1) ThrowUserError("the global batch gives no micro-batch to each data-parallel rank");

  const auto comm = MakeCollectiveModel(job.cluster, "auto");
  ModelTimings timings = ComputeModelTimings(job, options.calibration, options.gemm_table.get());
  if (options.measured_layers) {
    for (std::string& w : CheckMeasuredLayers(*options.measured_layers, job, timings)) {
      r.warnings.push_back(std::move(w));
    }
    ApplyMeasuredLayers(*options.measured_layers, &timings);
  }
  StepAnchor anchor;
  if (options.measured_step) {
    const Job traced = TracedJob(*options.measured_step, job);
    const ModelTimings at_trace =
        ComputeModelTimings(traced, options.calibration, options.gemm_table.get());
    const auto traced_comm = MakeCollectiveModel(traced.cluster, "auto");
    // Only the total (before overlap) is used: the windows do not matter.
    const DataParallelCost traced_dp = DataParallelTime(
        traced, *traced_comm, 0, 0, at_trace, traced.training.NumMicroBatches(traced.parallel.dp));
    anchor = AnchorOnStep(*options.measured_step, traced, at_trace, traced_dp);
    ApplyStepAnchor(anchor, &timings);
  }
  const bool compare_all = options.compare_all_schedules;
  const ScheduleKind chosen = ForVirtualStages(
      compare_all ? ScheduleKind::k1F1B : job.training.pipeline_schedule, job.parallel.vpp);
  if (job.parallel.vpp > 1 && ShapeOf(chosen) == StageShape::kInterleaved &&
      chosen != ScheduleKind::kInterleaved1F1B) {
    ThrowUserError(fmt::format("schedule {} runs one model chunk per rank, but VPP is {}",
                               ScheduleKindName(chosen), job.parallel.vpp));
  }
  if (SplitsBackward(chosen) && job.training.recompute.granularity == RecomputeGranularity::kFull) {
    r.assumptions.push_back(
        "full recomputation with a B/W-split schedule: the forward is recomputed once before B");
  }

  auto run_one = [&](ScheduleKind kind, PipelineSimulation& sim, Schedule& ops,
                     StagedCosts& staged) {
    staged = BuildStageCosts(job, timings, kind, *comm);
    PipelineShape shape{job.parallel.pp, ChunksPerRank(kind, job.parallel.vpp),
                        static_cast<int>(m)};
    if (kind == ScheduleKind::kZeroBubbleHeuristic) {
      const int limit = ZeroBubbleInFlightLimit(job);
      ops = MakeZeroBubbleHeuristicSchedule(shape, &staged.costs, limit);
      if (limit > 0) {
        r.assumptions.push_back(fmt::format(
            "zero-bubble heuristic: at most {} micro-batches in flight per rank (what fits below "
            "{:.0f}% of HBM on every rank)",
            limit, kAtRiskFraction * 100));
      }
    } else {
      ops = GenerateSchedule(kind, shape, &staged.costs);
    }
    sim = SimulatePipeline(ops, staged.costs);
  };

  StagedCosts staged;
  run_one(chosen, r.simulation, r.schedule_ops, staged);
  r.schedule_kind = chosen;
  // A V-shape schedule runs two model chunks per rank whatever VPP the configuration states;
  // the header says what is simulated (as the memory projection does).
  r.parallel.vpp = ChunksPerRank(chosen, job.parallel.vpp);
  r.schedule = std::string(ScheduleKindName(chosen));

  const RankSimulation* crit = &CriticalRank(r.simulation);
  double bwd_window = 0, fwd_window = 0;
  for (size_t s = 0; s < staged.backward_last.size(); ++s) {
    if (r.schedule_ops.RankOfStage(static_cast<int>(s)) == 0) {
      bwd_window += staged.backward_last[s];
      fwd_window += staged.forward[s];
    }
  }
  DataParallelCost dp = DataParallelTime(job, *comm, bwd_window, fwd_window, timings, m);
  if (anchor.dp_anchored) dp.exposed_s = anchor.dp_exposed_per_modelled * dp.total_s;
  const double step = r.simulation.step_time_s;
  const double beyond_pipeline = dp.exposed_s + timings.optimizer_step_s + anchor.other_s;
  const double iteration = step + beyond_pipeline;
  r.iteration_time_ms = iteration * 1e3;
  r.dp_comm_total_ms = dp.total_s * 1e3;
  const double tokens =
      static_cast<double>(job.training.global_batch_size) * job.training.seq_length;
  r.tokens_per_s_per_gpu = tokens / iteration / r.gpus;
  FlopInputs fi{job.training.seq_length, job.training.global_batch_size,
                job.model.PaddedVocabSize(job.parallel.tp)};
  const double model_flops = MegatronModelFlops(job.model, fi);
  // Full recompute: Megatron's own count (one more forward of every layer), for the share of
  // the layers' forward that is recomputed (all of it unless recompute_num_layers or
  // recompute_layer_ids name fewer); selective: what the recomputed pieces re-run, from the
  // layer cost model.
  const double full_extra = MegatronFullRecomputeFlops(job.model, fi) - model_flops;
  const double hw_flops = (job.training.recompute.granularity == RecomputeGranularity::kFull
                               ? model_flops + full_extra * timings.recomputed_layer_forward_share
                               : model_flops * (1.0 + timings.recompute_flops_ratio)) *
                          timings.executed_flops_ratio;
  r.model_tflops_per_gpu = model_flops / iteration / r.gpus / kTera;
  r.hardware_tflops_per_gpu = hw_flops / iteration / r.gpus / kTera;
  r.mfu = r.model_tflops_per_gpu / PeakTflopsForMfu(job);
  if (const double low = GemmPrecisionPeakTflops(job); low > 0) {
    r.mfu_at_gemm_precision = r.model_tflops_per_gpu / low;
    r.gemm_peak_dtype = std::string(DTypeName(job.training.precision.gemm));
  }
  r.bubble_ratio = crit->bubble_ratio;

  // Breakdown on the critical rank.
  double tp = 0, cp = 0, ep = 0;
  for (size_t s = 0; s < staged.tp_comm.size(); ++s) {
    if (r.schedule_ops.RankOfStage(static_cast<int>(s)) != crit->rank) continue;
    tp += staged.tp_comm[s] * m;
    cp += staged.cp_comm[s] * m;
    ep += staged.ep_comm[s] * m;
  }
  double p2p = 0;
  for (const auto& e : crit->timeline) {
    if (e.kind == TimelineEventKind::kSend || e.kind == TimelineEventKind::kRecv) {
      p2p += e.end_s - e.start_s;
    }
  }
  IterationBreakdown& b = r.breakdown;
  b.tp_comm_ms = tp * 1e3;
  b.cp_comm_ms = cp * 1e3;
  b.ep_comm_ms = ep * 1e3;
  b.pp_comm_ms = p2p * 1e3;
  b.compute_ms = std::max(0.0, crit->busy_s - tp - cp - ep) * 1e3;
  b.pipeline_bubble_ms = crit->bubble_s * 1e3;
  b.dp_comm_exposed_ms = dp.exposed_s * 1e3;
  b.optimizer_ms = timings.optimizer_step_s * 1e3;
  b.measured_idle_ms = anchor.other_s * 1e3;

  // One row per distinct layer type.
  std::map<std::string, bool> seen;
  for (const auto& l : timings.layers) {
    if (!seen[l.type]) {
      seen[l.type] = true;
      r.layer_types.push_back(l);
    }
  }
  r.layer_types.push_back(timings.embedding);
  r.layer_types.push_back(timings.output);

  // In-flight activations per rank from the simulation, for the memory model.
  const int chunks = r.schedule_ops.shape.chunks_per_rank;
  for (const auto& rk : r.simulation.ranks) {
    r.in_flight.push_back(
        std::vector<double>(chunks, static_cast<double>(rk.peak_inflight_chunks) / chunks));
  }

  if (compare_all) {
    for (ScheduleKind k : AllScheduleKinds()) {
      ScheduleResult sr;
      sr.schedule = std::string(ScheduleKindName(k));
      try {
        if (std::string_view why = VirtualStageMismatch(k, job.parallel.vpp); !why.empty()) {
          ThrowUserError(why);
        }
        if (job.framework == "torchtitan" && TorchTitanScheduleFor(k) == nullptr) {
          ThrowUserError("not a torchtitan schedule class (torch.distributed.pipelining)");
        }
        PipelineSimulation sim;
        Schedule ops;
        StagedCosts sc;
        run_one(k, sim, ops, sc);
        sr.ran = true;
        const double it = sim.step_time_s + beyond_pipeline;
        sr.iteration_time_ms = it * 1e3;
        sr.bubble_ratio = CriticalRank(sim).bubble_ratio;
        sr.tokens_per_s_per_gpu = tokens / it / r.gpus;
        sr.peak_activation_bytes = sim.max_peak_activation_bytes;
      } catch (const UserError& e) {
        sr.skipped_because = e.what();
      }
      r.schedules.push_back(sr);
    }
  }

  // Scaling table over node counts: DP grows, with the global batch fixed or, where the
  // configuration fixes the batch per data-parallel rank, growing with it.
  r.global_batch_grows_with_dp = job.training.sequences_per_data_rank > 0;
  std::vector<int> nodes = options.scaling_nodes;
  if (nodes.empty()) {
    for (int n = 1; n <= std::max(1, job.cluster.num_nodes * 4); n *= 2) nodes.push_back(n);
    if (std::find(nodes.begin(), nodes.end(), job.cluster.num_nodes) == nodes.end()) {
      nodes.push_back(job.cluster.num_nodes);
      std::sort(nodes.begin(), nodes.end());
    }
  }
  for (int n : nodes) {
    ScalingPoint sp;
    sp.nodes = n;
    try {
      Job at_nodes = job;
      at_nodes.training.pipeline_schedule = r.schedule_kind;
      // The in-flight micro-batches of the schedule this row ran, as the headline's memory
      // takes them (ProjectMemoryFor): a formula's would differ for DualPipeV or zero-bubble.
      InFlightTable in_flight = r.in_flight;
      if (n == job.cluster.num_nodes) {
        sp.note = BatchRoundingNote(job);
        sp.dp = job.parallel.dp;
        sp.micro_batches = m;
        sp.iteration_time_ms = r.iteration_time_ms;
        sp.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
        sp.mfu = r.mfu;
      } else {
        Job scaled;
        try {
          scaled = RescaleToNodes(job, n);
          // The checks a run at this node count would pass (EP within DP x CP x TP, ...).
          std::vector<std::string> ignored;
          ValidateJob(scaled, Provenance{}, scaled.parallel.pad_uneven_layers, ignored);
        } catch (const UserError& e) {
          // A layout that cannot run at this node count is not a row of the table.
          r.assumptions.push_back(
              fmt::format("scaling: {} node{} left out: {}", n, n == 1 ? "" : "s", e.what()));
          continue;
        }
        PerformanceOptions inner;
        inner.scaling_nodes = {n};
        inner.calibration = options.calibration;
        inner.gemm_table = options.gemm_table;
        inner.measured_layers = options.measured_layers;
        inner.measured_step = options.measured_step;
        const PerformanceReport sr = ProjectPerformance(scaled, inner);
        at_nodes = scaled;
        at_nodes.training.pipeline_schedule = sr.schedule_kind;
        in_flight = sr.in_flight;
        sp.dp = scaled.parallel.dp;
        sp.micro_batches = sr.micro_batches;
        sp.iteration_time_ms = sr.iteration_time_ms;
        sp.tokens_per_s_per_gpu = sr.tokens_per_s_per_gpu;
        sp.mfu = sr.mfu;
        for (const std::string& w : scaled.warnings) sp.note += (sp.note.empty() ? "" : "; ") + w;
      }
      // A row the memory projection refuses is no option at that node count.
      const std::string oom =
          OomNote(ProjectMemory(at_nodes, in_flight, MemoryDetail::kNumbersOnly));
      if (!oom.empty()) sp.note += std::string(sp.note.empty() ? "" : "; ") + oom;
      if (sp.micro_batches < job.parallel.pp) {
        sp.note += std::string(sp.note.empty() ? "" : "; ") +
                   fmt::format("micro-batch starvation: {} micro-batches < PP {}", sp.micro_batches,
                               job.parallel.pp);
      }
    } catch (const UserError& e) {
      sp.note = e.what();
    }
    r.scaling.push_back(sp);
  }

  r.warnings.insert(r.warnings.end(), anchor.warnings.begin(), anchor.warnings.end());
  // Notes made while simulating (schedule limits, recompute) follow the layer-time ones.
  r.assumptions.insert(r.assumptions.begin(), timings.assumptions.begin(),
                       timings.assumptions.end());
  if (anchor.dp_anchored) {
    r.assumptions.push_back(fmt::format(
        "data parallel: {} ({:.2f} ms modelled in total); exposed {:.2f} ms: the traces' exposed "
        "communication, scaled with the model's",
        dp.how, dp.total_s * 1e3, dp.exposed_s * 1e3));
  } else {
    r.assumptions.push_back(fmt::format("data parallel: {} ({:.2f} ms total, {:.2f} ms exposed)",
                                        dp.how, dp.total_s * 1e3, dp.exposed_s * 1e3));
  }
  std::string low_precision_mfu;
  if (r.mfu_at_gemm_precision > 0) {
    // Megatron and Primus log MFU against the 16-bit peak; against the peak the GEMMs run at,
    // a FP8 or FP4 run shows how much of its own hardware it uses (never above 100%).
    low_precision_mfu = fmt::format(
        "; against the {} peak of its GEMMs ({:.0f} TFLOP/s) MFU is {:.1f}%{}",
        DTypeName(job.training.precision.gemm), GemmPrecisionPeakTflops(job),
        r.mfu_at_gemm_precision * 100,
        r.mfu > 1 ? " (the 16-bit MFU passes 100% because the GEMMs run faster than the 16-bit "
                    "peak)"
                  : "");
  }
  r.assumptions.push_back(fmt::format(
      "model FLOPs: Megatron num_floating_point_operations, causal attention ({:.3g} per "
      "iteration); MFU against the dense {} peak {:.0f} TFLOP/s{}",
      model_flops, job.training.precision.params == DType::kFP16 ? "fp16" : "bf16",
      PeakTflopsForMfu(job), low_precision_mfu));
  r.assumptions.push_back(
      fmt::format("precision: transformer-layer GEMMs in {}; attention and the output head in {}",
                  r.gemm_precision, DTypeName(job.training.precision.HalfPrecision())));
  r.assumptions.push_back(fmt::format("collectives: {} preset", comm->Name()));
  for (const auto& n : job.notes) r.assumptions.push_back(n);
  return r;
}

}  // namespace sextant
