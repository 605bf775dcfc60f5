// Forward ops paired with the backward work autograd made of them. PyTorch's profiler records
// the autograd sequence number on a forward op ("Sequence number") and on the backward node
// that differentiates it; the backward node runs as "autograd::engine::evaluate_function: X"
// on the autograd thread. Paired as TraceLens pairs them (AMD-AGI/TraceLens @171dd747
// Trace2Tree/trace_to_tree.py, link_all_fwd_bwd_events): per sequence number, the
// evaluate_function event is the backward, and the forward is the latest-starting event with
// that number on another thread (the innermost op that recorded it; on the same start, the
// enclosing op, which TraceLens finds first in the file).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

// Prefix of the event autograd's engine records around one backward node.
inline constexpr std::string_view kBackwardNodePrefix = "autograd::engine::evaluate_function:";

// For every CPU event (index into trace.cpu): the index of the backward node paired with it,
// or -1. Empty when no op carries a sequence number (the trace was not recorded with autograd,
// or with a profiler that drops the numbers).
std::vector<int32_t> PairForwardWithBackward(const TraceData& trace);

}  // namespace sextant
