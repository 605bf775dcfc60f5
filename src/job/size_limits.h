// Bounds on every size and count a configuration, a flag or a published-run row can give.
// Each bound is far above any real training job, and small enough that the products the
// projections form later (tokens = GBS x seq, activations ~ MBS x seq x hidden x layers,
// parameters ~ layers x hidden x FFN x experts) stay below 2^53 and so can neither overflow
// int64 nor lose precision in a double.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sextant {

class Provenance;
struct Job;

struct SizeRange {
  int64_t min;
  int64_t max;
};

// Largest derived product accepted (2^53, the largest double that counts exactly).
inline constexpr int64_t kMaxDerivedProduct = int64_t{1} << 53;
inline constexpr SizeRange kParallelDegreeRange{1, int64_t{1} << 20};

// The range of a canonical (Megatron-named) size, e.g. "seq_length"; nullopt for other keys.
std::optional<SizeRange> SizeRangeOf(std::string_view canonical);

// Checks each size of `job` against SizeRangeOf and the derived products against
// kMaxDerivedProduct. Throws UserError naming the key, the value and where it was set
// (from `provenance`): "micro_batch_size=4611686018427387904 (--micro-batch-size) ...".
void CheckJobSizes(const Job& job, const Provenance& provenance);

}  // namespace sextant
