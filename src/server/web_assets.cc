#include "server/web_assets.h"

namespace sextant {

std::string_view WebAsset(std::string_view name) {
  for (const WebAssetEntry& a : WebAssets()) {
    if (a.name == name) return a.bytes;
  }
  return {};
}

}  // namespace sextant
