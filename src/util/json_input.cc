#include "util/json_input.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.h"

namespace sextant {
namespace {

void CheckNesting(std::string_view text, const std::string& file, int max_nesting,
                  std::string_view what) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_nesting) {
        ThrowUserError({file, -1, -1, static_cast<int64_t>(i)}, "",
                       fmt::format("JSON nested deeper than {} levels; not {}", max_nesting, what));
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

}  // namespace

nlohmann::json ParseUntrustedJson(std::string_view text, const std::string& file, int max_nesting,
                                  std::string_view what) {
  CheckNesting(text, file, max_nesting, what);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at ...".
    std::string reason = e.what();
    const size_t at = reason.find("parse error");
    if (at != std::string::npos) reason = reason.substr(at);
    ThrowUserError({file, -1, -1, static_cast<int64_t>(e.byte > 0 ? e.byte - 1 : 0)}, "",
                   "invalid JSON: " + reason);
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406: a number too large for a double ("1e400").
    std::string reason = e.what();
    const size_t bracket = reason.find("] ");
    if (bracket != std::string::npos) reason = reason.substr(bracket + 2);
    ThrowUserError({file}, "", "invalid JSON: " + reason);
  }
}

void RefuseUnknownJsonKeys(const nlohmann::json& j, std::initializer_list<std::string_view> known,
                           const std::string& file, const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      ThrowUserError(SourceLocation{file}, where + key,
                     fmt::format("is not a key here (known: {})", fmt::join(known, ", ")));
    }
  }
}

const nlohmann::json& RequiredJsonMember(const nlohmann::json& j, const char* name,
                                         const std::string& file, const std::string& where) {
  const auto it = j.find(name);
  if (it == j.end()) ThrowUserError(SourceLocation{file}, where + name, "is missing");
  return *it;
}

size_t FirstInvalidUtf8(std::string_view text) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    uint64_t word = 0;
    if (i + 8 <= n) {
      std::memcpy(&word, text.data() + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {  // eight ASCII bytes
        i += 8;
        continue;
      }
    }
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The sequence length and the range of its second byte (RFC 3629 §4).
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;   // no overlong forms
      if (c == 0xED) high = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;   // no overlong forms
      if (c == 0xF4) high = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + length > n || byte(i + 1) < low || byte(i + 1) > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

}  // namespace sextant
