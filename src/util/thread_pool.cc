#include "util/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sextant {

unsigned HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

void ParallelFor(size_t count, const std::function<void(size_t)>& job, unsigned threads) {
  if (threads == 0) threads = HardwareThreads();
  threads = static_cast<unsigned>(std::min<size_t>(threads, count));
  std::atomic<size_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        next = count;  // stop handing out work
      }
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace sextant
