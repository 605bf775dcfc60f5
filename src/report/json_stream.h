// Writes JSON exactly as nlohmann::json::dump(1) prints it, a piece at a time, so that a report
// of millions of rows goes out row by row instead of being held as one tree (a row object takes
// about 4 KB) and then as one string. The caller gives an object's keys in the order they are
// to appear: nlohmann's objects print theirs sorted, so a caller matching them sorts them.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sextant {

class JsonStream {
 public:
  // `sink` receives the text in pieces of about kPiece bytes, and the rest on Flush.
  static constexpr size_t kPiece = size_t{1} << 20;
  explicit JsonStream(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {}

  void BeginObject() { Open('{'); }
  void BeginArray() { Open('['); }
  // Closes the innermost object or array.
  void End();
  // Inside an object: the key of the value that follows.
  void Key(std::string_view key);
  // A whole value (a number, a string, a row object), in an array, after a Key, or alone.
  void Value(const nlohmann::json& value);
  // Hands what is buffered to the sink.
  void Flush();

 private:
  void Open(char bracket);
  // Before an element of the innermost container: the separator and its indentation.
  void Element();
  void Write(std::string_view text);

  struct Level {
    char close;
    size_t elements = 0;
  };
  std::function<void(std::string_view)> sink_;
  std::vector<Level> open_;
  bool keyed_ = false;  // a Key was written; its value comes next
  std::string buffer_;
};

}  // namespace sextant
