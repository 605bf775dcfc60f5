// Unsharded parameter counts per component of a ModelSpec. The sharding engine
// (parallel/sharding.h) divides these by TP/ETP/EP/PP; FLOP counting and the model library
// use them whole. Every count is an exact integer number of parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_spec.h"

namespace sextant {

// One transformer layer, split by how tensor parallelism treats each part.
struct LayerParams {
  int64_t attention = 0;       // Q/K/V/O (and MLA down/up projections); TP-sharded
  int64_t attention_bias = 0;  // biases of row-parallel outputs and sinks; replicated
  int64_t norms = 0;           // layer norms incl. q/k norms and MLA latent norms; replicated
  int64_t dense_mlp = 0;       // dense MLP matrices (+ biases); TP-sharded
  int64_t router = 0;          // router weight (+ bias); replicated
  int64_t routed_experts = 0;  // all routed experts together; sharded by EP x ETP
  int64_t shared_experts = 0;  // shared experts; TP-sharded like a dense MLP
  bool is_moe = false;

  int64_t Total() const {
    return attention + attention_bias + norms + dense_mlp + router + routed_experts +
           shared_experts;
  }
  // Parameters one token touches: routed experts count top-k / num_experts of theirs.
  int64_t Active(const ModelSpec& m) const;
};

struct ModelParams {
  int64_t embedding = 0;     // word embeddings (+ learned positions), vocab-parallel
  int64_t output_layer = 0;  // untied LM head; 0 when tied to the embedding
  int64_t final_norm = 0;
  std::vector<LayerParams> layers;      // one per transformer layer
  std::vector<LayerParams> mtp_layers;  // one transformer layer per MTP module
  int64_t mtp_extra = 0;                // MTP projections and norms outside those layers

  int64_t Total() const;
  int64_t Active(const ModelSpec& m) const;  // per-token active parameters (MoE)
};

// Counts with the unpadded vocabulary (the published convention). Pass a padded vocabulary
// to count what Megatron allocates.
ModelParams CountParameters(const ModelSpec& model);
ModelParams CountParameters(const ModelSpec& model, int64_t vocab_size);

// Parameters of the pieces, exposed for tests and the FLOP model.
// One layer's attention weights (layer 0 unless given: global layers may differ).
int64_t AttentionParams(const ModelSpec& model, int64_t layer = 0);
int64_t MlpParams(const ModelSpec& model, int64_t ffn_hidden_size);  // one dense MLP

}  // namespace sextant
