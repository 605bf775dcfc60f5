#include "trace/category_colors.h"

namespace sextant {

const std::vector<std::pair<std::string, std::string>>& CategoryColors() {
  static const std::vector<std::pair<std::string, std::string>> colors = {
      {"GEMM", "#4a78c2"},        {"attention", "#c44e52"},
      {"elementwise", "#3a9e6f"}, {"reduction/norm", "#e0a030"},
      {"norm", "#e0a030"},        {"communication", "#8172b2"},
      {"memory", "#9c6b3c"},      {"other", "#7f7f7f"},
      {"computation", "#2a9fb0"}, {"idle", "#d3d3d3"}};
  return colors;
}

std::string CategoryColor(std::string_view category) {
  for (const auto& [name, color] : CategoryColors()) {
    if (name == category) return color;
  }
  return "";
}

}  // namespace sextant
