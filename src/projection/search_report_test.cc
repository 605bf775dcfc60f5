#include "projection/search_report.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

std::string Value(const PrimusOverrides& o, const std::string& key) {
  for (const auto& [k, v] : o.values) {
    if (k == key) return v;
  }
  return "<absent>";
}

// Megatron's argument names, which Primus's overrides and command line take as they are.
TEST(SearchReportTest, TheBestEntryAsPrimusOverrides) {
  SearchEntry e;
  e.candidate.tp = 2;
  e.candidate.pp = 4;
  e.candidate.vpp = 1;
  e.candidate.ep = 8;
  e.candidate.etp = 1;
  e.candidate.micro_batch_size = 2;
  e.candidate.recompute = RecomputeGranularity::kFull;
  e.candidate.distributed_optimizer = true;
  e.candidate.schedule = ScheduleKind::kZeroBubbleH1;
  const PrimusOverrides moe = ToPrimusOverrides(e, /*moe=*/true);
  EXPECT_EQ(Value(moe, "tensor_model_parallel_size"), "2");
  EXPECT_EQ(Value(moe, "sequence_parallel"), "true");  // TP > 1
  EXPECT_EQ(Value(moe, "pipeline_model_parallel_size"), "4");
  // VPP 1, and no other source of it or of an uneven split may survive from the experiment.
  EXPECT_EQ(Value(moe, "num_virtual_stages_per_pipeline_rank"), "null");
  EXPECT_EQ(Value(moe, "virtual_pipeline_model_parallel_size"), "null");
  EXPECT_EQ(Value(moe, "num_layers_per_virtual_pipeline_stage"), "null");
  EXPECT_EQ(Value(moe, "pipeline_model_parallel_layout"), "null");
  EXPECT_EQ(Value(moe, "decoder_first_pipeline_num_layers"), "null");
  EXPECT_EQ(Value(moe, "use_torch_fsdp2"), "false");  // Megatron refuses FSDP2 with PP
  EXPECT_EQ(Value(moe, "expert_model_parallel_size"), "8");
  EXPECT_EQ(Value(moe, "recompute_granularity"), "full");
  EXPECT_EQ(Value(moe, "recompute_method"), "uniform");
  // Primus's pipeline patch runs ZB-H1 as pp_algorithm zero-bubble (primus_pipeline.yaml).
  EXPECT_EQ(Value(moe, "patch_primus_pipeline"), "true");
  EXPECT_EQ(Value(moe, "pp_algorithm"), "zero-bubble");
  EXPECT_TRUE(moe.notes.empty());

  e.candidate.schedule = ScheduleKind::kDualPipeV;  // no pp_algorithm for it in Primus
  const PrimusOverrides dense = ToPrimusOverrides(e, /*moe=*/false);
  EXPECT_EQ(Value(dense, "expert_model_parallel_size"), "<absent>");
  EXPECT_EQ(Value(dense, "pp_algorithm"), "<absent>");
  ASSERT_EQ(dense.notes.size(), 1u);
  EXPECT_NE(dense.notes[0].find("dualpipev"), std::string::npos);
}

// torchtitan's job-config keys: its schedule class names, stages per rank through
// layers_per_stage beyond its default of two, and the batch split as torchtitan reads it.
TEST(SearchReportTest, TorchTitanAndMaxTextGetTheirOwnKeys) {
  SearchEntry e;
  e.candidate.tp = 4;
  e.candidate.pp = 2;
  e.candidate.vpp = 7;
  e.candidate.dp = 2;
  e.candidate.micro_batch_size = 2;
  e.candidate.fsdp2 = true;
  e.candidate.schedule = ScheduleKind::kInterleaved1F1B;
  const PrimusOverrides t = ToPrimusOverrides(e, false, "torchtitan", 80, 32);
  EXPECT_EQ(Value(t, "tensor_model_parallel_size"), "<absent>");
  EXPECT_EQ(Value(t, "parallelism.tensor_parallel_degree"), "4");
  EXPECT_EQ(Value(t, "parallelism.pipeline_parallel_schedule"), "Interleaved1F1B");
  // ceil((80 + 2) / 6) = 14 stages = PP 2 x VPP 7.
  EXPECT_EQ(Value(t, "parallelism.pipeline_parallel_layers_per_stage"), "6");
  EXPECT_EQ(Value(t, "parallelism.pipeline_parallel_microbatch_size"), "2");
  EXPECT_EQ(Value(t, "parallelism.data_parallel_shard_degree"), "2");
  EXPECT_EQ(Value(t, "training.local_batch_size"), "16");  // 32 over DP 2, split by the pipeline
  EXPECT_EQ(Value(t, "activation_checkpoint.mode"), "none");

  // MaxText: the mesh axes (EP its own axis, taken out of DP), the batch per device.
  e.candidate.pp = 1;
  e.candidate.vpp = 1;
  e.candidate.tp = 1;
  e.candidate.dp = 8;
  e.candidate.ep = 4;
  e.candidate.micro_batch_size = 1;
  e.candidate.schedule = ScheduleKind::k1F1B;
  e.candidate.recompute = RecomputeGranularity::kFull;
  const PrimusOverrides m = ToPrimusOverrides(e, true, "maxtext", 32, 64);
  EXPECT_EQ(Value(m, "ici_expert_parallelism"), "4");
  EXPECT_EQ(Value(m, "ici_fsdp_parallelism"), "2");
  // One micro-batch of 1 sequence per DP rank over 8 devices, 64 / (1 x DP 8) = 8 of them.
  EXPECT_EQ(Value(m, "per_device_batch_size"), "1");
  EXPECT_EQ(Value(m, "gradient_accumulation_steps"), "8");
  EXPECT_EQ(Value(m, "remat_policy"), "full");
  EXPECT_EQ(Value(m, "num_pipeline_microbatches"), "<absent>");
  // With a pipeline one step's batch (64 / 8 devices = 8 each) is split into 64 / (1 x DP 4) =
  // 16 pipeline micro-batches.
  e.candidate.pp = 2;
  e.candidate.dp = 4;
  const PrimusOverrides piped = ToPrimusOverrides(e, true, "maxtext", 32, 64);
  EXPECT_EQ(Value(piped, "per_device_batch_size"), "8");
  EXPECT_EQ(Value(piped, "gradient_accumulation_steps"), "1");
  EXPECT_EQ(Value(piped, "num_pipeline_microbatches"), "16");
  e.candidate.pp = 1;
  e.candidate.dp = 8;
  // On 8-GPU nodes the mesh is split: the ici_* axes fill one node (expert 4 x fsdp 2) and the
  // dcn_* axes span the nodes; MaxText refuses ici axes that multiply past a node.
  e.candidate.dp = 32;
  const PrimusOverrides nodes = ToPrimusOverrides(e, true, "maxtext", 32, 256, 8);
  EXPECT_EQ(Value(nodes, "ici_expert_parallelism"), "4");
  EXPECT_EQ(Value(nodes, "ici_fsdp_parallelism"), "2");
  EXPECT_EQ(Value(nodes, "dcn_expert_parallelism"), "1");
  EXPECT_EQ(Value(nodes, "dcn_fsdp_parallelism"), "4");
  EXPECT_EQ(Value(nodes, "dcn_data_parallelism"), "1");
}

// An uneven split over interleaved chunks is Megatron's pipeline_model_parallel_layout; its
// '|', '*' and ',' are quoted on the command line and in the YAML snippet.
TEST(SearchReportTest, ALayoutIsWrittenAndQuoted) {
  SearchEntry e;
  e.candidate.tp = 8;
  e.candidate.pp = 16;
  e.candidate.vpp = 2;
  e.candidate.schedule = ScheduleKind::kInterleaved1F1B;
  e.candidate.layout = "Et*1|t*1|(t*2|)*29t*1,L";
  e.full = true;
  e.iteration_time_ms = 100;
  e.estimated_iteration_ms = 100;
  const PrimusOverrides o = ToPrimusOverrides(e, /*moe=*/false);
  EXPECT_EQ(Value(o, "pipeline_model_parallel_layout"), "Et*1|t*1|(t*2|)*29t*1,L");
  // Megatron derives VPP from the layout's 32 stages over PP 16.
  EXPECT_EQ(Value(o, "num_virtual_stages_per_pipeline_rank"), "null");
  EXPECT_EQ(Value(o, "decoder_first_pipeline_num_layers"), "null");
  SearchResult r;
  r.top = {e};
  const std::string text = RenderSearchResult(r);
  EXPECT_NE(text.find(" --pipeline_model_parallel_layout 'Et*1|t*1|(t*2|)*29t*1,L'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    pipeline_model_parallel_layout: \"Et*1|t*1|(t*2|)*29t*1,L\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" --pipeline_model_parallel_size 16 "), std::string::npos);  // unquoted
  const SearchEntry back = SearchEntryFromJson(SearchEntryJson(e));
  EXPECT_EQ(back.candidate.layout, e.candidate.layout);
}

// What a person and a program read: the console keeps the top list in columns even for one
// row and names a layout "layout"; CSV/XLSX carry the layout string itself; a row standing for
// several schedules names them all; MaxText's sharding is its fsdp axis, not PyTorch's FSDP2.
TEST(SearchReportTest, TablesForPeopleAndForPrograms) {
  SearchEntry e;
  e.candidate.tp = 8;
  e.candidate.pp = 16;
  e.candidate.vpp = 2;
  e.candidate.schedule = ScheduleKind::kInterleaved1F1B;
  e.candidate.layout = "Et*1|t*1|(t*2|)*29t*1,L";
  e.full = true;
  e.tokens_per_s_per_gpu = 1234.5;
  SearchEntry z;
  z.candidate.pp = 4;
  z.candidate.dp = 2;
  z.candidate.fsdp2 = true;
  z.candidate.schedule = ScheduleKind::kZeroBubbleHeuristic;
  z.same_step_schedules = {ScheduleKind::kZeroBubbleH2};
  SearchResult r;
  r.top = {e};
  r.pareto = {e, z};
  const std::string text = RenderSearchResult(r);
  EXPECT_NE(text.find("Top configuration\n#  TP  PP"), std::string::npos) << text;
  EXPECT_EQ(text.find("layer split  layout"), std::string::npos) << text;  // not one per line
  EXPECT_NE(text.find("zerobubble-heuristic = zb-h2"), std::string::npos) << text;

  const std::vector<Table> tables = SearchResultTables(r);
  ASSERT_EQ(tables.size(), 2u);
  const Table& top = tables[0];
  EXPECT_EQ(top.title(), "Top configuration");
  EXPECT_EQ(std::get<std::string>(top.rows()[0][top.ColumnIndex("layer_split")]),
            "Et*1|t*1|(t*2|)*29t*1,L");
  const Table& pareto = tables[1];
  EXPECT_EQ(std::get<std::string>(pareto.rows()[1][pareto.ColumnIndex("schedule")]),
            "zerobubble-heuristic = zb-h2");
  EXPECT_EQ(std::get<std::string>(pareto.rows()[1][pareto.ColumnIndex("sharding")]), "fsdp2");
  r.framework = "maxtext";
  EXPECT_EQ(
      std::get<std::string>(SearchResultTables(r)[1].rows()[1][pareto.ColumnIndex("sharding")]),
      "fsdp");
  const SearchEntry back = SearchEntryFromJson(SearchEntryJson(z));
  EXPECT_EQ(back.same_step_schedules, z.same_step_schedules);
}

}  // namespace
}  // namespace sextant
