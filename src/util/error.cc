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

std::string ShortText(std::string_view text, size_t max_chars) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (shown >= max_chars) {
      // Do not cut a UTF-8 sequence in two: continuation bytes are 10xxxxxx.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
        out.pop_back();
      }
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      return out + fmt::format("... ({} bytes)", text.size());
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++shown;
  }
  return out;
}

void ThrowUserError(const SourceLocation& where, std::string_view key, std::string_view reason) {
  throw UserError(FormatLocated(where, key, reason));
}

}  // namespace sextant
