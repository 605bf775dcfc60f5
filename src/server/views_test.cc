#include "server/views.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sextant
