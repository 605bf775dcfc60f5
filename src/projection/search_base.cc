#include "projection/search_base.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

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
  // A base whose batch the builder kept as configured; nullopt if it rounded it (the layout it
  // was built with does not split the batch) or refused the layout.
  auto exact = [](const JobRequest& r) -> std::optional<Job> {
    try {
      Job job = BuildJob(r);
      if (job.training.unrounded_global_batch_size == 0) return job;
    } catch (const UserError&) {
    }
    return std::nullopt;
  };
  std::optional<UserError> original;
  std::optional<Job> rounded;
  try {
    Job job = BuildJob(request);
    if (job.training.unrounded_global_batch_size == 0) return job;
    rounded = job;
    // The config's own layout (or a parallel size given on the command line) does not split
    // its global batch at this node count, and the builder rounded it as a projection of that
    // layout must. The search chooses its own layout and micro-batch size, so it keeps the
    // configured batch.
    request.global_batch_size = job.training.unrounded_global_batch_size;
  } catch (const UserError& e) {
    original = e;
  }
  request.micro_batch_size = 1;
  if (std::optional<Job> job = exact(request)) return *job;
  // Neutral layouts: all data parallel, else one model replica over every GPU (TP inside a
  // node, CP or PP across nodes); then the same without FSDP2, which refuses pipeline stages
  // and some splits (the search decides the sharding itself).
  std::vector<std::array<int, 3>> layouts = {{1, 1, 1}};  // TP, CP, PP
  for (int tp : {8, 4, 2}) {
    layouts.push_back({tp, target_nodes, 1});
    layouts.push_back({tp, 1, target_nodes});
  }
  for (const bool keep_fsdp2 : {true, false}) {
    for (const auto& [tp, cp, pp] : layouts) {
      JobRequest neutral = request;
      // The neutral sizes replace any the command line gave (a key given twice is refused).
      std::erase_if(neutral.overrides, [](const auto& o) {
        return o.first == "tensor_model_parallel_size" || o.first == "context_parallel_size" ||
               o.first == "pipeline_model_parallel_size" || o.first == "use_torch_fsdp2";
      });
      neutral.num_virtual_stages = 1;
      neutral.target_ep = 1;
      neutral.overrides.emplace_back("tensor_model_parallel_size", std::to_string(tp));
      neutral.overrides.emplace_back("context_parallel_size", std::to_string(cp));
      neutral.overrides.emplace_back("pipeline_model_parallel_size", std::to_string(pp));
      if (!keep_fsdp2) neutral.overrides.emplace_back("use_torch_fsdp2", "false");
      if (std::optional<Job> job = exact(neutral)) return *job;
    }
  }
  // No layout splits the configured batch on these nodes: the batch as the builder rounded it
  // (Primus's rule for a run scaled to other nodes; the report says "configured N").
  if (rounded) return *rounded;
  if (original) throw *original;
  ThrowUserError(
      fmt::format("projection search: no layout on {} node(s) splits the global batch into whole "
                  "micro-batches",
                  target_nodes));
}

}  // namespace sextant
