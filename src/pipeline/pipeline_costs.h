// What one pipeline step costs, as the caller (the projection, or a user's what-if) measured or
// modelled it. The pipeline area never derives these itself, so it stays independent of models
// and hardware.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sextant {

// Costs of one virtual stage for one micro-batch. Stage s is the s-th slice of the layer stack
// (stage 0 holds the embedding, the last stage the output layer and loss).
struct StageCost {
  double forward_s = 0;          // F
  double backward_input_s = 0;   // B: input-gradient half, used by zero-bubble schedules
  double backward_weight_s = 0;  // W: weight-gradient half, used by zero-bubble schedules
  // Whole backward for schedules that do not split it; a negative value means B + W.
  double backward_combined_s = -1;
  // Forward recomputation (activation checkpointing) that runs right before B or BW.
  double recompute_s = 0;
  // Activations kept from F until the weight gradient is done (W, or BW when not split).
  int64_t activation_bytes = 0;

  double CombinedBackward() const {
    return backward_combined_s >= 0 ? backward_combined_s : backward_input_s + backward_weight_s;
  }
};

struct PipelineCosts {
  std::vector<StageCost> stages;  // one per virtual stage: PP * VPP entries
  // Transfer time of one micro-batch's activation (forward) or gradient (backward) across the
  // boundary between stage s and s+1. Empty: free; one value: every boundary; otherwise one
  // value per boundary (PP*VPP - 1), so intra- and inter-node links can differ. Boundaries
  // inside one rank (the turn of a V-shape placement) never cost anything.
  std::vector<double> p2p_s;
  // True: transfers run on their own stream and only delay the receiver. False: a send keeps
  // the sending rank busy for the transfer time (blocking send/recv).
  bool p2p_overlaps_compute = true;

  double P2PSeconds(int boundary) const {
    if (p2p_s.empty()) return 0;
    if (p2p_s.size() == 1) return p2p_s[0];
    return p2p_s[static_cast<size_t>(boundary)];
  }
};

// Every stage with the same costs; the reference cases of the pipeline literature.
PipelineCosts UniformCosts(int num_stages, double forward_s, double backward_input_s,
                           double backward_weight_s, int64_t activation_bytes = 1);

}  // namespace sextant
