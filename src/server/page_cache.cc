#include "server/page_cache.h"

#include <atomic>
#include <utility>

namespace sextant {

std::shared_ptr<const ViewContent> PageCache::Find(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  it->second.last_use = ++clock_;
  return it->second.page;
}

void PageCache::Insert(uint64_t key, std::shared_ptr<const ViewContent> page) {
  if (!page) return;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = entries_[key];
  if (entry.page) bytes_ -= entry.page->bytes();
  bytes_ += page->bytes();
  entry.page = std::move(page);
  entry.last_use = ++clock_;
  while (bytes_ > budget_ && entries_.size() > 1) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) continue;
      if (oldest == entries_.end() || it->second.last_use < oldest->second.last_use) oldest = it;
    }
    bytes_ -= oldest->second.page->bytes();
    entries_.erase(oldest);
  }
}

size_t PageCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

PageCache& PageCache::Shared() {
  static PageCache cache(size_t{1} << 30);
  return cache;
}

uint64_t PageCache::NewKey() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

}  // namespace sextant
