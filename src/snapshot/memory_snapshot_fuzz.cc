// libFuzzer target: any pickle that parses must either become a snapshot model and survive
// every analysis and report, or be refused with a UserError.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "snapshot/memory_snapshot.h"
#include "snapshot/snapshot_analysis.h"
#include "snapshot/snapshot_report.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    sextant::MemorySnapshot s = sextant::ParseMemorySnapshot(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    sextant::SnapshotAnalysis a = sextant::AnalyzeSnapshot(s);
    (void)sextant::SnapshotText(s, a);
    (void)sextant::SnapshotJson(s, a).dump(-1, ' ', false,
                                           nlohmann::json::error_handler_t::replace);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
