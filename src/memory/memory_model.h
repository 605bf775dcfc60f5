// Per-GPU memory of a training job, per pipeline rank (SPEC §3.1): model state, activations of
// the micro-batches in flight, and named buffers; verdict against the GPU's HBM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job/job.h"
#include "parallel/sharding.h"

namespace sextant {

struct NamedBytes {
  std::string name;
  int64_t bytes = 0;
  std::string assumption;  // how the number was obtained
};

struct StageMemory {
  int pp_rank = 0;
  int64_t layers = 0;       // transformer layers on this rank (all chunks)
  int64_t params = 0;       // parameters held by one GPU of this rank
  int64_t lora_params = 0;  // of which trainable LoRA adapters (0 without LoRA)
  int64_t params_bytes = 0;
  int64_t grads_bytes = 0;
  int64_t optimizer_bytes = 0;
  int64_t activations_bytes = 0;
  int64_t buffers_bytes = 0;
  int64_t total_bytes = 0;
  double in_flight_micro_batches = 0;  // chunk-micro-batches, summed over chunks
  std::vector<NamedBytes> activation_parts;
  std::vector<NamedBytes> buffers;
};

enum class Verdict { kFits, kAtRisk, kOom };
const char* VerdictName(Verdict v);  // "FITS", "AT-RISK", "OOM"

// The same job under another schedule (`--pipeline-schedule-algorithm all`).
struct ScheduleMemory {
  std::string schedule;
  bool ran = false;
  std::string skipped_because;
  int64_t peak_bytes = 0;
  int peak_rank = 0;
  Verdict verdict = Verdict::kFits;
};

struct MemoryReport {
  std::string model;
  std::string gpu;
  ParallelPlan parallel;
  std::string schedule;
  int64_t micro_batches = 0;
  std::vector<StageMemory> stages;
  int64_t peak_bytes = 0;  // allocated: what the tensors need at the peak
  int peak_rank = 0;
  // What PyTorch's caching allocator holds (reserves) at that peak: peak_bytes x
  // kCachingAllocatorReserve. torch.cuda.max_memory_reserved, which torchtitan logs as its
  // memory and rocm-smi / nvidia-smi see (plus the context).
  int64_t reserved_peak_bytes = 0;
  int64_t capacity_bytes = 0;  // what the job may use: HBM, or JAX's preallocated part of it
  int64_t hbm_bytes = 0;       // the GPU's HBM
  Verdict verdict = Verdict::kFits;
  // What the optimizer state holds: "master weights + moments", or the moments alone where the
  // parameters are updated in their own dtype (optax in MaxText).
  std::string optimizer_state = "master weights + moments";
  // Under FSDP2 the weights and gradients rows hold shards: what the weights row holds of
  // the stage's parameters ("" = all of them, in their training dtype), and after the count.
  std::string weights_shard;
  std::string weights_note;
  std::string grads_state = "main gradients";
  std::vector<ScheduleMemory> schedules;  // filled for schedule "all"
  std::vector<std::string> assumptions;
};

// In-flight chunk-micro-batches per rank (outer) and chunk (inner). Empty = closed forms of
// memory/in_flight.h for the job's schedule.
using InFlightTable = std::vector<std::vector<double>>;

// Peak reserved / peak allocated bytes of PyTorch's caching allocator over a training step:
// the median of the seven training-step snapshots in corpus/snapshots (1.019, 1.032, 1.040,
// 1.115, 1.131, 1.164, 1.217; forward-only and inference snapshots left out), re-derived by
// allocator_reserve_test.cc. Cached blocks that a later, larger request cannot reuse.
inline constexpr double kCachingAllocatorReserve = 1.115;

// Fraction of HBM above which a job is AT-RISK: the CUDA/HIP context, allocator
// fragmentation and library workspaces not modelled here typically take 5-10% of HBM.
inline constexpr double kAtRiskFraction = 0.92;

// kNumbersOnly leaves out the descriptions and assumptions (the same numbers): for callers that
// rank many candidates by peak and verdict, where formatting them would be most of the work.
enum class MemoryDetail { kFull, kNumbersOnly };

MemoryReport ProjectMemory(const Job& job, const InFlightTable& in_flight = {},
                           MemoryDetail detail = MemoryDetail::kFull);

// "OOM: 183.0 GiB peak of 179.1 GiB" for a projection that does not fit, "" for one that does
// (AT-RISK included): the note a row of a table carries beside its times.
std::string OomNote(const MemoryReport& r);

}  // namespace sextant
