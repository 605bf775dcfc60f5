#include "trace/op_arguments.h"

#include <charconv>

namespace sextant {

std::vector<Shape> ParseInputDims(std::string_view raw) {
  std::vector<Shape> shapes;
  int depth = 0;
  bool nested_too_deep = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char ch = raw[i];
    if (ch == '[') {
      ++depth;
      if (depth == 2) {
        shapes.emplace_back();
        nested_too_deep = false;
      } else if (depth > 2) {
        nested_too_deep = true;  // a list of tensors: no single shape
      }
    } else if (ch == ']') {
      if (depth == 3 && !shapes.empty()) shapes.back().clear();
      --depth;
      if (depth < 0) return {};
      if (depth == 1 && nested_too_deep && !shapes.empty()) shapes.back().clear();
    } else if (depth == 2 && (ch == '-' || (ch >= '0' && ch <= '9'))) {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(raw.data() + i, raw.data() + raw.size(), value);
      if (ec != std::errc()) return {};
      shapes.back().push_back(value);
      i = static_cast<size_t>(ptr - raw.data()) - 1;
    }
  }
  return depth == 0 ? shapes : std::vector<Shape>{};
}

std::vector<std::string> ParseStringList(std::string_view raw) {
  std::vector<std::string> out;
  size_t i = raw.find('[');
  if (i == std::string_view::npos) return out;
  ++i;
  while (i < raw.size()) {
    while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == ',')) ++i;
    if (i >= raw.size() || raw[i] == ']') break;
    std::string value;
    if (raw[i] == '"') {
      for (++i; i < raw.size() && raw[i] != '"'; ++i) {
        if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
        value += raw[i];
      }
      ++i;
    } else {
      int depth = 0;  // a number, null or nested list: not a string
      for (; i < raw.size(); ++i) {
        if (raw[i] == '[') ++depth;
        if (raw[i] == ']') {
          if (depth == 0) break;
          --depth;
        }
        if (raw[i] == ',' && depth == 0) break;
      }
    }
    out.push_back(std::move(value));
  }
  return out;
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<int> BytesPerElement(std::string_view t) {
  if (t == "c10::BFloat16" || t == "c10::Half" || t == "short int" || t == "BFloat16" ||
      t == "Half")
    return 2;
  if (t == "float" || t == "int" || t == "unsigned int" || t == "Float" || t == "Int") return 4;
  if (t == "double" || t == "long int" || t == "long" || t == "Long" || t == "Double" ||
      t == "c10::complex<float>") {
    return 8;
  }
  if (t == "bool" || t == "unsigned char" || t == "signed char" || t == "Bool" || t == "Byte" ||
      t == "Char" || t.find("float8") != std::string_view::npos ||
      t.find("Float8") != std::string_view::npos || t.find("float4") != std::string_view::npos) {
    return 1;
  }
  return std::nullopt;
}

std::optional<DType> FloatFormat(std::string_view t) {
  if (t == "c10::BFloat16" || t == "BFloat16") return DType::kBF16;
  if (t == "c10::Half" || t == "Half") return DType::kFP16;
  if (t == "float" || t == "Float") return DType::kFP32;
  if (t.find("float8") != std::string_view::npos || t.find("Float8") != std::string_view::npos) {
    return DType::kFP8;
  }
  if (t.find("float4") != std::string_view::npos || t.find("Float4") != std::string_view::npos) {
    return DType::kFP4;
  }
  return std::nullopt;
}

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "True" || text == "true" || text == "1") return true;
  if (text == "False" || text == "false" || text == "0") return false;
  return std::nullopt;
}

}  // namespace sextant
