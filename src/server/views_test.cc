#include "server/views.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline/pp_dump_reader.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void Touch(const fs::path& p, const std::string& text = "{}") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(ViewsTest, KindsByContentAndName) {
  const fs::path dir =
      fs::temp_directory_path() / ("sextant_views_kind_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Touch(dir / "dump" / "config.json");
  Touch(dir / "dump" / "pp_rank_0.json");
  EXPECT_EQ(ViewKindOf((dir / "dump").string()), "pipeline dump");
  EXPECT_EQ(ViewKindOf((dir).string()), "");
  EXPECT_EQ(ViewKindOf("exp/llama.YAML"), "experiment config");
  EXPECT_EQ(ViewKindOf("t.toml"), "experiment config");
  EXPECT_EQ(ViewKindOf("rank0.pt.trace.json.gz"), "trace");
  EXPECT_EQ(ViewKindOf("jax.xplane.pb"), "trace");
  EXPECT_EQ(ViewKindOf("snap.pickle"), "memory snapshot");
  EXPECT_EQ(ViewKindOf("notes.txt"), "");
  fs::remove_all(dir);
}

// A named directory is searched; a dump's own files belong to its view, and a symbolic link
// that leads outside the named directory is not served.
TEST(ViewsTest, SearchesNamedDirectoriesAndSkipsLinksOutOfThem) {
  const fs::path base = fs::temp_directory_path() / ("sextant_views_" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path dir = base / "served";
  Touch(dir / "dump" / "config.json");
  Touch(dir / "dump" / "pp_rank_0.json");
  Touch(dir / "traces" / "rank0.json");
  Touch(dir / "exp.yaml", "x: 1\n");
  Touch(dir / "readme.txt");
  Touch(base / "outside" / "secret.json");
  fs::create_symlink(base / "outside" / "secret.json", dir / "leak.json");
  fs::create_directory_symlink(base / "outside", dir / "leakdir");
  fs::create_symlink(dir / "exp.yaml", dir / "inside_link.yaml");
  std::vector<std::string> notes;
  const std::vector<View> views = FindViews({dir.string()}, &notes);
  std::vector<std::string> names;
  for (const View& v : views) names.push_back(v.name + " (" + v.kind + ")");
  EXPECT_THAT(names, ::testing::UnorderedElementsAre(
                         "dump (pipeline dump)", "traces/rank0.json (trace)",
                         "exp.yaml (experiment config)", "inside_link.yaml (experiment config)"));
  std::string all_notes;
  for (const auto& n : notes) all_notes += n + "\n";
  EXPECT_THAT(all_notes, HasSubstr("leak.json: a symbolic link out of"));
  EXPECT_THAT(all_notes, HasSubstr("leakdir: a symbolic link out of"));
  EXPECT_THROW(FindViews({(base / "missing").string()}, &notes), UserError);
  fs::remove_all(base);
}

// A named directory is searched 4 levels down (files in served/1/2/3/ are found, not those in
// served/1/2/3/4/); what lies deeper is said, so a tree of configs does not look fully served.
TEST(ViewsTest, FoldersTooDeepToSearchAreSaid) {
  const fs::path base =
      fs::temp_directory_path() / ("sextant_views_deep_" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path dir = base / "served";
  Touch(dir / "1" / "2" / "3" / "shallow.yaml", "x: 1\n");
  Touch(dir / "1" / "2" / "3" / "MI300X" / "deep.yaml", "x: 1\n");
  Touch(dir / "1" / "2" / "3" / "MI325X" / "deep.yaml", "x: 1\n");
  fs::create_directories(dir / "1" / "2" / "3" / "empty");
  std::vector<std::string> notes;
  std::vector<View> views = FindViews({dir.string()}, &notes);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].name, "1/2/3/shallow.yaml");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("2 deeper folders were not searched (the first: 1/2/3/MI300X)"));
  // Nothing within reach: the note says why, not that the folder holds nothing.
  fs::remove(dir / "1" / "2" / "3" / "shallow.yaml");
  notes.clear();
  views = FindViews({dir.string()}, &notes);
  EXPECT_TRUE(views.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("deeper folders were not searched"));
  // An empty folder at the limit holds nothing to miss.
  fs::remove_all(dir / "1" / "2" / "3" / "MI300X");
  fs::remove_all(dir / "1" / "2" / "3" / "MI325X");
  notes.clear();
  FindViews({dir.string()}, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("holds no file Sextant reads"));
  fs::remove_all(base);
}

// Primus's hardware files (examples/hardware_configs/) sit among the experiment configs but
// describe a cluster: a folder's views leave them out and a note says how many and what reads
// them.
TEST(ViewsTest, HardwareConfigsInAFolderAreNotListedAsJobs) {
  const fs::path base =
      fs::temp_directory_path() / ("sextant_views_hardware_" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path dir = base / "examples";
  Touch(dir / "hardware_configs" / "mi300x.yaml", "hardware_config:\n  node_bw: 448.0\n");
  Touch(dir / "hardware_configs" / "mi355x.yaml", "hardware_config:\n  node_bw: 537.6\n");
  Touch(dir / "megatron" / "llama.yaml", "modules:\n  pre_trainer:\n    framework: megatron\n");
  std::vector<std::string> notes;
  const std::vector<View> views = FindViews({dir.string()}, &notes);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].name, "megatron/llama.yaml");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("2 hardware configs are not listed (the first: "
                                  "hardware_configs/mi300x.yaml)"));
  EXPECT_THAT(notes[0], HasSubstr("--hardware-config"));
  fs::remove_all(base);
}

// config.json and pp_rank_N.json of a dump are JSON but not traces: named on their own, they
// stand for their dump, once however many of them are named.
TEST(ViewsTest, AFileOfAPipelineDumpStandsForTheDump) {
  const fs::path base =
      fs::temp_directory_path() / ("sextant_views_dumpfile_" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path dump = base / "pp8";
  Touch(dump / "config.json");
  Touch(dump / "pp_rank_0.json");
  Touch(dump / "pp_rank_1.json");
  Touch(base / "loose" / "config.json");  // no pp_rank_0.json beside it: not a dump
  Touch(base / "loose" / "pp_rank_x.json");
  EXPECT_EQ(PipelineDumpOfFile((dump / "pp_rank_1.json").string()), dump.string());
  EXPECT_EQ(PipelineDumpOfFile((dump / "config.json").string()), dump.string());
  EXPECT_EQ(PipelineDumpOfFile(dump.string()), "");
  EXPECT_EQ(PipelineDumpOfFile((base / "loose" / "config.json").string()), "");
  EXPECT_EQ(PipelineDumpOfFile((base / "loose" / "pp_rank_x.json").string()), "");
  std::vector<std::string> notes;
  const std::vector<View> views =
      FindViews({(dump / "config.json").string(), (dump / "pp_rank_0.json").string(),
                 (dump / "pp_rank_1.json").string()},
                &notes);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].kind, "pipeline dump");
  EXPECT_EQ(views[0].path, dump.string());
  fs::remove_all(base);
}

std::string RankTrace(int rank, int world_size) {
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": )" +
         std::to_string(world_size) + R"(}, "traceEvents": []})";
}

std::vector<std::string> Names(const std::vector<View>& views) {
  std::vector<std::string> names;
  for (const View& v : views) names.push_back(v.name);
  return names;
}

// The traces a searched folder holds directly are one view when they are the ranks of one run,
// as `trace report FOLDER` reads them; traces that record no rank, or a rank twice, are not.
TEST(ViewsTest, AFolderOfOneRunsRanksIsOneView) {
  const fs::path base =
      fs::temp_directory_path() / ("sextant_views_ranks_" + std::to_string(getpid()));
  fs::remove_all(base);
  Touch(base / "run" / "rank0.json", RankTrace(0, 2));
  Touch(base / "run" / "rank1.json.gz", RankTrace(1, 2));  // compression is by magic bytes
  Touch(base / "profiles" / "a.json", "{\"traceEvents\": []}");
  Touch(base / "profiles" / "b.json", "{\"traceEvents\": []}");
  Touch(base / "twice" / "x.json", RankTrace(0, 2));
  Touch(base / "twice" / "y.json", RankTrace(0, 2));
  std::vector<std::string> notes;
  std::vector<View> views = FindViews({base.string()}, &notes);
  EXPECT_EQ(Names(views),
            (std::vector<std::string>{"profiles/a.json", "profiles/b.json", "run (2 ranks)",
                                      "twice/x.json", "twice/y.json"}));
  EXPECT_EQ(views[2].path, (base / "run").string());
  // The folder named itself: named after it.
  views = FindViews({(base / "run").string()}, &notes);
  EXPECT_EQ(Names(views), (std::vector<std::string>{"run (2 ranks)"}));
  // A link out of the folder is not served, so the folder is not read as a whole.
  Touch(base / "outside" / "rank2.json", RankTrace(2, 3));
  Touch(base / "run3" / "rank0.json", RankTrace(0, 3));
  Touch(base / "run3" / "rank1.json", RankTrace(1, 3));
  fs::create_symlink(base / "outside" / "rank2.json", base / "run3" / "rank2.json");
  views = FindViews({(base / "run3").string()}, &notes);
  EXPECT_EQ(Names(views), (std::vector<std::string>{"rank0.json", "rank1.json"}));
  fs::remove_all(base);
}

// A replay trace is read with the capture folder beside it when that folder was given too
// (named, or inside a named folder); its capture traces are not views of their own. A file
// named twice is one view.
TEST(ViewsTest, AReplayTraceTakesItsCaptureFolderAndAFileNamedTwiceIsOneView) {
  const fs::path base =
      fs::temp_directory_path() / ("sextant_views_capture_" + std::to_string(getpid()));
  fs::remove_all(base);
  Touch(base / "replay.json", "{\"traceEvents\": []}");
  Touch(base / "capture_traces" / "bs_32_rank0.json", "{\"traceEvents\": []}");
  Touch(base / "capture_traces" / "execution_details.json", R"([{"file": "bs_32_rank0.json"}])");
  std::vector<std::string> notes;
  for (const std::vector<std::string>& named :
       {std::vector<std::string>{base.string()},
        std::vector<std::string>{(base / "replay.json").string(),
                                 (base / "capture_traces").string()}}) {
    const std::vector<View> views = FindViews(named, &notes);
    EXPECT_EQ(Names(views), (std::vector<std::string>{"replay.json + capture_traces"}));
  }
  // The replay alone: shown alone, and a note says how to add its captures.
  notes.clear();
  std::vector<View> views = FindViews({(base / "replay.json").string()}, &notes);
  EXPECT_EQ(Names(views), (std::vector<std::string>{"replay.json"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("name that folder too"));
  // The capture folder alone: its trace is a view, its index is not.
  views = FindViews({(base / "capture_traces").string()}, &notes);
  EXPECT_EQ(Names(views), (std::vector<std::string>{"bs_32_rank0.json"}));
  const std::string replay = (base / "replay.json").string();
  views = FindViews({replay, replay, (base / "." / "replay.json").string()}, &notes);
  EXPECT_EQ(views.size(), 1u);
  fs::remove_all(base);
}

// Runs of a pipeline view are named by their file, with as many directories as it takes to
// tell two of them apart.
TEST(ViewsTest, RunsWithTheSameFileNameAreToldApartByTheirDirectories) {
  using V = std::vector<std::string>;
  EXPECT_EQ(DistinctViewNames({"runs/a/pp8", "runs/b/pp8/", "x.yaml"}),
            (V{"a/pp8", "b/pp8", "x.yaml"}));
  EXPECT_EQ(DistinctViewNames({"MI300X/llama.yaml", "MI325X/llama.yaml"}),
            (V{"MI300X/llama.yaml", "MI325X/llama.yaml"}));
  // Only the names that collide grow; a deeper common directory is skipped past.
  EXPECT_EQ(DistinctViewNames({"/r/1/out/pp8", "/r/2/out/pp8", "/r/1/out/vpp2"}),
            (V{"1/out/pp8", "2/out/pp8", "vpp2"}));
  // One path is the tail of the other: the longer one goes up until it differs.
  EXPECT_EQ(DistinctViewNames({"a/pp8", "/x/a/pp8"}), (V{"a/pp8", "x/a/pp8"}));
  // The same path twice.
  EXPECT_EQ(DistinctViewNames({"pp8", "./pp8/"}), (V{"pp8", "pp8 (2)"}));
}

// A view is read once however often it is asked for (a 1 GB trace must not be re-read per
// request), and a file that cannot be read gives the same error every time.
TEST(ViewsTest, EachViewIsBuiltOnce) {
  const fs::path dir =
      fs::temp_directory_path() / ("sextant_views_once_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Touch(dir / "broken.json", "{\"traceEvents\": [");
  std::vector<std::string> notes;
  std::vector<View> views = FindViews({(dir / "broken.json").string()}, &notes);
  ASSERT_EQ(views.size(), 1u);
  std::string first;
  try {
    views[0].build();
  } catch (const UserError& e) {
    first = e.what();
  }
  EXPECT_THAT(first, HasSubstr("broken.json"));
  fs::remove_all(dir);  // the file is gone: only a kept result can answer now
  try {
    views[0].build();
    FAIL() << "the second request read the file again";
  } catch (const UserError& e) {
    EXPECT_EQ(first, e.what());
  }
}

TEST(ViewsTest, AConfigIsProjectedOnceAndDrawnWithItsProjection) {
  std::vector<std::string> notes;
  std::vector<View> views = FindViews(
      {std::string(SEXTANT_SOURCE_DIR) + "/examples/llama3.1_8B-BF16-pretrain.yaml"}, &notes);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].kind, "experiment config");
  const std::shared_ptr<const ViewContent> a = views[0].build();
  ASSERT_NE(a, nullptr);
  const nlohmann::json json = nlohmann::json::parse(a->json);
  EXPECT_EQ(json["runs"][0]["source"], "simulated");
  ASSERT_EQ(json["projections"].size(), 1u);
  EXPECT_EQ(json["projections"][0]["memory"]["verdict"], "FITS");
  EXPECT_THAT(a->html, HasSubstr("id=\"data\""));
  // Asked again, the page is the one built: the job is projected once.
  EXPECT_EQ(views[0].build(), a);
}

}  // namespace
}  // namespace sextant
