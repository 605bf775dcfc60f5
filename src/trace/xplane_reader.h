// Reads XLA profiler XSpace profiles (`*.xplane.pb`, plain or compressed: JAX, MaxText,
// TensorFlow) into the same event store as Kineto traces, one TraceData per GPU plane, so the
// GPU timeline, kernel and op tables work on JAX runs. Device events become GPU activities
// (copies by name, as TraceLens's JAX analyser classes them); the XLA op that ran each kernel
// (its `hlo_op` stat) becomes the op that launched it. Host threads are not read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_store.h"
#include "util/compressed_file.h"

namespace sextant {

// Whether a file's first bytes look like a serialized XSpace rather than JSON: protobuf
// field 1 (XSpace.planes), length-delimited (0x0a), and not whitespace before '{' or '['.
bool LooksLikeXPlane(std::string_view head);

// What a profile may hold for its size, checked on the protobuf wire format before anything is
// built from it (protobuf turns a 2-byte empty message into an object of 50-200 bytes, and the
// reader turns a device event into several records). Real profiles stay far below each limit:
// the corpus's device events take 27-83 bytes each (at least 16 on average is asked), its
// messages 11-39 bytes each (4), and a host writes a plane per device it profiles (a few
// dozen at most; 1,024 allowed).
inline constexpr size_t kMaxXPlanePlanes = 1024;
// Device-plane events: at most kFreeXPlaneGpuEvents plus one per kMinBytesPerXPlaneGpuEvent
// bytes of the file.
inline constexpr size_t kFreeXPlaneGpuEvents = 65'536;
inline constexpr size_t kMinBytesPerXPlaneGpuEvent = 16;
// Every message protobuf would build (planes, lines, events, stats, metadata entries, the
// profiler's warnings, fields of no known meaning): at most kFreeXPlaneMessages plus one per
// kMinBytesPerXPlaneMessage bytes.
inline constexpr size_t kFreeXPlaneMessages = 1'000'000;
inline constexpr size_t kMinBytesPerXPlaneMessage = 4;
// Warnings of one kind about the GPUs of a file (no HLO, no launch events, clamped times):
// the first ones in full, the rest counted in one line.
inline constexpr size_t kMaxXPlaneWarningsOfOneKind = 3;

// One TraceData per "/device:GPU:N" plane that holds events, in plane order, with rank = N.
// Throws UserError naming the file if it is not a valid XSpace or has no GPU events.
std::vector<TraceData> ReadXPlane(const std::string& path);
std::vector<TraceData> ParseXPlane(const InputText& input, const std::string& path);

}  // namespace sextant
