#include "util/error.h"

#include <fmt/format.h>

namespace sextant {

std::string SourceLocation::ToString() const {
  if (file.empty() && line < 0 && byte_offset < 0) return "";
  std::string out = file.empty() ? "<input>" : file;
  if (line >= 0) {
    out += fmt::format(":{}", line);
    if (column >= 0) out += fmt::format(":{}", column);
  } else if (byte_offset >= 0) {
    out += fmt::format(" at byte {}", byte_offset);
  }
  return out;
}

std::string FormatLocated(const SourceLocation& where, std::string_view key,
                          std::string_view reason) {
  std::string out = where.ToString();
  if (!key.empty()) {
    if (!out.empty()) out += ": ";
    out += fmt::format("'{}'", key);
  }
  if (!out.empty()) out += ": ";
  out += reason;
  return out;
}

void ThrowUserError(const SourceLocation& where, std::string_view key, std::string_view reason) {
  throw UserError(FormatLocated(where, key, reason));
}

}  // namespace sextant
