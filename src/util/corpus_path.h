// Where tests and benchmarks find the shared corpus of real inputs. The build compiles in
// <source>/../shared/corpus (CMake cache SEXTANT_CORPUS_DIR); the environment variable of the
// same name overrides it at run time, so one build can be pointed at another copy, or at a
// missing one to check that corpus tests skip instead of failing.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace sextant {

inline std::string CorpusDir() {
  const char* env = std::getenv("SEXTANT_CORPUS_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(SEXTANT_CORPUS_DIR);
}

// `relative` below the corpus root, e.g. CorpusPath("validation/published_runs.csv").
inline std::string CorpusPath(std::string_view relative) {
  return CorpusDir() + "/" + std::string(relative);
}

inline bool CorpusAvailable() {
  std::error_code ec;
  return std::filesystem::is_directory(CorpusDir(), ec);
}

}  // namespace sextant

// In a GoogleTest body or SetUp(): ends the test as skipped, saying where the corpus was
// looked for, when the corpus is absent. A corpus that is present but lacks a file the test
// needs still fails the test.
#define SEXTANT_SKIP_WITHOUT_CORPUS()                                         \
  do {                                                                        \
    if (!::sextant::CorpusAvailable()) {                                      \
      GTEST_SKIP() << "shared corpus not found at " << ::sextant::CorpusDir() \
                   << " (set SEXTANT_CORPUS_DIR to its location)";            \
    }                                                                         \
  } while (0)
