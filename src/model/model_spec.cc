#include "model/model_spec.h"

namespace sextant {

bool ModelSpec::IsMoeLayer(int64_t layer) const {
  if (!IsMoe()) return false;
  if (moe.moe_layers.empty()) return true;
  return layer >= 0 && layer < static_cast<int64_t>(moe.moe_layers.size()) && moe.moe_layers[layer];
}

int64_t ModelSpec::NumMoeLayers() const {
  int64_t n = 0;
  for (int64_t i = 0; i < num_layers; ++i) n += IsMoeLayer(i) ? 1 : 0;
  return n;
}

// Megatron-LM megatron/training/tokenizer/tokenizer.py:_vocab_size_with_padding.
int64_t ModelSpec::PaddedVocabSize(int64_t tensor_parallel) const {
  const int64_t multiple =
      make_vocab_size_divisible_by * (tensor_parallel > 0 ? tensor_parallel : 1);
  if (multiple <= 0) return vocab_size;
  return (vocab_size + multiple - 1) / multiple * multiple;
}

}  // namespace sextant
