#include "projection/design_space.h"

#include <algorithm>

#include "job/job_validation.h"
#include "job/maxtext_remat.h"
#include "job/torchtitan_schedules.h"
#include "parallel/pipeline_layout.h"
#include "parallel/sharding.h"

namespace sextant {
namespace {

std::vector<int> Divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<int> PowersOfTwoUpTo(int64_t limit) {
  std::vector<int> out;
  for (int64_t v = 1; v <= limit; v *= 2) out.push_back(static_cast<int>(v));
  return out;
}

bool Offers(const DesignSpace& space, ScheduleKind k) {
  return std::find(space.schedules.begin(), space.schedules.end(), k) != space.schedules.end();
}

// Schedules a (PP, VPP) point runs, in the space's order.
std::vector<ScheduleKind> SchedulesFor(const DesignSpace& space, int pp, int vpp) {
  std::vector<ScheduleKind> out;
  if (pp == 1) {
    if (Offers(space, ScheduleKind::k1F1B)) out.push_back(ScheduleKind::k1F1B);
    return out;
  }
  for (ScheduleKind k : space.schedules) {
    const bool interleaved = k == ScheduleKind::kInterleaved1F1B;
    if (vpp == 1 && !interleaved && ShapeOf(k) != StageShape::kVShape) out.push_back(k);
    if (vpp == 2 && ShapeOf(k) == StageShape::kVShape) out.push_back(k);
    if (vpp > 1 && interleaved) out.push_back(k);
  }
  return out;
}

// The schedules a framework can be told to run: torchtitan's torch.distributed.pipelining
// classes (job/torchtitan_schedules.h); MaxText's pipeline is projected as 1F1B only; Megatron
// with Primus's patches runs every schedule Sextant has.
bool FrameworkRuns(const std::string& framework, ScheduleKind k) {
  if (framework == "torchtitan") return TorchTitanScheduleFor(k) != nullptr;
  if (framework == "maxtext") return k == ScheduleKind::k1F1B;
  // Megatron-Core's own schedules; the zero-bubble and V schedules are Primus's patches to its
  // Megatron backend (primus/backends/megatron/patches), which the Megatron-Bridge backend
  // does not apply.
  if (framework == "megatron_bridge") {
    return k == ScheduleKind::k1F1B || k == ScheduleKind::kInterleaved1F1B;
  }
  return true;
}

}  // namespace

const char* ShardingName(const Candidate& c) {
  return c.fsdp2 ? "fsdp2" : c.distributed_optimizer ? "dist-opt" : "off";
}

const char* RecomputeName(RecomputeGranularity g) {
  switch (g) {
    case RecomputeGranularity::kNone: return "none";
    case RecomputeGranularity::kSelective: return "selective";
    case RecomputeGranularity::kFull: return "full";
  }
  return "none";
}

std::vector<LayerShape> EnumerateLayerShapes(const Job& base, const DesignSpace& space) {
  const int world = base.cluster.WorldSize();
  const bool moe = base.model.IsMoe();
  std::vector<LayerShape> out;
  for (int tp : Divisors(base.cluster.gpus_per_node)) {
    for (int cp : PowersOfTwoUpTo(space.max_cp)) {
      if (world % (tp * cp) != 0) continue;
      std::vector<std::pair<int, int>> experts;  // (EP, ETP)
      if (moe) {
        for (int ep : PowersOfTwoUpTo(std::min<int64_t>(base.model.moe.num_experts, world))) {
          experts.emplace_back(ep, 1);
          if (tp > 1) experts.emplace_back(ep, tp);
        }
      } else {
        experts.emplace_back(1, tp);  // Megatron: ETP defaults to TP
      }
      for (auto [ep, etp] : experts) {
        for (int64_t mbs : space.micro_batch_sizes) {
          for (RecomputeGranularity rc : space.recompute) {
            out.push_back({tp, cp, ep, etp, mbs, rc});
          }
        }
      }
    }
  }
  return out;
}

std::vector<Candidate> EnumerateCandidates(const Job& base, const DesignSpace& space,
                                           const LayerShape& shape, int64_t* pruned) {
  const int world = base.cluster.WorldSize();
  std::vector<Candidate> out;
  const int model_parallel = shape.tp * shape.cp;
  if (world % model_parallel != 0) return out;
  const bool both_optimizers =
      std::count(space.distributed_optimizer.begin(), space.distributed_optimizer.end(), true) >
          0 &&
      std::count(space.distributed_optimizer.begin(), space.distributed_optimizer.end(), false) > 0;
  for (int pp : Divisors(world / model_parallel)) {
    for (int vpp = 1; vpp <= (pp > 1 ? space.max_vpp : 1); ++vpp) {
      for (ScheduleKind schedule : SchedulesFor(space, pp, vpp)) {
        if (!FrameworkRuns(base.framework, schedule)) continue;
        // (distributed optimizer, FSDP2) choices: the space's optimizers, then FSDP2.
        // torchtitan and MaxText always shard over their data-parallel axis (FSDP); Megatron
        // refuses FSDP2 with pipeline or expert parallelism (arguments.py validate_args).
        const bool shards = world / (model_parallel * pp) * shape.cp > 1;
        const bool megatron = base.framework.empty() || base.framework == "megatron" ||
                              base.framework == "megatron_bridge";
        std::vector<std::pair<bool, bool>> shardings;
        if (!megatron) {
          shardings.emplace_back(false, shards);
        } else {
          for (bool dist_opt : space.distributed_optimizer) shardings.emplace_back(dist_opt, false);
          ParallelPlan fsdp;
          fsdp.pp = pp;
          fsdp.ep = shape.ep;
          if (space.fsdp2 && shards && MegatronFsdp2Refusal(fsdp).empty()) {
            shardings.emplace_back(false, true);
          }
        }
        for (const auto& [dist_opt, fsdp2] : shardings) {
          Candidate c;
          c.tp = shape.tp;
          c.cp = shape.cp;
          c.ep = shape.ep;
          c.etp = shape.etp;
          c.pp = pp;
          c.vpp = vpp;
          c.dp = world / (model_parallel * pp);
          c.micro_batch_size = shape.micro_batch_size;
          c.recompute = shape.recompute;
          c.distributed_optimizer = dist_opt;
          c.fsdp2 = fsdp2;
          c.schedule = schedule;
          if (dist_opt && both_optimizers) {
            // Sharding over one rank is the plain optimizer again: not a separate point.
            ParallelPlan plan;
            plan.tp = c.tp, plan.pp = c.pp, plan.cp = c.cp, plan.dp = c.dp;
            plan.ep = c.ep, plan.etp = c.etp;
            if (c.dp * c.cp == 1 && plan.ExpertDataParallel() == 1) continue;
          }
          const int chunks = ShapeOf(schedule) == StageShape::kVShape ? 2 : vpp;
          if (base.framework == "torchtitan" && pp > 1) {
            // torchtitan splits its own way (the embedding and the output weigh one layer
            // each), whatever the layer count, its V schedules' 2 x PP stages too: the layout
            // it runs.
            const int64_t stages = int64_t{pp} * chunks;
            const int64_t layers = base.model.num_layers;
            c.layout = TorchTitanPipelineLayout(layers, stages, 1, 1);
            if (c.layout.empty()) {
              if (pruned != nullptr) ++*pruned;
              continue;
            }
            if (layers % stages == 0 && c.layout == TorchTitanPipelineLayout(layers, stages, 0, 0))
              c.layout.clear();
          } else if (!LayersSplitEvenly(base.model.num_layers, pp, chunks)) {
            // One chunk per rank: Megatron's first/last stage layer counts. Interleaved chunks:
            // a layout string (V-shaped schedules place their chunks themselves).
            if (chunks == 1) {
              const auto split = BalancedFirstLastStageLayers(base.model.num_layers, pp);
              if (split) {
                c.first_stage_layers = split->first;
                c.last_stage_layers = split->last;
              }
            } else if (ShapeOf(schedule) != StageShape::kVShape) {
              c.layout = BalancedPipelineLayout(base.model.num_layers, int64_t{pp} * vpp);
            }
            if (c.first_stage_layers < 0 && c.layout.empty()) {
              if (pruned != nullptr) ++*pruned;
              continue;
            }
          }
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

ParallelPlan Candidate::Sizes() const {
  ParallelPlan p;
  p.tp = tp;
  p.pp = pp;
  p.vpp = vpp;
  p.cp = cp;
  p.ep = ep;
  p.etp = etp;
  p.dp = dp;
  return p;
}

Job ApplyCandidate(const Job& base, const Candidate& c) {
  Job job = base;
  ParallelPlan& p = job.parallel;
  p.tp = c.tp;
  p.pp = c.pp;
  p.vpp = c.vpp;
  p.cp = c.cp;
  p.ep = c.ep;
  p.etp = c.etp;
  p.dp = c.dp;
  p.sequence_parallel = c.tp > 1;
  p.distributed_optimizer = c.distributed_optimizer;
  p.fsdp2 = c.fsdp2;
  p.fsdp_replicas = 1;  // the grid shards over every data-parallel GPU (no HSDP)
  p.layout = c.layout;
  p.first_stage_layers = c.first_stage_layers;
  p.last_stage_layers = c.last_stage_layers;
  p.pad_uneven_layers = false;
  TrainingSettings& t = job.training;
  t.micro_batch_size = c.micro_batch_size;
  t.recompute = RecomputeSpec{};
  t.recompute.granularity = c.recompute;
  if (c.recompute == RecomputeGranularity::kSelective) {
    // Each framework's selective policy, as its overrides print it: torchtitan's per-op
    // checkpointing, MaxText's save_qkv_proj, Megatron's core attention.
    if (base.framework == "torchtitan") {
      t.recompute.per_op_policy = true;
    } else if (base.framework == "maxtext") {
      t.recompute = *MaxTextRematPolicy(kMaxTextSelectivePolicy);
    } else {
      t.recompute.modules = {"core_attn"};
    }
  }
  if (c.recompute == RecomputeGranularity::kFull) t.recompute.num_layers = 1;
  t.pipeline_schedule = c.schedule;
  return job;
}

}  // namespace sextant
