// Reads PyTorch profiler (Kineto) Chrome-trace JSON — plain, gzip or zstd — into a TraceData.
// Handles the modern and the 2021 schemas, integer or fractional timestamps, string pids
// and tids, CUDA and ROCm argument sets, ids above INT64_MAX, a top-level object or a bare
// event array, and missing optional sections (corpus/README-traces.md lists the variants).
#pragma once

#include <optional>
#include <string>

#include "trace/event_store.h"
#include "util/compressed_file.h"

namespace sextant {

// Loads, parses and links one trace file. Throws UserError, naming the file and the byte
// offset, if the input is not JSON or not a Kineto trace. A file cut short (truncated
// compression stream or JSON) yields the events read before the cut, with
// TraceData::truncated set and a warning.
TraceData ReadKinetoTrace(const std::string& path);

// Reads a trace front to back in chunks, a compressed file decoded as it is read, so that
// memory holds one chunk of its text plus the events (0.2x a 1.1 GB text, where loading it
// whole holds all of it). nullopt where the file needs ParseKinetoTrace on its whole text:
// small, cut short, not laid out one event per line as Kineto writes, or not a Kineto trace
// (which ParseKinetoTrace then says precisely). Throws UserError for a file that cannot be
// read or decoded at all, as InputText::Load does.
std::optional<TraceData> StreamKinetoTrace(const std::string& path);

// Parses text already in memory; `path` is only used in messages. Also links (BuildLinks).
// `try_chunks` false: the caller already tried StreamKinetoTrace on this text, so a large
// text is not tried in chunks again.
TraceData ParseKinetoTrace(const InputText& input, const std::string& path, bool try_chunks = true);

// "12.345" (microseconds, as Kineto prints them) -> 12345 nanoseconds, exactly for up to
// three decimals and rounded beyond. Returns false if `token` is not a JSON number.
bool ParseMicrosecondsToNs(std::string_view token, int64_t* ns);

}  // namespace sextant
