// MaxText's rematerialisation policies (remat_policy, MaxText layers/decoders.py): which
// tensors of a decoder layer each named policy saves, as a RecomputeSpec. One owner for the
// MaxText adapter and for the search, which writes a policy back as an override.
#pragma once

#include <optional>
#include <string_view>

#include "job/job.h"

namespace sextant {

// The policy the search offers for "selective" recompute: Q, K and V saved, the rest re-run.
inline constexpr std::string_view kMaxTextSelectivePolicy = "save_qkv_proj";

// The RecomputeSpec of a named policy ("none", "full", "minimal", "save_dot_except_mlp", ...);
// nullopt for "custom" (its tensors are set one by one) and for names MaxText does not have.
// Offloaded policies are projected as keeping the tensors in GPU memory.
std::optional<RecomputeSpec> MaxTextRematPolicy(std::string_view policy);

// The names MaxText accepts, for an error message.
std::string_view MaxTextRematPolicyNames();

}  // namespace sextant
