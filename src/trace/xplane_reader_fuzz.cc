// libFuzzer target: arbitrary bytes as an XPlane (XSpace protobuf) profile. Any input must
// either parse and analyse or be refused with a UserError; a crash, sanitizer report or other
// exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/trace_report.h"
#include "trace/xplane_reader.h"
#include "util/compressed_file.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    sextant::InputText input = sextant::InputText::FromString(bytes);
    sextant::ReportOptions options;
    for (const sextant::TraceData& trace : sextant::ParseXPlane(input, "fuzz.xplane.pb")) {
      sextant::AnalyzeTrace(trace, options, 0);
    }
  } catch (const sextant::UserError&) {
  }
  return 0;
}
