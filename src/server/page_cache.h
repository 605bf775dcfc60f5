// The pages `sextant serve` has built, kept for the next request up to a byte budget. A trace
// view is read once however often its page is asked for, while the budget lasts; past it the
// least recently served pages are dropped and built again when asked for, so serving a folder
// of many large traces does not hold every report in memory at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace sextant {

struct ViewContent {
  std::string html;  // the page, self-contained (also what the export downloads)
  std::string json;  // the data behind it, as /api/N.json sends it
  size_t bytes() const { return html.size() + json.size(); }
};

class PageCache {
 public:
  explicit PageCache(size_t budget_bytes) : budget_(budget_bytes) {}

  // The page kept under `key`, or null; a hit makes it the most recently served.
  std::shared_ptr<const ViewContent> Find(uint64_t key);
  // Keeps `page` under `key`, then drops the least recently served other pages while the kept
  // ones exceed the budget (a request still sending a dropped page holds its own reference).
  void Insert(uint64_t key, std::shared_ptr<const ViewContent> page);
  size_t bytes() const;

  // The one `serve` uses: 1 GiB, a few large trace reports or hundreds of config pages.
  static PageCache& Shared();
  // A key no other view has.
  static uint64_t NewKey();

 private:
  struct Entry {
    std::shared_ptr<const ViewContent> page;
    uint64_t last_use = 0;
  };
  mutable std::mutex mu_;
  size_t budget_;
  size_t bytes_ = 0;
  uint64_t clock_ = 0;
  std::unordered_map<uint64_t, Entry> entries_;
};

}  // namespace sextant
