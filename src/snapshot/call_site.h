// Turning an allocation's stack into a call site a person recognises.
//
// The stacks PyTorch records mix C++ allocator internals, CPython interpreter frames and the
// user's Python code. Frames are first filtered the way PyTorch's own viewer
// (torch/utils/viz/MemoryViz.js, frameFilter) filters them; the call site is then the
// innermost remaining Python frame outside the torch package, so that every tensor allocated
// by `forward (model.py:39)` lands in one group whatever kernel allocated it.
#pragma once

#include <string>
#include <vector>

#include "snapshot/memory_snapshot.h"

namespace sextant {

// True for frames MemoryViz.js hides: unwinder/interpreter plumbing and dispatcher glue.
bool IsViewerHiddenFrame(const StackFrame& frame);

// The frames of `stack` that the viewer would show, innermost first, at most `limit`.
std::vector<FrameId> VisibleFrames(const MemorySnapshot& snapshot, StackId stack, size_t limit);

// The frame that names the call site: innermost visible Python frame outside torch/, else the
// innermost Python frame, else the innermost visible frame; -1 for an empty stack.
FrameId CallSiteFrame(const MemorySnapshot& snapshot, StackId stack);

// The visible frames from the call-site frame outwards (the caller's chain a person reads),
// at most `limit`; the allocator and dispatch frames inside the call site are left out.
std::vector<FrameId> SiteFrames(const MemorySnapshot& snapshot, StackId stack, size_t limit);

// "forward (cs336_basics/model.py:39)" — the last two path components keep labels short.
std::string FrameLabel(const StackFrame& frame);
std::string CallSiteLabel(const MemorySnapshot& snapshot, StackId stack);

}  // namespace sextant
