#include "pipeline/pipeline_costs.h"

namespace sextant {

PipelineCosts UniformCosts(int num_stages, double forward_s, double backward_input_s,
                           double backward_weight_s, int64_t activation_bytes) {
  PipelineCosts costs;
  StageCost stage;
  stage.forward_s = forward_s;
  stage.backward_input_s = backward_input_s;
  stage.backward_weight_s = backward_weight_s;
  stage.activation_bytes = activation_bytes;
  costs.stages.assign(static_cast<size_t>(num_stages), stage);
  return costs;
}

}  // namespace sextant
