// Integer arithmetic on user-given sizes that reports overflow instead of wrapping (signed
// overflow is undefined behaviour: a batch size of 2^62 must become an error, not a SIGFPE).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace sextant {

// a x b, or nullopt when it does not fit in int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a + b, or nullopt when it does not fit in int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of all factors, or nullopt as soon as a partial product overflows.
inline std::optional<int64_t> CheckedProduct(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors) {
    const std::optional<int64_t> next = CheckedMul(product, factor);
    if (!next) return std::nullopt;
    product = *next;
  }
  return product;
}

// True when the product of the factors fits in int64 and is at most `limit`.
inline bool ProductAtMost(std::initializer_list<int64_t> factors, int64_t limit) {
  const std::optional<int64_t> product = CheckedProduct(factors);
  return product.has_value() && *product <= limit;
}

}  // namespace sextant
