#include "report/json_stream.h"

#include <stdexcept>

namespace sextant {

void JsonStream::Write(std::string_view text) {
  buffer_ += text;
  if (buffer_.size() >= kPiece) Flush();
}

void JsonStream::Flush() {
  if (buffer_.empty()) return;
  sink_(buffer_);
  buffer_.clear();
}

void JsonStream::Element() {
  if (keyed_) {  // the value of a key: on the key's line
    keyed_ = false;
    return;
  }
  if (open_.empty()) return;
  // dump(1): a line of its own per element, one space of indentation per open container.
  Write(open_.back().elements++ > 0 ? ",\n" : "\n");
  buffer_.append(open_.size(), ' ');
}

void JsonStream::Open(char bracket) {
  Element();
  Write(std::string_view(&bracket, 1));
  open_.push_back({bracket == '{' ? '}' : ']'});
}

void JsonStream::End() {
  if (open_.empty() || keyed_) throw std::logic_error("JsonStream: End without an open value");
  const Level level = open_.back();
  open_.pop_back();
  // An empty container closes on its own line: "[]", "{}".
  if (level.elements > 0) {
    Write("\n");
    buffer_.append(open_.size(), ' ');
  }
  Write(std::string_view(&level.close, 1));
}

void JsonStream::Key(std::string_view key) {
  if (open_.empty() || open_.back().close != '}' || keyed_)
    throw std::logic_error("JsonStream: a key outside an object");
  Element();
  Write(nlohmann::json(std::string(key)).dump());  // quoted and escaped as nlohmann does
  Write(": ");
  keyed_ = true;
}

void JsonStream::Value(const nlohmann::json& value) {
  Element();
  const std::string text = value.dump(1);
  // Its own lines indented as deep as the containers around it.
  size_t from = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    Write(std::string_view(text).substr(from, nl + 1 - from));
    buffer_.append(open_.size(), ' ');
    from = nl + 1;
  }
  Write(std::string_view(text).substr(from));
}

}  // namespace sextant
