// libFuzzer target for the Primus pipeline-dump reader: arbitrary bytes as config.json (first
// byte even) or as a pp_rank file (odd), then the statistics over what parsed. Any outcome
// other than success or a UserError is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipeline/pp_dump_reader.h"
#include "pipeline/pp_dump_stats.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      sextant::ParsePrimusDumpConfig(text, "config.json");
    } else {
      sextant::PrimusDump dump;
      dump.config.pp_size = 1;
      dump.ranks.push_back(sextant::ParsePrimusDumpRank(text, "pp_rank_0.json", 0));
      sextant::AnalysePrimusDump(dump);
    }
  } catch (const sextant::UserError&) {
  }
  return 0;
}
