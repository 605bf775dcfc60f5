#include "model/model_spec.h"

namespace sextant {

bool ModelSpec::IsMoeLayer(int64_t layer) const {
  if (!IsMoe()) return false;
  if (moe.moe_layers.empty()) return true;
  return layer >= 0 && layer < static_cast<int64_t>(moe.moe_layers.size()) && moe.moe_layers[layer];
}

bool ModelSpec::IsSlidingWindowLayer(int64_t layer) const {
  if (sliding_window <= 0) return false;
  return sliding_window_period <= 0 || layer % sliding_window_period != sliding_window_period - 1;
}

ModelSpec::LayerAttention ModelSpec::AttentionOf(int64_t layer) const {
  LayerAttention a;
  a.head_dim = kv_channels > 0 ? kv_channels
                               : (num_attention_heads > 0 ? hidden_size / num_attention_heads : 0);
  a.kv_heads = num_query_groups > 0 ? num_query_groups : num_attention_heads;
  if (IsSlidingWindowLayer(layer)) {
    a.window = sliding_window;
    return a;
  }
  if (global_attention.kv_channels > 0) a.head_dim = global_attention.kv_channels;
  if (global_attention.num_query_groups > 0) a.kv_heads = global_attention.num_query_groups;
  if (global_attention.shared_kv) a.kv_tensors = 1;
  return a;
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
