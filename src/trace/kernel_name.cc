#include "trace/kernel_name.h"

namespace sextant {
namespace {

bool EndsAnIdentifierOrTemplate(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '>';
}

// `name` without the parenthesised group that ends it when that group follows an identifier or
// a template: a parameter list. Parentheses nest in it (function-pointer types) and in
// "(anonymous namespace)" before it.
std::string_view WithoutParameterList(std::string_view name) {
  if (name.empty() || name.back() != ')') return name;
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

}  // namespace

std::string_view ShortKernelName(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  return WithoutParameterList(name);
}

std::string_view KernelFunctionName(std::string_view name) {
  const std::string_view function = WithoutParameterList(name);
  if (function.size() == name.size()) {
    return name.starts_with("void ") ? name.substr(5) : name;
  }
  // A signature: its return type is every word before the last space outside brackets (the
  // spaces of "(anonymous namespace)" and "<float, 16>" belong to the name).
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < function.size(); ++i) {
    const char c = function[i];
    if (c == '(' || c == '<') {
      ++depth;
    } else if ((c == ')' || c == '>') && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      start = i + 1;
    }
  }
  return function.substr(start);
}

std::string PersonCellText(const Column& column, const std::string& text) {
  return column.header == "kernel" ? std::string(ShortKernelName(text)) : text;
}

}  // namespace sextant
