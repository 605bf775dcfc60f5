// Rows of a `sextant validate` CSV with hostile sizes: one UserError naming the file, the
// line and the column, never a signed overflow (a micro-batch of 2^62 died with SIGFPE).
#include "projection/published_run.h"

#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "job/framework_defaults.h"
#include "util/csv_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

using ::testing::HasSubstr;

const std::string kHeader =
    "id,model,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,moe_experts,gpu,"
    "gpus_per_node,num_gpus,tp,pp,dp,cp,ep,vpp,micro_batch,global_batch,precision,recompute,"
    "optimizer_sharding,metric_name,metric_value,notes\n";

// One GPT-style row (not in the model library: its dimensions come from the row), written on
// line 2 of runs.csv with `micro`, `global` and `hidden` in their columns.
std::string ErrorOfRow(const std::string& hidden, const std::string& micro,
                       const std::string& global, const std::string& seq = "2048") {
  const std::string row = "megatron-01,GPT-1.7B,24," + hidden + ",,," + ",51200," + seq +
                          ",,A100-80GB,8,32,1,1,32,1,1,," + micro + "," + global +
                          ",fp16,,none,tflops_per_gpu,137,\n";
  const CsvTable table = CsvTable::Parse(kHeader + row, "runs.csv");
  try {
    const PublishedRun run = ReadPublishedRun(table, 0);
    return run.job ? "(no error)" : "(no job: " + run.reason + ")";
  } catch (const UserError& e) {
    return e.what();
  }
}

TEST(PublishedRunSizes, AnOrdinaryRowBuildsAJob) {
  EXPECT_EQ(ErrorOfRow("2304", "1", "512"), "(no error)");
}

TEST(PublishedRunSizes, OutOfRangeCellsNameFileLineAndColumn) {
  EXPECT_EQ(ErrorOfRow("2304", "4611686018427387904", "512"),
            "runs.csv:2: 'micro_batch': 4611686018427387904 is out of range: must be between 1 "
            "and 16777216");
  EXPECT_EQ(ErrorOfRow("4611686018427387904", "1", "512"),
            "runs.csv:2: 'hidden': 4611686018427387904 is out of range: must be between 1 and "
            "1048576");
  EXPECT_THAT(ErrorOfRow("2304", "1", "-8"), HasSubstr("'global_batch': -8 is out of range"));
  EXPECT_THAT(ErrorOfRow("2304", "1", "1e300"),
              HasSubstr("runs.csv:2: 'global_batch': 1e300 is out of range"));
  // In range one by one, too large together: 2^32 sequences x 2^24 tokens = 2^56 tokens.
  EXPECT_THAT(ErrorOfRow("2304", "1", "4294967296", "16777216"),
              HasSubstr("tokens per step = global_batch=4294967296 (global_batch, runs.csv:2) x "
                        "seq_len=16777216 (seq_len, runs.csv:2) exceeds 2^53"));
}

TEST(PublishedRunSizes, AStatedDimensionMustBeANumberInRange) {
  EXPECT_EQ(ErrorOfRow("abc", "1", "512"), "runs.csv:2: 'hidden': 'abc' is not a number");
  EXPECT_THAT(ErrorOfRow("0", "1", "512"),
              HasSubstr("runs.csv:2: 'hidden': 0 is out of range: must be between 1"));
  EXPECT_THAT(ErrorOfRow("-4096", "1", "512"), HasSubstr("'hidden': -4096 is out of range"));
}

// The same row with one cell replaced (column names as in kHeader).
std::string ErrorOfRowWith(const std::string& column, const std::string& value) {
  const CsvTable base = CsvTable::Parse(
      kHeader +
          "megatron-01,GPT-1.7B,24,2304,,,,51200,2048,,A100-80GB,8,32,1,1,32,1,1,,1,512,"
          "fp16,,none,tflops_per_gpu,137,\n",
      "runs.csv");
  std::string row;
  for (const std::string& name : base.header()) {
    row += (row.empty() ? "" : ",") + (name == column ? value : base.Get(0, name));
  }
  try {
    const PublishedRun run = ReadPublishedRun(CsvTable::Parse(kHeader + row + "\n", "runs.csv"), 0);
    return run.job ? "(no error)" : "(no job: " + run.reason + ")";
  } catch (const UserError& e) {
    return e.what();
  }
}

// A measurement is positive and finite; sizes are whole; the precision names a format; a row
// has an id and at least one GPU. Each is refused at its cell, never silently replaced.
TEST(PublishedRunSizes, ImpossibleCellsAreRefusedAtTheirCell) {
  EXPECT_EQ(ErrorOfRowWith("metric_value", "137"), "(no error)");
  EXPECT_EQ(ErrorOfRowWith("metric_value", "-137"),
            "runs.csv:2: 'metric_value': -137 is not a measurement: must be above 0");
  EXPECT_THAT(ErrorOfRowWith("metric_value", "0"), HasSubstr("0 is not a measurement"));
  EXPECT_EQ(ErrorOfRowWith("metric_value", "nan"),
            "runs.csv:2: 'metric_value': 'nan' is not a number");
  EXPECT_THAT(ErrorOfRowWith("metric_value", "inf"), HasSubstr("'inf' is not a number"));
  EXPECT_EQ(ErrorOfRowWith("global_batch", "512.5"),
            "runs.csv:2: 'global_batch': 512.5 is not a whole number");
  EXPECT_THAT(ErrorOfRowWith("precision", "fp13"),
              HasSubstr("runs.csv:2: 'precision': 'fp13' names no number format"));
  EXPECT_EQ(ErrorOfRowWith("precision", "amp_bf16"), "(no error)");
  EXPECT_EQ(ErrorOfRowWith("num_gpus", "0"), "runs.csv:2: 'num_gpus': 0 GPUs: must be at least 1");
  EXPECT_EQ(ErrorOfRowWith("id", " "), "runs.csv:2: 'id': empty: every row needs an id");
}

TEST(PublishedRunSizes, TwoRowsWithOneIdAreRefusedAtTheSecond) {
  const std::string row =
      ",GPT-1.7B,24,2304,,,,51200,2048,,A100-80GB,8,32,1,1,32,1,1,,1,512,fp16,,none,"
      "tflops_per_gpu,137,\n";
  const CsvTable t = CsvTable::Parse(kHeader + "a" + row + "b" + row + "a" + row, "runs.csv");
  try {
    CheckDistinctIds(t);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "runs.csv:4: 'id': 'a' is also the id of line 2");
  }
  EXPECT_NO_THROW(CheckDistinctIds(CsvTable::Parse(kHeader + "a" + row + "b" + row, "r.csv")));
}

const std::string kFactHeader =
    "id,model,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,moe_experts,gpu,"
    "gpus_per_node,num_gpus,tp,pp,dp,cp,ep,vpp,micro_batch,global_batch,precision,recompute,"
    "optimizer_sharding,metric_name,metric_value,notes,framework,framework_version,attention,"
    "overlap,fp8_recipe,compile,data\n";

// The same with the MoE columns the DeepSeek rows fill.
const std::string kMoeFactHeader =
    kFactHeader.substr(0, kFactHeader.size() - 1) + ",moe_topk,moe_ffn_hidden,shared_experts\n";

// Llama-3.1-8B on 8 H100 under any id, with the fact columns given.
PublishedRun RowWithFacts(const std::string& id, const std::string& facts,
                          const std::string& precision = "bf16", const std::string& sharding = "") {
  const std::string row = id +
                          ",Llama 3.1 8B,32,4096,14336,32,8,128256,8192,,H100-80GB,8,8,1,1,8,1,1,,"
                          "1,8," +
                          precision + ",," + sharding + ",tokens_per_sec_per_gpu,1000,," + facts +
                          "\n";
  return ReadPublishedRun(CsvTable::Parse(kFactHeader + row, "runs.csv"), 0);
}

// Llama-3.1-8B on H100s at the given layout (Megatron-Core defaults).
PublishedRun LlamaLayoutRow(int tp, int pp, int dp, const std::string& vpp, int micro_batch,
                            int global_batch) {
  const std::string row = fmt::format(
      "l-1,Llama 3.1 8B,32,4096,14336,32,8,128256,8192,,H100-80GB,8,{},{},{},{},1,1,{},{},{},bf16,"
      ",,tokens_per_sec_per_gpu,1000,,megatron-core,,flash,,,,\n",
      tp * pp * dp, tp, pp, dp, vpp, micro_batch, global_batch);
  return ReadPublishedRun(CsvTable::Parse(kFactHeader + row, "runs.csv"), 0);
}

bool HasNote(const PublishedRun& r, const std::string& text) {
  if (!r.job) return false;
  for (const std::string& note : r.job->notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

// A row gets the checks a configuration gets: a layout Megatron refuses is not projected, with
// the reason; one Megatron runs differently from how it reads is run as Megatron runs it, and
// said: virtual stages without a pipeline are dropped (arguments.py), a global batch that is no
// whole number of micro-batches keeps the whole ones.
TEST(PublishedRunFacts, ARowsLayoutIsCheckedAsAConfigurationIs) {
  const PublishedRun tp3 = LlamaLayoutRow(3, 1, 2, "", 1, 8);
  EXPECT_FALSE(tp3.job);
  EXPECT_EQ(tp3.reason, "tp=3 (runs.csv:2) does not divide num_attention_heads=32");
  const PublishedRun vpp = LlamaLayoutRow(1, 1, 8, "12", 1, 64);
  ASSERT_TRUE(vpp.job) << vpp.reason;
  EXPECT_EQ(vpp.job->parallel.vpp, 1);
  EXPECT_TRUE(HasNote(vpp, "VPP 12 with PP 1: no virtual stages"));
  const PublishedRun rounded = LlamaLayoutRow(1, 1, 8, "", 2, 100);
  ASSERT_TRUE(rounded.job) << rounded.reason;
  EXPECT_EQ(rounded.job->training.global_batch_size, 96);  // 6 micro-batches of 2 x DP 8
  EXPECT_TRUE(HasNote(rounded, "global batch 100 is not a whole number of micro-batches"));
}

TEST(PublishedRunFacts, TheIdDecidesNothing) {
  // Two rows that differ only in their ids build the same job.
  const PublishedRun a = RowWithFacts("torchtitan-T1-01", "megatron-core,,flash,,,,");
  const PublishedRun b = RowWithFacts("nemo2407-h100-99", "megatron-core,,flash,,,,");
  ASSERT_TRUE(a.job && b.job) << a.reason << b.reason;
  EXPECT_EQ(a.framework, "megatron-core");
  EXPECT_EQ(b.framework, "megatron-core");
  EXPECT_FALSE(a.job->parallel.fsdp2);  // a "torchtitan" id is not torchtitan
  EXPECT_EQ(a.job->parallel.distributed_optimizer, b.job->parallel.distributed_optimizer);
  EXPECT_EQ(a.job->training.overlap_grad_reduce, b.job->training.overlap_grad_reduce);
  EXPECT_EQ(a.flops, b.flops);
}

TEST(PublishedRunFacts, ColumnsOverrideTheFrameworkDefaults) {
  const PublishedRun titan = RowWithFacts("x-1", "torchtitan,,,,,true,real", "fp8");
  ASSERT_TRUE(titan.job) << titan.reason;
  EXPECT_TRUE(titan.job->parallel.fsdp2);              // torchtitan default
  EXPECT_TRUE(titan.job->training.fused_elementwise);  // compile = true
  EXPECT_TRUE(titan.job->training.compiled_graph);     // the layers compiled,
  EXPECT_FALSE(titan.job->training.compiled_loss);     // not the loss
  EXPECT_FALSE(titan.job->training.cross_entropy_loss_fusion);
  EXPECT_TRUE(titan.job->training.precision.fp8_current_scaling);  // torchao tensorwise default
  const PublishedRun delayed = RowWithFacts("x-2", "torchtitan,,,,delayed,false,", "fp8");
  ASSERT_TRUE(delayed.job) << delayed.reason;
  EXPECT_FALSE(delayed.job->training.precision.fp8_current_scaling);
  EXPECT_FALSE(delayed.job->training.fused_elementwise);
  EXPECT_FALSE(delayed.job->training.compiled_graph);
  const PublishedRun old = RowWithFacts("x-3", "megatron-lm,2021 (SC'21 PTD-P),,none,,,");
  ASSERT_TRUE(old.job) << old.reason;
  EXPECT_FALSE(old.job->training.flash_attention);  // 2021 default: materialised
  EXPECT_EQ(old.job->training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_FALSE(old.job->training.overlap_grad_reduce);
  EXPECT_EQ(old.flops, FlopConvention::kNarayanan2021);
  const PublishedRun stated = RowWithFacts("x-4", "megatron-lm,,flash,grad,,,");
  ASSERT_TRUE(stated.job) << stated.reason;
  EXPECT_TRUE(stated.job->training.flash_attention);  // stated beats the 2022 default
  EXPECT_TRUE(stated.job->training.overlap_grad_reduce);
  EXPECT_FALSE(stated.job->training.overlap_param_gather);
}

// The fp8_recipe column takes Megatron-Core's recipe names, read as a Megatron config's
// --fp8-recipe is: MXFP8 GEMMs scale per 32-value block, with no amax pass.
TEST(PublishedRunFacts, Fp8RecipesAreMegatronsRecipes) {
  const PublishedRun mx = RowWithFacts("x-1", "megatron-core,,,,mxfp8,,", "fp8");
  ASSERT_TRUE(mx.job) << mx.reason;
  EXPECT_EQ(mx.job->training.precision.gemm, DType::kMXFP8);
  EXPECT_FALSE(mx.job->training.precision.fp8_current_scaling);
  // A precision column that says mxfp8 is the recipe where the recipe column is empty.
  const PublishedRun said = RowWithFacts("x-2", "megatron-core,,,,,,", "mxfp8");
  ASSERT_TRUE(said.job) << said.reason;
  EXPECT_EQ(said.job->training.precision.gemm, DType::kMXFP8);
  const PublishedRun blocks = RowWithFacts("x-3", "megatron-core,,,,blockwise,,", "fp8");
  ASSERT_TRUE(blocks.job) << blocks.reason;
  EXPECT_EQ(blocks.job->training.precision.gemm, DType::kFP8);
  EXPECT_TRUE(blocks.job->training.precision.fp8_blockwise);
  EXPECT_TRUE(blocks.job->training.precision.fp8_current_scaling);
  // A recipe no framework names falls back to the framework's default and says so.
  const PublishedRun odd = RowWithFacts("x-4", "megatron-core,,,,nvfp8,,", "fp8");
  ASSERT_TRUE(odd.job) << odd.reason;
  EXPECT_EQ(odd.job->training.precision.gemm, DType::kFP8);
  bool said_odd = false;
  for (const std::string& n : odd.job->notes) said_odd |= n.find("'nvfp8'") != std::string::npos;
  EXPECT_TRUE(said_odd);
}

TEST(PublishedRunFacts, UnknownFrameworkIsSaidAndFp4IsRefused) {
  const PublishedRun r = RowWithFacts("x-5", "brand-new-stack,,,,,,");
  ASSERT_TRUE(r.job) << r.reason;
  EXPECT_EQ(r.framework, "megatron-core");
  bool said = false;
  for (const std::string& n : r.job->notes) said |= n.find("brand-new-stack") != std::string::npos;
  EXPECT_TRUE(said);
  const PublishedRun fp4 = RowWithFacts("x-6", "primus-megatron,,,,mxfp4,,", "mxfp4");
  EXPECT_FALSE(fp4.job);
  EXPECT_EQ(fp4.reason, "FP4 GEMMs are not modelled");
}

// Qwen3-30B-A3B on one MI355X node under `framework`, with `notes` as the row's text; `tp` x
// `ep` must divide the 8 GPUs unless the test wants the run refused or corrected.
PublishedRun MoeRowWithNotes(const std::string& framework, const std::string& notes, int tp = 1,
                             int ep = 8) {
  const std::string header =
      kFactHeader.substr(0, kFactHeader.size() - 1) + ",moe_topk,moe_ffn_hidden\n";
  const std::string row = fmt::format(
      "m-1,Qwen3-30B-A3B,48,2048,,32,4,151936,4096,128,MI355X,8,8,{},1,{},1,{},,4,{},bf16,full,,"
      "tokens_per_sec_per_gpu,1000,\"{}\",{},,,,,,,8,768\n",
      tp, 8 / tp, ep, 4 * (8 / tp), notes, framework);
  return ReadPublishedRun(CsvTable::Parse(header + row, "runs.csv"), 0);
}

TEST(PublishedRunFacts, AStatedCapacityFactorIsReadFromTheRowsText) {
  // MaxText reads capacity_factor only in dense_matmul (layers/moe.py): the experts run on
  // capacity slots behind one-hot dispatch/combine einsums.
  const PublishedRun maxtext = MoeRowWithNotes("maxtext", "Token-dropping, capacity factor 4.");
  ASSERT_TRUE(maxtext.job) << maxtext.reason;
  EXPECT_DOUBLE_EQ(maxtext.job->model.moe.capacity_factor, 4.0);
  EXPECT_EQ(maxtext.job->training.moe_expert_compute, MoeExpertCompute::kCapacitySlots);
  const PublishedRun spelled = MoeRowWithNotes("maxtext", "dense_matmul, capacity_factor 1.25");
  ASSERT_TRUE(spelled.job) << spelled.reason;
  EXPECT_DOUBLE_EQ(spelled.job->model.moe.capacity_factor, 1.25);
  // Megatron drops tokens beyond capacity but keeps its sorted grouped GEMM.
  const PublishedRun megatron = MoeRowWithNotes("megatron-core", "capacity factor 1.5");
  ASSERT_TRUE(megatron.job) << megatron.reason;
  EXPECT_EQ(megatron.job->training.moe_expert_compute, MoeExpertCompute::kGroupedTokens);
  const PublishedRun worded = MoeRowWithNotes("maxtext", "dense, capacity factor of .5");
  ASSERT_TRUE(worded.job) << worded.reason;
  EXPECT_DOUBLE_EQ(worded.job->model.moe.capacity_factor, 0.5);
  // A factor no one runs is not taken as one (nor cast to an integer).
  const PublishedRun huge = MoeRowWithNotes("maxtext", "capacity factor 999999");
  ASSERT_TRUE(huge.job) << huge.reason;
  EXPECT_EQ(huge.job->training.moe_expert_compute, MoeExpertCompute::kGroupedTokens);
  const PublishedRun dropless = MoeRowWithNotes("maxtext", "dropless grouped GEMM");
  ASSERT_TRUE(dropless.job) << dropless.reason;
  EXPECT_EQ(dropless.job->training.moe_expert_compute, MoeExpertCompute::kGroupedTokens);
  EXPECT_DOUBLE_EQ(dropless.job->model.moe.capacity_factor, 0.0);
}

TEST(PublishedRunFacts, MegatronBridgeLeavesTheAllToAllExposedUnlessStated) {
  // WorkloadBaseConfig.moe_a2a_overlap defaults to False in Megatron-Bridge's performance
  // scripts; an "ep" in the overlap column turns it on.
  const PublishedRun plain = MoeRowWithNotes("megatron-bridge", "");
  ASSERT_TRUE(plain.job) << plain.reason;
  EXPECT_TRUE(plain.job->training.deepep);
  EXPECT_FALSE(plain.job->training.ep_overlap);
}

// Megatron-Bridge 26.04's DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 sets moe_a2a_overlap
// (the stack's default leaves it off): a row of that recipe - DeepSeek-V3 on B200 in MXFP8 at
// global batch 4096 - overlaps the all-to-all and says why; the same row in BF16, at another
// global batch, in another version, or with its overlap column stated does not.
PublishedRun DeepSeekV3B200Row(const std::string& precision, const std::string& fp8_recipe,
                               int global_batch, const std::string& version,
                               const std::string& overlap = "", const std::string& recompute = "") {
  const std::string row = fmt::format(
      "b-1,DeepSeek-V3-671B,61,7168,18432,128,MLA,129280,4096,256,B200,8,256,1,8,32,1,32,2,1,{},"
      "{},{},,tokens_per_sec_per_gpu,3328,\"\",megatron-bridge,{},flash,\"{}\",{},,mock,8,2048,"
      "1\n",
      global_batch, precision, recompute, version, overlap, fp8_recipe);
  return ReadPublishedRun(CsvTable::Parse(kMoeFactHeader + row, "runs.csv"), 0);
}

TEST(PublishedRunFacts, MegatronBridgeRecipesThatOverlapTheAllToAllAreFollowed) {
  const PublishedRun recipe = DeepSeekV3B200Row("mxfp8", "mxfp8", 4096, "26.04.01");
  ASSERT_TRUE(recipe.job) << recipe.reason;
  EXPECT_TRUE(recipe.job->training.ep_overlap);
  // moe_a2a_overlap is Megatron's combined 1F1B with delayed weight gradients
  // (scripts/performance/utils/overrides.py, _set_moe_a2a_overlap_overrides).
  EXPECT_TRUE(recipe.job->training.ep_a2a_combined_1f1b);
  EXPECT_TRUE(recipe.job->training.delay_wgrad_compute);
  bool said = false;
  for (const std::string& note : recipe.job->notes) {
    said = said || note.find("DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2") != std::string::npos;
  }
  EXPECT_TRUE(said);
  for (const PublishedRun& other :
       {DeepSeekV3B200Row("bf16", "", 4096, "26.04.01"),
        DeepSeekV3B200Row("mxfp8", "mxfp8", 2048, "26.04.01"),
        DeepSeekV3B200Row("mxfp8", "mxfp8", 4096, "25.09"),
        DeepSeekV3B200Row("mxfp8", "mxfp8", 4096, "26.04.01", "grad,param")}) {
    ASSERT_TRUE(other.job) << other.reason;
    EXPECT_FALSE(other.job->training.ep_overlap);
  }
}

// The same presets recompute modules the row leaves unstated: V2 (4096) mla_up_proj and mlp,
// V1 (2048) mla_up_proj alone; a stated recompute column wins, and another stack gets none.
TEST(PublishedRunFacts, MegatronBridgeRecipesRecomputeWhatTheRowLeavesUnstated) {
  const PublishedRun v2 = DeepSeekV3B200Row("mxfp8", "mxfp8", 4096, "26.04.01");
  ASSERT_TRUE(v2.job) << v2.reason;
  EXPECT_EQ(v2.job->training.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_EQ(v2.job->training.recompute.modules, (std::vector<std::string>{"mla_up_proj", "mlp"}));
  const PublishedRun v1 = DeepSeekV3B200Row("mxfp8", "mxfp8", 2048, "26.04.01");
  ASSERT_TRUE(v1.job) << v1.reason;
  EXPECT_EQ(v1.job->training.recompute.modules, (std::vector<std::string>{"mla_up_proj"}));
  EXPECT_FALSE(v1.job->training.ep_overlap);
  const PublishedRun stated = DeepSeekV3B200Row("mxfp8", "mxfp8", 4096, "26.04.01", "", "full");
  ASSERT_TRUE(stated.job) << stated.reason;
  EXPECT_EQ(stated.job->training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_TRUE(stated.job->training.recompute.modules.empty());
  const PublishedRun old = DeepSeekV3B200Row("mxfp8", "mxfp8", 4096, "25.09");
  ASSERT_TRUE(old.job) << old.reason;
  EXPECT_EQ(old.job->training.recompute.granularity, RecomputeGranularity::kNone);
}

// "full recompute of 9 layer IDs" without the list: the count is a fact, which layers is not.
// One layer per model chunk in model order is assumed and said: on Primus's tuned DeepSeek-V3
// layout that is its own list (examples/moe_package, 0,1,2,4,6,8,10,12,14). A count beyond
// the model recomputes every layer; an id beyond it is refused at its cell.
PublishedRun DeepSeekV3Pp16Row(const std::string& recompute, const std::string& notes) {
  const std::string row = fmt::format(
      "m-1,DeepSeek-V3-671B,61,7168,18432,128,MLA,129280,4096,256,MI355X,8,1024,1,16,64,1,8,2,2,"
      "8192,fp8,\"{}\",distributed optimizer,iteration_time_s,21.68,\"{}\",primus-megatron,,flash,"
      "\"grad,param\",,,mock,8,2048,1\n",
      recompute, notes);
  return ReadPublishedRun(CsvTable::Parse(kMoeFactHeader + row, "runs.csv"), 0);
}

TEST(PublishedRunFacts, ACountOfRecomputedLayerIdsRecomputesOneLayerPerChunkFirst) {
  const PublishedRun listed =
      DeepSeekV3Pp16Row("full recompute of 3 layer IDs (0, 4, 9)", "MTP off");
  ASSERT_TRUE(listed.job) << listed.reason;
  EXPECT_EQ(listed.job->training.recompute.layer_ids, (std::vector<int64_t>{0, 4, 9}));
  const PublishedRun counted =
      DeepSeekV3Pp16Row("full recompute of 9 layer IDs", "MTP off, layout Et|t|(tt|)*29,tL");
  ASSERT_TRUE(counted.job) << counted.reason;
  EXPECT_EQ(counted.job->training.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(counted.job->training.recompute.layer_ids,
            (std::vector<int64_t>{0, 1, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_TRUE(HasNote(counted, "9 layers whose ids the row does not list: 0,1,2,4,6,8,10,12,14"));
  // 40 over 32 chunks: every chunk's first layer, then the second layer of the first 8 chunks
  // that have one (chunks 2-9 hold layers 2-3, 4-5, ..., 16-17).
  const PublishedRun forty =
      DeepSeekV3Pp16Row("full recompute of 40 layer IDs", "MTP off, layout Et|t|(tt|)*29,tL");
  ASSERT_TRUE(forty.job) << forty.reason;
  EXPECT_EQ(forty.job->training.recompute.layer_ids.size(), 40u);
  EXPECT_EQ(forty.job->training.recompute.layer_ids[3], 3);
  const PublishedRun huge =
      DeepSeekV3Pp16Row("full recompute of 99999999999999999999999 layer IDs", "MTP off");
  ASSERT_TRUE(huge.job) << huge.reason;
  EXPECT_EQ(huge.job->training.recompute.layer_ids.size(), 61u);
  try {
    DeepSeekV3Pp16Row("full recompute of 1 layer IDs (99999999999999999999999)", "MTP off");
    ADD_FAILURE() << "a layer id beyond the model was accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "runs.csv:2: 'recompute': layer id '99999999999999999999999' is not a layer of "
                 "the 61-layer model");
  }
}

// Numbers in a row's text too long for their type are read as "all" or ignored, never an
// internal error: a per-stage recompute count beyond the model recomputes every layer; a
// network rate no network has is not taken.
TEST(PublishedRunFacts, OversizedNumbersInTheRowsTextAreBoundedNotFatal) {
  const PublishedRun per_stage =
      DeepSeekV3Pp16Row("full recompute, 99999999999999999999999 layers per stage", "MTP off");
  ASSERT_TRUE(per_stage.job) << per_stage.reason;
  EXPECT_EQ(per_stage.job->training.recompute.method, RecomputeMethod::kBlock);
  EXPECT_EQ(per_stage.job->training.recompute.num_layers, 61);
  const PublishedRun plain = DeepSeekV3Pp16Row("", "MTP off");
  const PublishedRun network =
      DeepSeekV3Pp16Row("", "MTP off, " + std::string(400, '9') + " Gb/s per GPU");
  ASSERT_TRUE(plain.job && network.job) << plain.reason << network.reason;
  EXPECT_EQ(network.job->cluster.gpu.nic_bandwidth, plain.job->cluster.gpu.nic_bandwidth);
}

// Megatron-Bridge's FP8 recipes keep the weights in FP8 (mixed_precision.py v0.4.2:
// fp8_param_gather = True for delayed, current scaling and MXFP8; not for blockwise), so a
// row of that stack in FP8 holds no 16-bit weight copy; BF16 rows and other stacks do.
TEST(PublishedRunFacts, MegatronBridgeFp8RecipesKeepFp8PrimaryWeights) {
  for (const auto& [precision, recipe] :
       std::vector<std::pair<std::string, std::string>>{{"mxfp8", "mxfp8"}, {"fp8", ""}}) {
    const PublishedRun fp8 = DeepSeekV3B200Row(precision, recipe, 2048, "26.04.01");
    ASSERT_TRUE(fp8.job) << fp8.reason;
    EXPECT_TRUE(fp8.job->training.precision.fp8_param_gather) << precision;
  }
  const PublishedRun blockwise = DeepSeekV3B200Row("fp8", "blockwise", 2048, "26.04.01");
  ASSERT_TRUE(blockwise.job) << blockwise.reason;
  EXPECT_FALSE(blockwise.job->training.precision.fp8_param_gather);
  const PublishedRun bf16 = DeepSeekV3B200Row("bf16", "", 2048, "26.04.01");
  ASSERT_TRUE(bf16.job) << bf16.reason;
  EXPECT_FALSE(bf16.job->training.precision.fp8_param_gather);
  const PublishedRun core = RowWithFacts("x-1", "megatron-core,,flash,,mxfp8,,", "mxfp8");
  ASSERT_TRUE(core.job) << core.reason;
  EXPECT_FALSE(core.job->training.precision.fp8_param_gather);
}

TEST(PublishedRunFacts, MaxTextTrainsNoMultiTokenPredictionUnlessConfigured) {
  // DeepSeek-V3 was released with one MTP module; MaxText's base.yml sets mtp_num_layers: 0,
  // Megatron-Bridge's DeepSeek-V3 recipes train it.
  auto row = [&](const char* framework) {
    const std::string text = fmt::format(
        "d-1,DeepSeek-V3-671B,61,7168,18432,128,MLA,129280,4096,256,MI355X,8,64,1,1,64,1,8,,4,"
        "256,bf16,full,,tokens_per_sec_per_gpu,900,\"\",{},,flash,,,,mock,8,2048,1\n",
        framework);
    return ReadPublishedRun(CsvTable::Parse(kMoeFactHeader + text, "runs.csv"), 0);
  };
  const PublishedRun maxtext = row("maxtext");
  ASSERT_TRUE(maxtext.job) << maxtext.reason;
  EXPECT_EQ(maxtext.job->model.mtp_num_layers, 0);
  const PublishedRun bridge = row("megatron-bridge");
  ASSERT_TRUE(bridge.job) << bridge.reason;
  EXPECT_EQ(bridge.job->model.mtp_num_layers, 1);
}

TEST(PublishedRunFacts, MegatronBridgeFusesTheLossThroughTransformerEngine) {
  // GPTModelProvider.cross_entropy_loss_fusion = True; the performance scripts set
  // cross_entropy_fusion_impl = "te". Primus's language_model.yaml leaves the loss unfused.
  const PublishedRun bridge = MoeRowWithNotes("megatron-bridge", "");
  ASSERT_TRUE(bridge.job) << bridge.reason;
  EXPECT_TRUE(bridge.job->training.cross_entropy_loss_fusion);
  EXPECT_EQ(bridge.job->training.cross_entropy_impl, CrossEntropyImpl::kTransformerEngine);
  const PublishedRun primus = MoeRowWithNotes("primus-megatron", "");
  ASSERT_TRUE(primus.job) << primus.reason;
  EXPECT_FALSE(primus.job->training.cross_entropy_loss_fusion);
}

TEST(PublishedRunFacts, MegatronBridgeReducesGradientsInBf16) {
  // Every pretraining recipe of Megatron-Bridge's performance scripts sets
  // grad_reduce_in_fp32 = False: the DDP gradient buffer is bf16, 2 bytes per parameter, not
  // Megatron's fp32 (arguments.py forces fp32 accumulation for bf16), which Primus keeps.
  const PublishedRun bridge = MoeRowWithNotes("megatron-bridge", "");
  ASSERT_TRUE(bridge.job) << bridge.reason;
  EXPECT_EQ(bridge.job->training.precision.main_grads, DType::kBF16);
  const PublishedRun primus = MoeRowWithNotes("primus-megatron", "");
  ASSERT_TRUE(primus.job) << primus.reason;
  EXPECT_EQ(primus.job->training.precision.main_grads, DType::kFP32);
  const PublishedRun core = MoeRowWithNotes("megatron-core", "");
  ASSERT_TRUE(core.job) << core.reason;
  EXPECT_EQ(core.job->training.precision.main_grads, DType::kFP32);
}

TEST(PublishedRunFacts, TurboSyncFreeMoeRunsOnDeepEp) {
  // Primus's sync-free MoE (any stage) turns Turbo's DeepEP on; a Primus row that names
  // neither dispatches with the all-to-all.
  const PublishedRun plain = MoeRowWithNotes("primus-megatron", "baseline");
  ASSERT_TRUE(plain.job) << plain.reason;
  EXPECT_FALSE(plain.job->training.deepep);
  for (const char* notes : {"sync-free stage 2, use_turbo_grouped_gemm",
                            "'best configuration', turbo_sync_free_moe_stage 1"}) {
    const PublishedRun sync_free = MoeRowWithNotes("primus-megatron", notes);
    ASSERT_TRUE(sync_free.job) << sync_free.reason;
    EXPECT_TRUE(sync_free.job->training.deepep) << notes;
    // Primus overlaps Turbo's DeepEP dispatch and combine unless the row's overlap column
    // says otherwise (it is empty here).
    EXPECT_TRUE(sync_free.job->training.ep_overlap) << notes;
  }
}

TEST(PublishedRunFacts, ExpertGemmsLaunchAsTheRowOrItsStackSays) {
  // Megatron stacks run TE's GroupedLinear (one GEMM per expert over 4 streams), torchtitan
  // one torch._grouped_mm kernel; a Primus row naming Turbo's grouped GEMM, or a sync-free
  // stage that requires it, runs the grouped kernel.
  const PublishedRun primus = MoeRowWithNotes("primus-megatron", "baseline");
  ASSERT_TRUE(primus.job) << primus.reason;
  EXPECT_EQ(primus.job->training.expert_gemm_launch, ExpertGemmLaunch::kStreamLoop);
  const PublishedRun titan = MoeRowWithNotes("torchtitan", "");
  ASSERT_TRUE(titan.job) << titan.reason;
  EXPECT_EQ(titan.job->training.expert_gemm_launch, ExpertGemmLaunch::kGroupedKernel);
  for (const char* notes : {"sync-free stage 2", "use_turbo_grouped_gemm", "Turbo grouped GEMM on",
                            "turbo_sync_free_moe_stage 3"}) {
    const PublishedRun run = MoeRowWithNotes("primus-megatron", notes);
    ASSERT_TRUE(run.job) << run.reason;
    EXPECT_EQ(run.job->training.expert_gemm_launch, ExpertGemmLaunch::kGroupedKernel) << notes;
  }
  // Stage 1 does not need Turbo's grouped GEMM; a pipeline "stage 2" before the sync-free text
  // is not its stage; a flag set to false or negated is not a grouped kernel.
  for (const char* notes : {"+ sync-free MoE stage 1 (VPP 3)", "PP stage 2 layout, sync-free",
                            "use_turbo_grouped_gemm: false", "use_turbo_grouped_gemm=0",
                            "no Turbo grouped GEMM", "async stage 2 copies; sync-free stage 1"}) {
    const PublishedRun run = MoeRowWithNotes("primus-megatron", notes);
    ASSERT_TRUE(run.job) << run.reason;
    EXPECT_EQ(run.job->training.expert_gemm_launch, ExpertGemmLaunch::kStreamLoop) << notes;
  }
}

TEST(PublishedRunFacts, ExpertTensorParallelismFollowsTheFrameworksRule) {
  // Megatron's validate_args sets expert_tensor_parallel_size to tensor_model_parallel_size
  // when it is not given; torchtitan's expert_tensor_parallel_degree defaults to 1.
  for (const char* megatron : {"nemo", "megatron-bridge", "primus-megatron", "megatron-core"}) {
    const PublishedRun run = MoeRowWithNotes(megatron, "", /*tp=*/2, /*ep=*/4);
    ASSERT_TRUE(run.job) << run.reason;
    EXPECT_EQ(run.job->parallel.etp, 2) << megatron;
  }
  // TP 2 x EP 8 = 16 does not divide 8 GPUs: the run must have set ETP to 1.
  const PublishedRun narrow = MoeRowWithNotes("megatron-core", "", /*tp=*/2, /*ep=*/8);
  ASSERT_TRUE(narrow.job) << narrow.reason;
  EXPECT_EQ(narrow.job->parallel.etp, 1);
  const PublishedRun titan = MoeRowWithNotes("torchtitan", "", /*tp=*/2, /*ep=*/4);
  ASSERT_TRUE(titan.job) << titan.reason;
  EXPECT_EQ(titan.job->parallel.etp, 1);
  const PublishedRun deepspeed = MoeRowWithNotes("megatron-deepspeed", "", /*tp=*/2, /*ep=*/4);
  ASSERT_TRUE(deepspeed.job) << deepspeed.reason;
  EXPECT_EQ(deepspeed.job->parallel.etp, 1);
}

}  // namespace
}  // namespace sextant

namespace sextant {
namespace {

// A row whose name names a library model but whose sizes differ keeps that model's
// architecture (Llama: SwiGLU, RMSNorm, untied embeddings) at the row's sizes, and says so;
// a name the library does not know is GPT-style, and says so too.
TEST(PublishedRunModels, ARowThatContradictsItsNamedModelKeepsTheFamilysArchitecture) {
  const std::string row =
      "t-01,Llama 3.1 8B,32,4097,14336,,8,128256,8192,,H100-80GB,8,8,1,1,8,1,1,,1,8,bf16,,,"
      "tokens_per_sec_per_gpu,1000,\n";
  const PublishedRun run = ReadPublishedRun(CsvTable::Parse(kHeader + row, "runs.csv"), 0);
  ASSERT_TRUE(run.job) << run.reason;
  EXPECT_EQ(run.job->model.hidden_size, 4097);
  EXPECT_TRUE(run.job->model.swiglu);
  EXPECT_TRUE(run.job->model.untie_embeddings_and_output_weights);
  EXPECT_EQ(run.job->model.num_attention_heads, 32);  // the family's, the row states none
  EXPECT_EQ(run.job->model.num_query_groups, 8);
  bool said = false;
  for (const auto& note : run.job->notes) {
    said = said || note.find("llama3.1_8B's architecture at the row's sizes (hidden 4097") !=
                       std::string::npos;
  }
  EXPECT_TRUE(said);

  const std::string unknown =
      "t-02,Zorblax-7B,32,4096,16384,32,32,50000,2048,,A100-80GB,8,8,1,1,8,1,1,,1,8,bf16,,,"
      "tokens_per_sec_per_gpu,1000,\n";
  const PublishedRun gpt = ReadPublishedRun(CsvTable::Parse(kHeader + unknown, "runs.csv"), 0);
  ASSERT_TRUE(gpt.job) << gpt.reason;
  EXPECT_FALSE(gpt.job->model.swiglu);
  bool gpt_said = false;
  for (const auto& note : gpt.job->notes) {
    gpt_said = gpt_said || note.find(
                               "'Zorblax-7B' is not in the library: built from the row's "
                               "sizes as a GPT-style model") != std::string::npos;
  }
  EXPECT_TRUE(gpt_said);
}

}  // namespace
}  // namespace sextant
