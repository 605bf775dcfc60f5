// Megatron's --moe-layer-freq, as experiment and model files write it.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config_node.h"

namespace sextant {

// Which of `num_layers` layers are MoE layers. `value` (nullptr or null = every layer) is
// an integer N (layer i is MoE when i % N == 0, megatron/training/arguments.py), the same
// as a string, a YAML list of 0/1, or a Python list expression such as "[1,0,1]" or
// "([0]*3+[1]*58)" (DeepSeek-V3's Primus model file). A malformed value, an entry other
// than 0 or 1, or a pattern whose length is not num_layers is a UserError at the value.
std::vector<bool> MoeLayerPattern(const ConfigNode* value, int64_t num_layers);

}  // namespace sextant
