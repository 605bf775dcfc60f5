#include "trace/kernel_name.h"

namespace sextant {
namespace {

bool EndsAnIdentifierOrTemplate(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '>';
}

}  // namespace

std::string_view ShortKernelName(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  if (name.empty() || name.back() != ')') return name;
  // The parameter list is the parenthesised group that ends the name; parentheses nest in it
  // (function-pointer types) and in "(anonymous namespace)" before it.
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') {
      ++depth;
    } else if (name[i] == '(' && --depth == 0) {
      if (i > 0 && EndsAnIdentifierOrTemplate(name[i - 1])) return name.substr(0, i);
      return name;
    }
  }
  return name;
}

std::string PersonCellText(const Column& column, const std::string& text) {
  return column.header == "kernel" ? std::string(ShortKernelName(text)) : text;
}

}  // namespace sextant
