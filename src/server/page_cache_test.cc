#include "server/page_cache.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

std::shared_ptr<const ViewContent> Page(size_t html, size_t json) {
  return std::make_shared<const ViewContent>(
      ViewContent{std::string(html, 'h'), std::string(json, 'j')});
}

TEST(PageCacheTest, KeepsPagesWithinTheBudgetDroppingTheLeastRecentlyServed) {
  PageCache cache(100);
  cache.Insert(1, Page(30, 10));  // 40 bytes
  cache.Insert(2, Page(20, 20));  // 40: 80 in all
  EXPECT_EQ(cache.bytes(), 80u);
  ASSERT_NE(cache.Find(1), nullptr);  // 1 is now the more recently served
  cache.Insert(3, Page(30, 0));       // 110 > 100: page 2 goes, 70 left
  EXPECT_EQ(cache.Find(2), nullptr);
  EXPECT_NE(cache.Find(1), nullptr);
  EXPECT_NE(cache.Find(3), nullptr);
  EXPECT_EQ(cache.bytes(), 70u);
}

TEST(PageCacheTest, APageLargerThanTheBudgetIsKeptAloneAndAReplacedPageIsCountedOnce) {
  PageCache cache(100);
  cache.Insert(1, Page(10, 0));
  cache.Insert(2, Page(500, 0));  // over the budget by itself: everything else goes
  EXPECT_EQ(cache.Find(1), nullptr);
  EXPECT_NE(cache.Find(2), nullptr);
  EXPECT_EQ(cache.bytes(), 500u);
  cache.Insert(2, Page(5, 5));  // rebuilt smaller
  EXPECT_EQ(cache.bytes(), 10u);
}

TEST(PageCacheTest, AHolderKeepsADroppedPage) {
  PageCache cache(10);
  cache.Insert(1, Page(8, 0));
  const std::shared_ptr<const ViewContent> held = cache.Find(1);
  cache.Insert(2, Page(8, 0));
  EXPECT_EQ(cache.Find(1), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->html, std::string(8, 'h'));
  EXPECT_NE(PageCache::NewKey(), PageCache::NewKey());
}

}  // namespace
}  // namespace sextant
