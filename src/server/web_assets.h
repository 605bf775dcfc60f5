// The viewer's front-end (src/server/web/: scripts and style sheets), embedded in the program
// at build time (cmake/EmbedFiles.cmake), so pages work offline and the program needs no files
// beside it.
#pragma once

#include <string_view>
#include <vector>

namespace sextant {

struct WebAssetEntry {
  std::string_view name;  // file name in src/server/web/, e.g. "pp_view.js"
  std::string_view bytes;
};

const std::vector<WebAssetEntry>& WebAssets();

// The named asset; empty if there is none of that name.
std::string_view WebAsset(std::string_view name);

}  // namespace sextant
