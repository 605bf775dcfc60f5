// Runs independent jobs on a fixed number of std::threads. Jobs are claimed in index
// order from a shared counter, so long and short jobs balance across threads.
#pragma once

#include <cstddef>
#include <functional>

namespace sextant {

// The number of hardware threads (at least 1).
unsigned HardwareThreads();

// Calls job(i) for every i in [0, count) on up to `threads` threads (0 = all cores) and
// waits. The first exception thrown by a job is rethrown here after all threads stop.
void ParallelFor(size_t count, const std::function<void(size_t)>& job, unsigned threads = 0);

}  // namespace sextant
