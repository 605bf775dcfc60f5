// Consistency checks of a built Job: every parallel degree against the model and the
// world size, the layer split over pipeline stages, and the batch arithmetic.
#pragma once

#include <string>
#include <vector>

#include "job/config_reader.h"
#include "job/job.h"

namespace sextant {

// Throws UserError naming the keys and values involved, with the file:line (or flag,
// or environment variable) each was set by, as recorded in `provenance`.
// `allow_uneven_layers` (Primus allow_padding_num_layers) accepts a layer count that does
// not divide over the pipeline stages; a note is added to `notes` instead.
void ValidateJob(const Job& job, const Provenance& provenance, bool allow_uneven_layers,
                 std::vector<std::string>& notes);

// Whether `num_layers` split evenly over PP x VPP model chunks: ValidateJob's rule for a job
// without a layout or first/last-stage layer counts, for callers that prune before building.
bool LayersSplitEvenly(int64_t num_layers, int pp, int vpp);

// Why Megatron-LM refuses --use-torch-fsdp2 with this layout ("" if it does not):
// arguments.py validate_args asserts PP 1, EP 1 and no distributed optimizer with FSDP2. For
// the Megatron config reader and for the search, which offers only what runs.
std::string MegatronFsdp2Refusal(const ParallelPlan& plan);

}  // namespace sextant
