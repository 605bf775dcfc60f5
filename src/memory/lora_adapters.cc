#include "memory/lora_adapters.h"

#include <algorithm>
#include <string>

#include "memory/activation_memory.h"
#include "util/dtype.h"
#include "util/units.h"

namespace sextant {
namespace {

int64_t ParamsOf(const LoraSpec& lora, const std::vector<LoraAdaptedLinear>& linears) {
  int64_t params = 0;
  for (const LoraAdaptedLinear& l : linears) {
    params += LoraAdapterParamsOf(lora.rank, l.in, l.out, l.split, l.shards);
  }
  return params;
}

// The LM head (a column-parallel layer over the padded vocabulary) and an MTP module's
// 2H -> H projection, when targeted.
int64_t HeadAdapterParams(const Job& job, std::string_view module) {
  const LoraSpec& lora = job.training.lora;
  if (!lora.Targets(module)) return 0;
  const ModelSpec& m = job.model;
  const int64_t tp = std::max(1, job.parallel.tp);
  if (module == "output_layer") {
    return LoraAdapterParamsOf(lora.rank, m.hidden_size, m.PaddedVocabSize(tp) / tp,
                               TpSplit::kColumn, tp);
  }
  return LoraAdapterParamsOf(lora.rank, 2 * m.hidden_size, m.hidden_size, TpSplit::kReplicated, tp);
}

}  // namespace

int64_t LoraAdapterParams(const Job& job, int64_t layer) {
  return ParamsOf(job.training.lora, LoraAdaptedLinears(job, layer));
}

int64_t LoraActivationBytes(const Job& job, int64_t layer) {
  const LoraSpec& lora = job.training.lora;
  const ParallelPlan& p = job.parallel;
  const double b = DTypeBytes(job.training.precision.HalfPrecision());
  const bool sp = p.sequence_parallel && p.tp > 1;
  double bytes = 0;
  for (const LoraAdaptedLinear& l : LoraAdaptedLinears(job, layer)) {
    const double input = static_cast<double>(l.tokens) * l.in;
    if (lora.dropout > 0 && lora.dropout_before) bytes += input;  // 1-byte mask
    if (sp && !l.expert && l.split != TpSplit::kRow) bytes += input * b * (1.0 - 1.0 / p.tp);
  }
  return static_cast<int64_t>(bytes);
}

std::vector<int64_t> LoraAdapterParamsPerRank(const Job& job, const ParallelPlan& plan,
                                              StageShape shape) {
  std::vector<int64_t> out(static_cast<size_t>(plan.pp), 0);
  if (!job.training.lora.enabled) return out;
  const int64_t head = HeadAdapterParams(job, "output_layer");
  const int64_t last = job.model.num_layers - 1;
  for (const VirtualStage& vs : PlaceLayers(job.model, plan, shape)) {
    int64_t& rank = out[static_cast<size_t>(vs.pp_rank)];
    for (int64_t i = 0; i < vs.num_layers; ++i) rank += LoraAdapterParams(job, vs.first_layer + i);
    if (vs.has_output) rank += head;
    // An MTP module: its 2H -> H projection, the model's last layer again and the LM head.
    rank +=
        vs.mtp_layers * (HeadAdapterParams(job, "eh_proj") + LoraAdapterParams(job, last) + head);
  }
  return out;
}

}  // namespace sextant
