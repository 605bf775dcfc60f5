// The graph-capture traces of a replay trace, as TraceLens's inference mode lays them out: a
// folder (capture_traces/) of capture traces, one per captured batch size and mode, indexed by
// an execution_details.json that lists them ([{"file": "bs_32_rank0.json.gz", "batch_size":
// 32, "mode": "FULL"}, ...]; TraceUtils/split_inference_trace_annotation.py writes it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sextant {

inline constexpr std::string_view kCaptureIndexName = "execution_details.json";

// The capture traces an argument of `trace report --capture` stands for: a trace file itself;
// the files an execution_details.json lists (next to it); or, for a folder, those its
// execution_details.json lists, else every trace file directly inside it. Throws UserError
// naming the file (and the entry) for an index that is not such a list or names a file that
// does not exist, and for a folder with no capture trace.
std::vector<std::string> CaptureTraceFiles(const std::string& path);

// Whether `folder` is a folder of capture traces as TraceLens lays them out: it holds an
// execution_details.json, or is named capture_traces.
bool IsCaptureFolder(const std::string& folder);

// The "file" entries of an execution_details.json's text, in order. `source` names the file
// in errors. Throws UserError for anything but a JSON list of objects each with a non-empty
// "file" string.
std::vector<std::string> ParseCaptureIndex(std::string_view text, const std::string& source);

}  // namespace sextant
