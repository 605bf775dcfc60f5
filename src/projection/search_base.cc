#include "projection/search_base.h"

#include <array>
#include <string>
#include <vector>

#include "util/error.h"

namespace sextant {

Job BuildSearchBase(JobRequest request, int target_nodes) {
  if (target_nodes <= 0) {
    ThrowUserError(
        "projection search needs --target-nodes N: the number of nodes to find the best "
        "configuration for");
  }
  request.target_nodes = target_nodes;
  request.pipeline_schedule.clear();
  try {
    Job job = BuildJob(request);
    if (job.training.unrounded_global_batch_size == 0) return job;
    // The config's own layout and micro-batch size do not split its global batch at this node
    // count, and the builder rounded it as a projection of that layout must. The search
    // chooses its own layout and micro-batch size, so it keeps the configured batch: retried
    // as the user's own number, with a neutral layout below when the config's does not split.
    request.global_batch_size = job.training.unrounded_global_batch_size;
    request.micro_batch_size = 1;
    return BuildJob(request);
  } catch (const UserError& original) {
    std::vector<std::array<int, 3>> layouts = {{1, 1, 1}};  // TP, CP, PP
    for (int tp : {8, 4, 2}) {
      layouts.push_back({tp, target_nodes, 1});
      layouts.push_back({tp, 1, target_nodes});
    }
    for (const auto& [tp, cp, pp] : layouts) {
      JobRequest neutral = request;
      neutral.micro_batch_size = 1;
      neutral.num_virtual_stages = 1;
      neutral.target_ep = 1;
      neutral.overrides.emplace_back("tensor_model_parallel_size", std::to_string(tp));
      neutral.overrides.emplace_back("context_parallel_size", std::to_string(cp));
      neutral.overrides.emplace_back("pipeline_model_parallel_size", std::to_string(pp));
      try {
        return BuildJob(neutral);
      } catch (const UserError&) {
        // try the next layout
      }
    }
    throw original;
  }
}

}  // namespace sextant
