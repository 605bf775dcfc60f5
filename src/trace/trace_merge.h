// `trace merge`: writes one Chrome-trace JSON (optionally .gz/.zst) holding the events of
// many rank files, loadable in Perfetto. Every (file, pid) gets its own pid and every
// thread/stream its own tid, so ranks on different nodes (all with GPU pid 0..7) no longer
// collide; processes are renamed "rank R: <name>"; flow ids are made unique per file; and
// if the files' baseTimeNanoseconds differ, timestamps are shifted onto the earliest base.
#pragma once

#include <string>
#include <vector>

namespace sextant {

struct MergeSummary {
  size_t files = 0;
  size_t events_written = 0;
  size_t processes = 0;
  size_t threads = 0;
  std::vector<std::string> warnings;  // truncated inputs, skipped events
};

// Throws UserError if an input cannot be read or is not a Kineto trace, or the output cannot
// be written or is one of the inputs; then no output is left behind. Events of file i are
// labelled with its distributedInfo rank if present, else i.
MergeSummary MergeTraces(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace sextant
