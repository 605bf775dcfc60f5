#include "projection/design_space.h"

#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "job/job_validation.h"
#include "job/test_job.h"
#include "parallel/pipeline_layout.h"
#include "util/error.h"

namespace sextant {
namespace {

Job OneNode(const std::string& model, int gpus_per_node) {
  return TestJob(model).Cluster("MI300X", 1, gpus_per_node).SequenceLength(1024).GlobalBatch(4);
}

size_t CountAll(const Job& base, const DesignSpace& space) {
  size_t n = 0;
  for (const LayerShape& s : EnumerateLayerShapes(base, space))
    n += EnumerateCandidates(base, space, s).size();
  return n;
}

TEST(DesignSpaceTest, FactorisesTheWorldAsTheGridRulesSay) {
  // 4 GPUs, one micro-batch size, no recompute choice, distributed optimizer only, 1F1B and
  // interleaved: (TP, PP, VPP) = TP 1: PP 1 | PP 2 x VPP 1,2 | PP 4 x VPP 1,2   (5)
  //                               TP 2: PP 1 | PP 2 x VPP 1,2                 (3)
  //                               TP 4: PP 1                                   (1)
  DesignSpace space;
  space.micro_batch_sizes = {1};
  space.max_vpp = 2;
  space.max_cp = 1;
  space.recompute = {RecomputeGranularity::kNone};
  space.distributed_optimizer = {true};
  space.fsdp2 = false;
  space.schedules = {ScheduleKind::k1F1B, ScheduleKind::kInterleaved1F1B};
  const Job base = OneNode("llama3.2_1B", 4);
  EXPECT_EQ(EnumerateLayerShapes(base, space).size(), 3u);  // TP 1, 2, 4
  EXPECT_EQ(CountAll(base, space), 9u);
  // Every point multiplies out to the world and runs the schedule its VPP allows.
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s)) {
      EXPECT_EQ(c.tp * c.pp * c.cp * c.dp, 4);
      EXPECT_EQ(c.etp, c.tp);  // dense model: Megatron's ETP = TP
      EXPECT_EQ(c.schedule, c.vpp > 1 ? ScheduleKind::kInterleaved1F1B : ScheduleKind::k1F1B);
    }
  }
  // Two micro-batch sizes and three recompute choices multiply the shapes and points.
  space.micro_batch_sizes = {1, 2};
  space.recompute = {RecomputeGranularity::kNone, RecomputeGranularity::kSelective,
                     RecomputeGranularity::kFull};
  EXPECT_EQ(CountAll(base, space), 9u * 2 * 3);
}

// Megatron refuses FSDP2 with PP or EP; torchtitan and MaxText always shard over DP and run
// only their own schedules.
TEST(DesignSpaceTest, ShardingAndSchedulesFollowTheFramework) {
  DesignSpace space;
  space.micro_batch_sizes = {1};
  space.recompute = {RecomputeGranularity::kNone};
  Job base = OneNode("llama3.2_1B", 8);
  base.framework = "megatron";
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s)) {
      if (c.fsdp2) {
        EXPECT_EQ(c.pp, 1);
      }
    }
  }
  base.framework = "torchtitan";
  size_t points = 0;
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s)) {
      ++points;
      EXPECT_FALSE(c.distributed_optimizer);
      EXPECT_EQ(c.fsdp2, c.dp * c.cp > 1);
      EXPECT_TRUE(c.schedule == ScheduleKind::k1F1B || c.schedule == ScheduleKind::kGPipe ||
                  c.schedule == ScheduleKind::kInterleaved1F1B ||
                  c.schedule == ScheduleKind::kZbvFormatted ||
                  c.schedule == ScheduleKind::kDualPipeV)
          << ScheduleKindName(c.schedule);
    }
  }
  EXPECT_GT(points, 0u);
  base.framework = "maxtext";
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s)) {
      EXPECT_EQ(c.schedule, ScheduleKind::k1F1B);
    }
  }
}

TEST(DesignSpaceTest, DistributedOptimizerOnlyWhereItShards) {
  // Both optimizers offered: "on" is dropped where DP x CP = 1 (nothing to shard over).
  DesignSpace space;
  space.micro_batch_sizes = {1};
  space.max_vpp = 1;
  space.max_cp = 1;
  space.recompute = {RecomputeGranularity::kNone};
  space.schedules = {ScheduleKind::k1F1B};
  const Job base = OneNode("llama3.2_1B", 4);
  // (TP, PP) = (1,1) (1,2) (1,4) (2,1) (2,2) (4,1), all "off"; DP > 1 and so "on" as well
  // for (1,1) (1,2) (2,1), and FSDP2 for those without pipeline parallelism, (1,1) (2,1):
  // Megatron refuses --use-torch-fsdp2 with PP > 1.
  EXPECT_EQ(CountAll(base, space), 6u + 3u + 2u);
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s)) {
      if (c.fsdp2) {
        EXPECT_FALSE(c.distributed_optimizer);
        EXPECT_GT(c.dp * c.cp, 1);
        EXPECT_TRUE(ApplyCandidate(base, c).parallel.fsdp2);
      }
    }
  }
}

TEST(DesignSpaceTest, MoeShapesTryExpertSizesAndBothExpertTensorSplits) {
  DesignSpace space;
  space.micro_batch_sizes = {1};
  space.max_cp = 1;
  space.recompute = {RecomputeGranularity::kNone};
  const Job base = OneNode("mixtral_8x7B", 8);
  std::set<std::tuple<int, int, int>> seen;  // (TP, EP, ETP)
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) seen.insert({s.tp, s.ep, s.etp});
  // TP 1: EP 1,2,4,8 x ETP 1; TP 2, 4, 8: EP 1,2,4,8 x ETP 1 and TP.
  EXPECT_EQ(seen.size(), 4u + 3 * 8u);
  EXPECT_TRUE(seen.count({8, 8, 8}));
  EXPECT_TRUE(seen.count({4, 2, 1}));
}

TEST(DesignSpaceTest, VShapeSchedulesRunTwoChunksPerRank) {
  DesignSpace space;
  space.micro_batch_sizes = {1};
  space.max_cp = 1;
  space.recompute = {RecomputeGranularity::kNone};
  space.distributed_optimizer = {true};
  space.fsdp2 = false;
  const Job base = OneNode("llama3.2_1B", 4);
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s)) {
      if (c.schedule == ScheduleKind::kZbvFormatted || c.schedule == ScheduleKind::kDualPipeV) {
        EXPECT_EQ(c.vpp, 2);
        EXPECT_GT(c.pp, 1);
      }
      if (c.pp == 1) {
        EXPECT_EQ(c.schedule, ScheduleKind::k1F1B);
      }
    }
  }
}

TEST(DesignSpaceTest, UnevenLayersGetFirstAndLastStageCountsLayoutsOrArePruned) {
  // DeepSeek-V3's 61 layers on 64 nodes: PP > 1 only through first/last stage counts with one
  // chunk per rank, and through a balanced layout string with interleaved chunks; every point
  // built validates; the rest is counted as pruned.
  DesignSpace space;
  space.micro_batch_sizes = {1};
  space.max_cp = 1;
  space.recompute = {RecomputeGranularity::kNone};
  space.distributed_optimizer = {true};
  space.fsdp2 = false;
  const Job base =
      TestJob("deepseek_v3").Cluster("MI300X", 64).SequenceLength(4096).GlobalBatch(1024);
  int64_t pruned = 0, uneven = 0, layouts = 0;
  for (const LayerShape& s : EnumerateLayerShapes(base, space)) {
    for (const Candidate& c : EnumerateCandidates(base, space, s, &pruned)) {
      if (c.pp == 1) continue;
      ++uneven;
      if (c.vpp == 1 || ShapeOf(c.schedule) == StageShape::kVShape) {
        EXPECT_TRUE(c.layout.empty());
        EXPECT_EQ(
            c.first_stage_layers + c.last_stage_layers + (c.pp - 2) * ((61 + c.pp - 1) / c.pp), 61);
      } else {
        // 61 layers + embedding + loss = 63 slots over PP x VPP stages, e.g. PP 16 x VPP 2:
        // the embedding + 1 layer, 1 layer, 29 x 2 layers, 1 layer + the loss.
        ++layouts;
        EXPECT_EQ(c.first_stage_layers, -1);
        EXPECT_EQ(c.layout, BalancedPipelineLayout(61, int64_t{c.pp} * c.vpp));
        if (c.pp == 16 && c.vpp == 2) {
          EXPECT_EQ(c.layout.substr(0, 13), "Et*1|t*1|t*2|");
          EXPECT_EQ(c.layout.substr(c.layout.size() - 10), "|t*2|t*1,L");
        }
      }
      // Other rules (EP x ETP x PP against the world, ...) may refuse the point; the layer
      // split never does.
      std::vector<std::string> notes;
      try {
        ValidateJob(ApplyCandidate(base, c), Provenance(), false, notes);
      } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()).find("layers"), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GT(uneven, 0);
  EXPECT_GT(layouts, 0);
  EXPECT_GT(pruned, 0);  // PP 32 / 64 / ... that leave an end empty, PP x VPP above 63
}

TEST(DesignSpaceTest, ApplyCandidateSetsEverySearchedSetting) {
  Job base = OneNode("llama3.1_8B", 8);
  base.parallel.fsdp2 = true;
  base.parallel.layout = "Et|tL";
  Candidate c;
  c.tp = 2, c.pp = 2, c.vpp = 2, c.cp = 2, c.dp = 1;
  c.micro_batch_size = 2;
  c.recompute = RecomputeGranularity::kFull;
  c.distributed_optimizer = true;
  c.schedule = ScheduleKind::kInterleaved1F1B;
  const Job job = ApplyCandidate(base, c);
  EXPECT_EQ(job.parallel.WorldSize(), 8);
  EXPECT_TRUE(job.parallel.sequence_parallel);
  EXPECT_TRUE(job.parallel.distributed_optimizer);
  EXPECT_FALSE(job.parallel.fsdp2);
  EXPECT_TRUE(job.parallel.layout.empty());
  EXPECT_EQ(job.training.micro_batch_size, 2);
  EXPECT_EQ(job.training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(job.training.recompute.num_layers, 1);
  EXPECT_EQ(job.training.pipeline_schedule, ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(job.training.global_batch_size, base.training.global_batch_size);
}

}  // namespace
}  // namespace sextant
