// Megatron writes some per-layer settings as small Python expressions, e.g.
// moe_layer_freq: "([0]*3+[1]*58)". This evaluates that expression language safely
// (no eval): integers, list literals, parentheses, '+' (add / concatenate) and '*'
// (multiply / repeat).
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace sextant {

using IntOrList = std::variant<int64_t, std::vector<int64_t>>;

// Grammar:  sum := product ('+' product)*      product := atom ('*' atom)*
//           atom := INTEGER | '(' sum ')' | '[' [sum (',' sum)* [',']] ']'
// A list element must be an integer. Lists longer than 1,000,000 elements, integer
// overflow and any other text are errors: throws UserError naming `key` and the
// character offset.
IntOrList EvaluateIntListExpression(std::string_view text, std::string_view key);

}  // namespace sextant
