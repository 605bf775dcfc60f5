#include "trace/op_arguments.h"

#include <limits>

#include <algorithm>
#include <cctype>

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
  // A hostile record's dimensions may not fit their product: it saturates instead of
  // overflowing.
  int64_t n = 1;
  for (int64_t d : shape) {
    int64_t product = 0;
    if (__builtin_mul_overflow(n, d, &product))
      return (n < 0) != (d < 0) ? std::numeric_limits<int64_t>::min()
                                : std::numeric_limits<int64_t>::max();
    n = product;
  }
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

std::optional<int> TraceLensBytesPerElement(std::string_view dtype) {
  std::string t(dtype);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "double" || t == "long int") return 8;
  if (t == "float" || t == "scalar" || t == "int") return 4;
  if (t == "c10::half" || t == "c10::bfloat16") return 2;
  if (t == "c10::float8_e4m3fnuz" || t == "c10::float8_e4m3fn" || t == "c10::float8_e5m2" ||
      t == "c10::float8_e8m0fnu" || t == "unsigned char" || t == "signed char" || t == "fp8" ||
      t == "c10::float4_e2m1fn_x2" || t == "fp4")
    return 1;
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

namespace {

// Python's str repr: single quotes unless the text holds a single quote and no double quote;
// backslashes, the chosen quote and control characters escaped.
void AppendPythonString(const std::string& text, std::string& out) {
  const bool has_single = text.find('\'') != std::string::npos;
  const char quote = has_single && text.find('"') == std::string::npos ? '"' : '\'';
  out += quote;
  for (unsigned char c : text) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
}

void AppendPython(const nlohmann::json& v, PythonSequence as, std::string& out) {
  switch (v.type()) {
    case nlohmann::json::value_t::array: {
      const bool tuple = as == PythonSequence::kTuple;
      out += tuple ? '(' : '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) out += ", ";
        AppendPython(v[i], as, out);
      }
      if (tuple && v.size() == 1) out += ',';  // a one-element tuple
      out += tuple ? ')' : ']';
      break;
    }
    case nlohmann::json::value_t::string: AppendPythonString(v.get<std::string>(), out); break;
    case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; break;
    case nlohmann::json::value_t::null: out += "None"; break;
    case nlohmann::json::value_t::number_integer: out += std::to_string(v.get<int64_t>()); break;
    case nlohmann::json::value_t::number_unsigned: out += std::to_string(v.get<uint64_t>()); break;
    case nlohmann::json::value_t::number_float: {
      // Python's repr: the shortest text that reads back, with ".0" on whole numbers.
      std::string text = fmt::format("{}", v.get<double>());
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
      out += text;
      break;
    }
    default: out += v.dump(); break;  // objects do not occur in argument records
  }
}

}  // namespace

std::string PythonRepr(std::string_view raw_json, PythonSequence as) {
  if (raw_json.empty()) return "";
  // Argument records nest two or three deep; a hostile file's deep nesting would recurse
  // without bound below (and in the JSON value's destructor).
  constexpr int kMaxDepth = 32;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < raw_json.size(); ++i) {
    const char c = raw_json[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return "";
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  const nlohmann::json v = nlohmann::json::parse(raw_json, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return "";
  std::string out;
  AppendPython(v, as, out);
  return out;
}

// A number as Python prints it inside a repr (shortest round trip).
std::string PyNumber(double v) {
  if (!std::isfinite(v)) return "nan";
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Python's repr of a str (AppendPythonString's quoting and escapes).
std::string PyString(std::string_view text) {
  std::string out;
  AppendPythonString(std::string(text), out);
  return out;
}

ArgumentReprs::ArgumentReprs(const TraceData& trace)
    : trace_(trace), index_of_raw_(trace.strings.size(), kNotParsed) {}

uint32_t ArgumentReprs::Of(uint32_t raw) {
  if (raw == 0) return 0;
  uint32_t& index = index_of_raw_[raw];
  if (index == kNotParsed) index = texts_.Intern(PythonRepr(trace_.Name(raw)));
  return index;
}

}  // namespace sextant
