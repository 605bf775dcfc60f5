// libFuzzer target for the simulator's handling of arbitrary op lists: bytes become a small
// schedule (any order, duplicates, gaps, out-of-range ids) and costs. The simulator must either
// finish or raise a UserError (incomplete list, order error, deadlock) — never crash or hang.
#include <cstddef>
#include <cstdint>

#include "pipeline/pipeline_simulator.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  sextant::Schedule schedule;
  schedule.shape.pipeline_ranks = 1 + data[0] % 4;
  schedule.shape.chunks_per_rank = 1 + data[1] % 2;
  schedule.shape.micro_batches = 1 + data[2] % 4;
  schedule.placement =
      data[3] % 2 ? sextant::StageShape::kVShape : sextant::StageShape::kInterleaved;
  if (schedule.placement == sextant::StageShape::kVShape) schedule.shape.chunks_per_rank = 2;
  const int pp = schedule.shape.pipeline_ranks;
  schedule.ops_per_rank.resize(static_cast<size_t>(pp));
  sextant::PipelineCosts costs =
      sextant::UniformCosts(schedule.NumStages(), 1.0, 0.5 + data[3] % 3, 0.5, 10);
  costs.p2p_s = {0.25 * (data[0] >> 4)};
  costs.p2p_overlaps_compute = (data[1] >> 4) % 2 == 0;
  // Each further byte is one op: rank, kind, micro-batch (may be out of range), chunk.
  for (size_t i = 4; i < size; ++i) {
    const uint8_t b = data[i];
    sextant::PipelineOp op;
    op.kind = static_cast<sextant::OpKind>(b & 3);
    op.micro_batch = (b >> 2) & 7;
    op.chunk = (b >> 5) & 1;
    schedule.ops_per_rank[static_cast<size_t>((b >> 6) % pp)].push_back(op);
  }
  try {
    sextant::SimulatePipeline(schedule, costs);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
