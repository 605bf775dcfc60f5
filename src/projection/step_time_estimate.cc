#include "projection/step_time_estimate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cost/optimizer_cost.h"
#include "memory/activation_memory.h"
#include "memory/model_state_memory.h"
#include "parallel/sharding.h"

namespace sextant {
namespace {

struct StageSum {
  int rank = 0;
  double f = 0, r = 0, b = 0, w = 0;
  double Total() const { return f + r + b + w; }
};

void Add(StageSum& s, const PieceTiming& p) {
  s.f += p.forward_s;
  s.r += p.recompute_s;
  s.b += p.backward_input_s;
  s.w += p.backward_weight_s;
}

// The same collectives and overlap rules as the full projection's data-parallel cost
// (performance_model.cc) for Megatron DDP and the distributed optimizer.
double ExposedDataParallel(const Job& job, const CollectiveModel& comm, double backward_window_s,
                           double forward_window_s) {
  const ParallelPlan& p = job.parallel;
  const RankParams params = ParamsOnRank(job.model, p, 0);
  CommGroup dense = GroupFor(ParallelDim::kDP, p, job.cluster.gpus_per_node);
  dense.size = p.dp * p.cp;
  const CommGroup expert = GroupFor(ParallelDim::kExpertDP, p, job.cluster.gpus_per_node);
  const double grad_bytes = DTypeBytes(job.training.precision.main_grads);
  const double param_bytes = DTypeBytes(job.training.precision.params);
  double rs = 0, ag = 0;
  for (auto [n, group] :
       {std::pair<int64_t, CommGroup>{params.dense, dense}, {params.expert, expert}}) {
    if (group.size <= 1 || n == 0) continue;
    if (p.distributed_optimizer) {
      rs += comm.Time(Collective::kReduceScatter, static_cast<int64_t>(n * grad_bytes), group);
      ag += comm.Time(Collective::kAllGather, static_cast<int64_t>(n * param_bytes), group);
    } else {
      rs += comm.Time(Collective::kAllReduce, static_cast<int64_t>(n * grad_bytes), group);
    }
  }
  const double buckets = std::max(1.0, std::ceil(params.Total() / 40e6));
  const double exposed_rs =
      job.training.overlap_grad_reduce ? std::max(rs / buckets, rs - backward_window_s) : rs;
  const double exposed_ag =
      job.training.overlap_param_gather ? std::max(ag / buckets, ag - forward_window_s) : ag;
  return exposed_rs + exposed_ag;
}

// What ComputeModelTimings charges for the optimizer, for this job's PP and sharding.
double OptimizerSeconds(const Job& job, const EfficiencyTable& table, double eff) {
  int64_t most = 0;
  for (int r = 0; r < job.parallel.pp; ++r) {
    const RankParams p = ParamsOnRank(job.model, job.parallel, r);
    int64_t owned = p.Total();
    if (job.parallel.distributed_optimizer || job.parallel.fsdp2) {
      owned = p.dense / DenseOptimizerShards(job.parallel) +
              p.expert / job.parallel.ExpertDataParallel();
    }
    most = std::max(most, owned);
  }
  return OptimizerStepCost(job.cluster.gpu, table, job.training.precision, job.training.optimizer,
                           most)
             .seconds /
         eff;
}

}  // namespace

StepEstimate EstimateIteration(const Job& job, ScheduleKind schedule, const ModelTimings& timings,
                               const CollectiveModel& comm, const EfficiencyTable& table,
                               double in_training_efficiency) {
  const ParallelPlan& plan = job.parallel;
  const bool v_shape = PlacementOf(schedule) == StagePlacement::kVShape;
  ParallelPlan placed = plan;
  if (v_shape) placed.vpp = 2;
  const auto stages =
      PlaceLayers(job.model, placed, v_shape ? StageShape::kVShape : StageShape::kInterleaved);

  std::vector<StageSum> sums(stages.size());
  for (size_t s = 0; s < stages.size(); ++s) {
    const VirtualStage& vs = stages[s];
    StageSum& sum = sums[s];
    sum.rank = vs.pp_rank;
    for (int64_t i = 0; i < vs.num_layers; ++i) Add(sum, timings.layers[vs.first_layer + i]);
    for (int64_t i = 0; i < vs.mtp_layers; ++i) Add(sum, timings.mtp);
    if (vs.has_embedding) Add(sum, timings.embedding);
    if (vs.has_output) Add(sum, timings.output);
  }

  const int pp = plan.pp;
  const double m = static_cast<double>(job.training.NumMicroBatches(plan.dp));
  std::vector<double> per_rank(static_cast<size_t>(pp), 0.0);
  double slowest_stage = 0, stage_total = 0;
  StageSum worst;  // component-wise maximum over stages (chunks)
  for (const StageSum& s : sums) {
    per_rank[static_cast<size_t>(s.rank)] += s.Total();
    slowest_stage = std::max(slowest_stage, s.Total());
    stage_total += s.Total();
    worst.f = std::max(worst.f, s.f);
    worst.r = std::max(worst.r, s.r);
    worst.b = std::max(worst.b, s.b);
    worst.w = std::max(worst.w, s.w);
  }
  const double slowest_rank = *std::max_element(per_rank.begin(), per_rank.end());
  const double fill = pp - 1.0;

  double step = 0;
  switch (schedule) {
    case ScheduleKind::kInterleaved1F1B:
      step = (m + fill / std::max(1, plan.vpp)) * slowest_rank;
      break;
    case ScheduleKind::kZeroBubbleH1:
      step = m * slowest_stage + fill * std::max(0.0, worst.f + worst.r + worst.b - worst.w);
      break;
    case ScheduleKind::kZeroBubbleH2:
    case ScheduleKind::kZeroBubbleHeuristic:
      step = m * slowest_stage + fill * std::max(0.0, worst.f + worst.r + worst.b - 2 * worst.w);
      break;
    case ScheduleKind::kZbvFormatted:
    case ScheduleKind::kZbvGreedyHalf:
    case ScheduleKind::kZbvGreedyMin:
      step = m * slowest_rank + fill * std::max(0.0, worst.f + worst.r + worst.b - 2 * worst.w);
      break;
    case ScheduleKind::kDualPipeV:
      step = m * slowest_rank + std::max(0.0, pp / 2.0 - 1.0) *
                                    std::max(0.0, worst.f + worst.r + 2 * worst.b - 3 * worst.w);
      break;
    case ScheduleKind::kGPipe:
    case ScheduleKind::k1F1B: step = stage_total + (m - 1) * slowest_stage; break;
  }
  if (pp > 1) {
    // One micro-batch's hidden state between neighbouring ranks, as the full projection sends it.
    const int64_t sp = plan.sequence_parallel ? plan.tp : 1;
    const int64_t bytes = 2 * TokensPerRank(job) * job.model.hidden_size / std::max<int64_t>(1, sp);
    const CommGroup pp_group = GroupFor(ParallelDim::kPP, plan, job.cluster.gpus_per_node);
    const CommGroup pair{2, pp_group.ranks_per_node >= 2 ? 2 : 1};
    step += 2 * fill * comm.Time(Collective::kSendRecv, bytes, pair);
  }

  double backward_window = 0, forward_window = 0;
  for (const StageSum& s : sums) {
    if (s.rank != 0) continue;
    backward_window += s.b + s.w;
    forward_window += s.f;
  }
  StepEstimate out;
  out.step_s = step;
  out.dp_exposed_s = ExposedDataParallel(job, comm, backward_window, forward_window);
  out.optimizer_s = OptimizerSeconds(job, table, in_training_efficiency);
  return out;
}

}  // namespace sextant
