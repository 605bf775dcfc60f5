// Errors that reach the user. A UserError is a problem with the user's input (a bad file,
// flag or configuration); the program prints its message on one line and exits with status 1.
// Anything else escaping to main() is an internal error (status 2).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sextant {

// Where in an input a problem was found. Any field may be unknown (empty / -1).
struct SourceLocation {
  std::string file;
  int64_t line = -1;         // 1-based
  int64_t column = -1;       // 1-based
  int64_t byte_offset = -1;  // 0-based, for binary or streamed input

  std::string ToString() const;  // "file:line:col", "file@offset", "file", or ""
};

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// Builds "<location>: <key>: <reason>", leaving out the parts that are empty.
std::string FormatLocated(const SourceLocation& where, std::string_view key,
                          std::string_view reason);

// `text` for an error message: control characters (newlines, tabs, NUL) written as escapes
// so the message stays one line, and anything past `max_chars` replaced by
// "... (N bytes)" so a 50 MB value is not echoed whole.
std::string ShortText(std::string_view text, size_t max_chars = 80);

[[noreturn]] void ThrowUserError(const SourceLocation& where, std::string_view key,
                                 std::string_view reason);
[[noreturn]] inline void ThrowUserError(std::string_view reason) {
  throw UserError(std::string(reason));
}

}  // namespace sextant
