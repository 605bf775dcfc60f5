// The job `projection search` varies: the user's config, loaded on the target nodes.
#pragma once

#include "job/job.h"
#include "job/job_builder.h"

namespace sextant {

// BuildJob(request) on `target_nodes` nodes. The search replaces the config's parallel
// layout and micro-batch size, so a config whose own layout does not fit those nodes is
// loaded with a neutral one instead: all data parallel, else one model replica spread over
// every GPU (TP inside a node, CP or PP across nodes). Throws the original UserError when no
// neutral layout loads either, and a UserError when target_nodes is not positive.
Job BuildSearchBase(JobRequest request, int target_nodes);

}  // namespace sextant
