// Every trace in corpus/traces loads; the files that are not Kineto traces (rocprofv3 output,
// an execution trace, Primus's parsed per-module DeepSeek-V4 times, the inference captures'
// run lists) are rejected with a clear message (README-traces.md says which they are).
#include <gtest/gtest.h>

#include <filesystem>

#include "trace/kineto_reader.h"
#include "trace/trace_report.h"
#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

TEST(AllCorpusTest, EveryTraceLoadsAndIsAnalysed) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  size_t loaded = 0, rejected = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(CorpusPath("traces"))) {
    std::string path = entry.path().string();
    bool json = path.size() > 5 && (path.ends_with(".json") || path.ends_with(".json.gz"));
    if (!entry.is_regular_file() || !json) continue;
    bool not_kineto = path.find("rocprofv3/") != std::string::npos ||
                      path.find("benchmark_simple_add_et.json") != std::string::npos ||
                      path.find("primus-deepseek-v4-parsed/") != std::string::npos ||
                      // the inference captures' run lists (file, batch size, mode per capture)
                      path.find("capture_traces/execution_details.json") != std::string::npos;
    try {
      TraceData t = ReadKinetoTrace(path);
      EXPECT_FALSE(not_kineto) << path;
      EXPECT_FALSE(t.truncated) << path;
      EXPECT_GT(t.total_events, 0u) << path;
      RankReport r = AnalyzeTrace(t, ReportOptions{}, 0);
      EXPECT_EQ(r.timeline.computation_ns + r.timeline.exposed_communication_ns +
                    r.timeline.exposed_memcpy_ns + r.timeline.idle_ns,
                r.timeline.total_ns)
          << path;
      ++loaded;
    } catch (const UserError& e) {
      EXPECT_TRUE(not_kineto) << path << ": " << e.what();
      const std::string what = e.what();
      EXPECT_TRUE(what.find("not a Kineto trace") != std::string::npos ||
                  what.find("not a trace: none of its") != std::string::npos)
          << what;
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, 6u);
  EXPECT_GE(loaded, 55u);
}

}  // namespace
}  // namespace sextant
