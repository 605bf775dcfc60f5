#include "config/toml_nesting.h"

#include <vector>

#include <fmt/format.h>

#include "config/config_node.h"

namespace sextant {
namespace {

std::string_view TrimTomlKey(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

// Depth counts one level per dotted-key part (in a [header], [[header]] or key = value), per
// inline table and per array. Strings and comments are skipped, so a '.' or '[' inside them is
// not counted; numbers (1.5) are values, never keys, so their dots are not counted either.
void CheckTomlNesting(std::string_view text, const std::string& file_name, int max_depth,
                      int64_t max_values) {
  int64_t line = 1;
  int64_t column = 0;
  int header_depth = 0;    // parts of the last [table] header
  std::vector<char> open;  // '[' (array) or '{' (inline table) not yet closed in a value
  bool in_header = false;  // between the [ of a header and its closing ]
  bool in_key = true;      // reading a key (dots separate parts) rather than a value
  int key_parts = 1;       // parts of the key being read
  // Values: one per key = value, per table header and per array element (counted at the
  // array's '[' and at each ',' in it), so `[{},{},...]` counts its elements.
  int64_t values = 0;
  size_t key_begin = 0;     // where the top-level key being read starts
  std::string_view header;  // the last [table] header's text
  std::string_view key;     // the last top-level key
  size_t header_begin = 0;
  auto fail_if_deep = [&](int depth) {
    if (depth > max_depth) {
      ThrowUserError(SourceLocation{file_name, line, column}, "",
                     fmt::format("nesting deeper than {} levels at line {}", max_depth, line));
    }
  };
  auto count_value = [&] {
    if (++values <= max_values) return;
    std::string name(header);
    if (!key.empty()) name += (name.empty() ? "" : ".") + std::string(key);
    ThrowUserError(SourceLocation{file_name, line, column}, ShortText(name),
                   fmt::format("document holds more than {} values", max_values));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      if (open.empty()) {
        in_key = true;
        key_parts = 1;
        in_header = false;
        key_begin = i + 1;
      }
      continue;
    }
    if (c == '#') {  // comment to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      // Basic or literal string, single- or multi-line; basic strings have \ escapes.
      const bool triple = text.substr(i, 3) == std::string_view(c == '"' ? "\"\"\"" : "'''");
      const std::string_view close = triple ? text.substr(i, 3) : text.substr(i, 1);
      i += close.size();
      while (i < text.size() && text.substr(i, close.size()) != close) {
        if (c == '"' && text[i] == '\\') ++i;
        if (i < text.size() && text[i] == '\n') {
          ++line;
          column = 0;
        }
        ++i;
      }
      i += close.size() - 1;
      continue;
    }
    if (in_header) {
      if (c == '.') fail_if_deep(++key_parts);
      if (c == ']') {
        header = TrimTomlKey(text.substr(header_begin, i - header_begin));
        key = {};
        count_value();
        header_depth = key_parts;
        in_header = false;
        in_key = false;  // the rest of the line can only be `]` or a comment
      }
      continue;
    }
    const int base = header_depth + static_cast<int>(open.size());
    if (in_key) {
      if (c == '[' && open.empty()) {  // a [table] or [[array of tables]] header
        if (i + 1 < text.size() && text[i + 1] == '[') ++i;
        header_begin = i + 1;
        in_header = true;
        key_parts = 1;
        fail_if_deep(1);
        continue;
      }
      if (c == '.') fail_if_deep(base + ++key_parts);
      if (c == '=') {
        fail_if_deep(base + key_parts);
        if (open.empty()) key = TrimTomlKey(text.substr(key_begin, i - key_begin));
        count_value();
        in_key = false;
      }
      if (c == '}' && !open.empty()) {  // an empty inline table: {}
        open.pop_back();
        in_key = false;
      }
      continue;
    }
    if (c == '[' || c == '{') {
      if (c == '[') count_value();
      open.push_back(c);
      fail_if_deep(header_depth + static_cast<int>(open.size()));
      in_key = c == '{';
      key_parts = 1;
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty() && open.back() == '[') {
      count_value();
    } else if (c == ',' && !open.empty() && open.back() == '{') {
      in_key = true;
      key_parts = 1;
    }
  }
}

}  // namespace sextant
