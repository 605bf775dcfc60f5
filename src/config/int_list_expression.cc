#include "config/int_list_expression.h"

#include <cctype>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {
namespace {

constexpr int64_t kMaxListLength = 1'000'000;
constexpr int kMaxNesting = 64;

class Parser {
 public:
  Parser(std::string_view text, std::string_view key) : text_(text), key_(key) {}

  IntOrList Parse() {
    IntOrList value = Sum(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text");
    return value;
  }

 private:
  [[noreturn]] void Fail(std::string_view reason) const {
    ThrowUserError(fmt::format("{}: cannot evaluate \"{}\": {} at character {}", key_, text_,
                               reason, pos_ + 1));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  IntOrList Sum(int depth) {
    IntOrList value = Product(depth);
    while (Accept('+')) value = Add(std::move(value), Product(depth));
    return value;
  }

  IntOrList Product(int depth) {
    IntOrList value = Atom(depth);
    while (Accept('*')) value = Multiply(std::move(value), Atom(depth));
    return value;
  }

  IntOrList Atom(int depth) {
    if (depth > kMaxNesting) Fail("nesting too deep");
    SkipSpace();
    if (Accept('(')) {
      IntOrList value = Sum(depth + 1);
      if (!Accept(')')) Fail("expected ')'");
      return value;
    }
    if (Accept('[')) {
      std::vector<int64_t> list;
      if (Accept(']')) return list;
      while (true) {
        IntOrList element = Sum(depth + 1);
        if (!std::holds_alternative<int64_t>(element)) Fail("nested lists are not supported");
        list.push_back(std::get<int64_t>(element));
        if (static_cast<int64_t>(list.size()) > kMaxListLength) Fail("list too long");
        if (Accept(']')) return list;
        if (!Accept(',')) Fail("expected ',' or ']'");
        if (Accept(']')) return list;  // trailing comma
      }
    }
    bool negative = false;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      Fail("expected a number, '(' or '['");
    }
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) Fail("number too large");
      value = value * 10 + digit;
      ++pos_;
    }
    return negative ? -value : value;
  }

  IntOrList Add(IntOrList left, IntOrList right) {
    if (std::holds_alternative<int64_t>(left) && std::holds_alternative<int64_t>(right)) {
      int64_t sum = 0;
      if (__builtin_add_overflow(std::get<int64_t>(left), std::get<int64_t>(right), &sum)) {
        Fail("integer overflow");
      }
      return sum;
    }
    if (std::holds_alternative<int64_t>(left) || std::holds_alternative<int64_t>(right)) {
      Fail("cannot add a number and a list");
    }
    auto& a = std::get<std::vector<int64_t>>(left);
    const auto& b = std::get<std::vector<int64_t>>(right);
    if (static_cast<int64_t>(a.size() + b.size()) > kMaxListLength) Fail("list too long");
    a.insert(a.end(), b.begin(), b.end());
    return left;
  }

  IntOrList Multiply(IntOrList left, IntOrList right) {
    const bool left_int = std::holds_alternative<int64_t>(left);
    const bool right_int = std::holds_alternative<int64_t>(right);
    if (left_int && right_int) {
      int64_t product = 0;
      if (__builtin_mul_overflow(std::get<int64_t>(left), std::get<int64_t>(right), &product)) {
        Fail("integer overflow");
      }
      return product;
    }
    if (!left_int && !right_int) Fail("cannot multiply two lists");
    const int64_t count =
        std::max<int64_t>(0, left_int ? std::get<int64_t>(left) : std::get<int64_t>(right));
    const auto& list =
        left_int ? std::get<std::vector<int64_t>>(right) : std::get<std::vector<int64_t>>(left);
    // An empty list repeated any number of times is empty: no loop over the count.
    if (list.empty()) return std::vector<int64_t>{};
    if (count > kMaxListLength / static_cast<int64_t>(list.size())) Fail("list too long");
    std::vector<int64_t> out;
    out.reserve(list.size() * count);
    for (int64_t i = 0; i < count; ++i) out.insert(out.end(), list.begin(), list.end());
    return out;
  }

  std::string_view text_;
  std::string_view key_;
  size_t pos_ = 0;
};

}  // namespace

IntOrList EvaluateIntListExpression(std::string_view text, std::string_view key) {
  return Parser(text, key).Parse();
}

}  // namespace sextant
