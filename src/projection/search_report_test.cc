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
  EXPECT_EQ(Value(moe, "num_virtual_stages_per_pipeline_rank"), "<absent>");  // VPP 1
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
  EXPECT_EQ(Value(o, "num_virtual_stages_per_pipeline_rank"), "<absent>");
  EXPECT_EQ(Value(o, "decoder_first_pipeline_num_layers"), "<absent>");
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

}  // namespace
}  // namespace sextant
