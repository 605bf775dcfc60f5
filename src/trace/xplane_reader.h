// Reads XLA profiler XSpace profiles (`*.xplane.pb`, plain or compressed: JAX, MaxText,
// TensorFlow) into the same event store as Kineto traces, one TraceData per GPU plane, so the
// GPU timeline, kernel and op tables work on JAX runs. Device events become GPU activities
// (copies by name, as TraceLens's JAX analyser classes them); the XLA op that ran each kernel
// (its `hlo_op` stat) becomes the op that launched it. Host threads are not read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/event_store.h"
#include "util/compressed_file.h"

namespace sextant {

// Whether a file's first bytes look like a serialized XSpace rather than JSON: protobuf
// field 1 (XSpace.planes), length-delimited (0x0a), and not whitespace before '{' or '['.
bool LooksLikeXPlane(std::string_view head);

// One TraceData per "/device:GPU:N" plane that holds events, in plane order, with rank = N.
// Throws UserError naming the file if it is not a valid XSpace or has no GPU events.
std::vector<TraceData> ReadXPlane(const std::string& path);
std::vector<TraceData> ParseXPlane(const InputText& input, const std::string& path);

}  // namespace sextant
