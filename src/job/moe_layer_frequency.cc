#include "job/moe_layer_frequency.h"

#include <algorithm>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "config/int_list_expression.h"
#include "util/error.h"

namespace sextant {

std::vector<bool> MoeLayerPattern(const ConfigNode* node, int64_t num_layers) {
  std::vector<bool> layers(static_cast<size_t>(std::max<int64_t>(num_layers, 0)), true);
  if (node == nullptr || node->IsNull()) return layers;
  constexpr const char* kKey = "moe_layer_freq";
  std::vector<int64_t> pattern;
  int64_t frequency = 0;
  if (node->IsSequence()) {
    for (const ConfigNode& item : node->items) {
      if (!item.IsScalar()) ThrowUserError(item.where, kKey, "list entries must be 0 or 1");
      pattern.push_back(ReadInt(item, kKey).value_or(-1));
    }
  } else if (node->IsScalar()) {
    IntOrList value;
    try {
      value = EvaluateIntListExpression(node->scalar, kKey);
    } catch (const UserError& e) {
      ThrowUserError(node->where, "", e.what());
    }
    if (std::holds_alternative<int64_t>(value)) {
      frequency = std::get<int64_t>(value);
    } else {
      pattern = std::get<std::vector<int64_t>>(value);
    }
  } else {
    ThrowUserError(node->where, kKey, "must be a positive integer or a list");
  }
  if (pattern.empty()) {
    // An integer N makes every N-th layer (0, N, 2N, ...) an MoE layer.
    if (frequency <= 0) ThrowUserError(node->where, kKey, "must be a positive integer or a list");
    for (int64_t i = 0; i < num_layers; ++i) layers[i] = (i % frequency == 0);
    return layers;
  }
  if (static_cast<int64_t>(pattern.size()) != num_layers) {
    ThrowUserError(
        node->where, kKey,
        fmt::format("the pattern has {} entries but num_layers is {}", pattern.size(), num_layers));
  }
  for (int64_t i = 0; i < num_layers; ++i) {
    if (pattern[i] != 0 && pattern[i] != 1) {
      ThrowUserError(node->where, kKey,
                     fmt::format("entry {} is {}; list entries must be 0 or 1", i, pattern[i]));
    }
    layers[i] = pattern[i] == 1;
  }
  return layers;
}

}  // namespace sextant
