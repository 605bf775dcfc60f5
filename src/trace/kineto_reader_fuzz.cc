// libFuzzer target: arbitrary bytes as a Kineto trace. Any input must either parse (possibly
// as truncated, with a warning) and analyse, or be rejected with a UserError; a crash,
// sanitizer report or other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/graph_capture.h"
#include "trace/kineto_reader.h"
#include "trace/trace_report.h"
#include "util/compressed_file.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    sextant::InputText input = sextant::InputText::FromString(bytes);
    sextant::TraceData trace = sextant::ParseKinetoTrace(input, "fuzz.json");
    // The trace is its own capture trace too: graph matching runs on hostile input as well.
    sextant::TraceData capture = sextant::ParseKinetoTrace(input, "capture.json");
    sextant::AttributeGraphReplays(trace, {&capture});
    sextant::ReportOptions options;
    sextant::AnalyzeTrace(trace, options, 0);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
