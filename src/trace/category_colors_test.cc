#include "trace/category_colors.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "trace/kernel_category.h"

namespace sextant {
namespace {

TEST(CategoryColorsTest, EveryKernelCategoryHasAColourOfItsOwn) {
  for (size_t c = 0; c < kKernelCategories; ++c) {
    const std::string name(CategoryName(static_cast<KernelCategory>(c)));
    EXPECT_NE(CategoryColor(name), "") << name;
  }
  for (const char* part : {"computation", "idle", "norm"}) EXPECT_NE(CategoryColor(part), "");
  EXPECT_EQ(CategoryColor("no such category"), "");
  // Two categories share a colour only as two names of one family.
  std::map<std::string, std::string> category_of;
  for (const auto& [category, color] : CategoryColors()) {
    const auto [it, added] = category_of.emplace(color, category);
    if (!added) {
      EXPECT_TRUE((it->second == "reduction/norm" && category == "norm"))
          << it->second << " and " << category << " share " << color;
    }
  }
}

}  // namespace
}  // namespace sextant
