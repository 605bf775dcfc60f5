// A PyTorch CUDA/HIP caching-allocator snapshot (`torch.cuda.memory._snapshot()`), read from
// its pickle into typed structures. Both schemas are accepted: the current one (blocks with
// `address` and `frames`, `device_traces` entries with `time_us`, `allocator_settings`) and the
// PyTorch ~2.0 one (blocks carrying `history: [{addr, real_size, frames}]`, no timestamps),
// and the bare list of segments that torch.cuda.memory_snapshot() and PyTorch 1.13 produce.
// Stack frames and whole stacks are interned, since the same few hundred frames repeat across
// tens of thousands of trace entries.
//
// Pickle memo references: PyTorch's pickles share frame dicts and frame lists (and strings)
// between blocks and trace entries, never a segment, block, trace or trace entry, each of
// which is a fresh dict or list. A memo reference that names one of those again names the
// same Python object, so it is the same memory or the same event: it is counted once, at its
// first place, and the rest are tallied in `repeated_references`. This keeps the model, and
// the time to build it, linear in the pickle's size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/compressed_file.h"

namespace sextant {

struct StackFrame {
  std::string name;
  std::string filename;
  int64_t line = 0;
};

using FrameId = int32_t;
using StackId = int32_t;  // 0 is the empty stack

enum class BlockState { kActiveAllocated, kActivePendingFree, kInactive, kUnknown };
const char* BlockStateName(BlockState state);

struct SnapshotBlock {
  int64_t address = 0;
  int64_t size = 0;
  int64_t requested_size = 0;
  BlockState state = BlockState::kUnknown;
  StackId stack = 0;  // where it was allocated (legacy: the last `history` entry)
};

struct SnapshotSegment {
  int64_t device = 0;
  int64_t address = 0;
  int64_t total_size = 0;
  int64_t allocated_size = 0;
  int64_t active_size = 0;
  int64_t requested_size = 0;
  int64_t stream = 0;
  std::string segment_type;  // "large" or "small"
  bool is_expandable = false;
  std::vector<SnapshotBlock> blocks;
};

// Actions recorded by the allocator's trace ring buffer (c10 TraceEntry::Action).
enum class TraceAction {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kSnapshot,
  kOom,
  kUnknown,  // a newer action this reader does not know; kept, and ignored by the replay
};
const char* TraceActionName(TraceAction action);

struct TraceEntry {
  TraceAction action = TraceAction::kUnknown;
  int64_t addr = 0;
  int64_t size = 0;
  int64_t stream = 0;
  int64_t time_us = -1;      // -1 when the snapshot has no timestamps
  int64_t device_free = -1;  // oom only: bytes the driver reported free
  StackId stack = 0;
};

struct MemorySnapshot {
  std::string source;  // file name, for messages
  std::vector<StackFrame> frames;
  std::vector<std::vector<FrameId>> stacks;  // stacks[0] is empty
  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<TraceEntry>> device_traces;                   // index = device
  std::vector<std::pair<std::string, std::string>> allocator_settings;  // rendered values
  bool legacy_schema = false;  // blocks carried `history` instead of `frames`
  // Segments, blocks, traces and trace entries skipped as repeats of one already read.
  int64_t repeated_references = 0;

  // Devices that appear in segments or traces, ascending.
  std::vector<int64_t> Devices() const;
  const std::vector<FrameId>& Stack(StackId id) const { return stacks[id]; }
};

// Builds the model from pickle bytes. Errors name the file, the byte offset (pickle errors)
// or the key path ("segments[3].blocks[0].size") of what is wrong.
MemorySnapshot ParseMemorySnapshot(std::string_view pickle_bytes, const std::string& source);

// Reads a snapshot file, plain, gzip- or zstd-compressed (detected by its magic bytes). A
// compressed stream cut short is an error: a pickle cannot be read in part.
MemorySnapshot LoadMemorySnapshot(const std::string& path,
                                  const InputLimits& limits = {.max_bytes = int64_t{1} << 34});

}  // namespace sextant
