// The Primus pipeline-schedule dump (Primus `dump_pp_data`, read by its pp_vis viewer): a
// directory with config.json and one pp_rank_<p>.json per pipeline rank. Each rank file maps
// an iteration key ("1", "2", ...; "0" from Primus's simulator) to one record of times in ms
// since that rank's iteration start. research/primus-observability.md section 2 has the
// schema; corpus/pp_dumps/ has real dumps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sextant {

// config.json. The native dump writes world_size, dp_size, tp_size, ep_size, pp_size, vp_size,
// num_mbs, train_iters; Primus's simulator writes pp_size, vpp_size, micro_batches. Keys that
// are absent read as -1 (only pp_size is required; vp_size defaults to 1).
struct PrimusDumpConfig {
  int64_t world_size = -1;
  int64_t dp_size = -1;
  int64_t tp_size = -1;
  int64_t ep_size = -1;
  int64_t pp_size = -1;
  int64_t vp_size = 1;
  int64_t num_mbs = -1;
  int64_t train_iters = -1;
  // Who wrote the dump: "" for one recorded on GPUs; "primus simulator" for Primus's simulator
  // (recognised by its key spelling); otherwise the config's "generator" string, which
  // Sextant's own dumps set to "sextant" (Primus's viewer ignores keys it does not read).
  std::string generator;
};

// One iteration record of one rank. The *_minibatch / *_chunk lists are empty in native
// Megatron dumps; wgrad lists are empty unless the schedule splits the backward.
struct PrimusDumpIteration {
  std::string key;        // the iteration key as written ("1")
  double total_ms = 0;    // schedule start to end on this rank
  double memory_gib = 0;  // native: max_memory_reserved; simulated: peak activations
  std::vector<double> fwd_start, fwd_end, bwd_start, bwd_end, wgrad_start, wgrad_end;
  std::vector<int64_t> fwd_minibatch, fwd_chunk, bwd_minibatch, bwd_chunk, wgrad_minibatch,
      wgrad_chunk;
};

struct PrimusDumpRank {
  int pp_rank = 0;
  std::vector<PrimusDumpIteration> iterations;  // in numeric key order
};

struct PrimusDump {
  PrimusDumpConfig config;
  std::vector<PrimusDumpRank> ranks;  // pp_rank 0 .. pp_size-1
};

}  // namespace sextant
