#include "parallel/sharding.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/parameter_count.h"
#include "parallel/pipeline_layout.h"
#include "util/error.h"

namespace sextant {
namespace {

// Model-order virtual stage index -> (pp_rank, chunk).
void AssignRank(int virtual_index, int pp, StageShape shape, VirtualStage& st) {
  if (shape == StageShape::kVShape) {
    // ZBV / DualPipeV: rank r holds stage r (chunk 0) and stage 2*pp-1-r (chunk 1), so the
    // last stage, with the LM head and loss, sits on rank 0.
    if (virtual_index < pp) {
      st.pp_rank = virtual_index;
      st.chunk = 0;
    } else {
      st.pp_rank = 2 * pp - 1 - virtual_index;
      st.chunk = 1;
    }
  } else {
    st.pp_rank = virtual_index % pp;
    st.chunk = virtual_index / pp;
  }
}

std::vector<int64_t> LayersPerStage(const ModelSpec& model, const ParallelPlan& plan) {
  const int stages = plan.pp * plan.vpp;
  const int64_t layers = model.num_layers;
  std::vector<int64_t> counts(stages, 0);
  const bool first = plan.first_stage_layers >= 0;
  const bool last = plan.last_stage_layers >= 0;
  if (first || last) {
    // Megatron: the first (last) virtual stage gets the given count; the remaining layers
    // are split evenly over the other stages and must divide.
    int64_t rest = layers;
    int middle = stages;
    if (first) {
      counts[0] = plan.first_stage_layers;
      rest -= plan.first_stage_layers;
      --middle;
    }
    if (last) {
      counts[stages - 1] = plan.last_stage_layers;
      rest -= plan.last_stage_layers;
      --middle;
    }
    if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && rest % middle != 0)) {
      ThrowUserError(fmt::format(
          "num_layers={} minus decoder_first_pipeline_num_layers={} and "
          "decoder_last_pipeline_num_layers={} leaves {} layers, which do not split evenly over "
          "the other {} pipeline stages (PP={} x VPP={})",
          layers, first ? plan.first_stage_layers : 0, last ? plan.last_stage_layers : 0, rest,
          middle, plan.pp, plan.vpp));
    }
    for (int s = 0; s < stages; ++s) {
      if ((s == 0 && first) || (s == stages - 1 && last)) continue;
      counts[s] = rest / middle;
    }
    return counts;
  }
  if (layers % stages != 0 && plan.pad_uneven_layers) {
    const int64_t per = (layers + stages - 1) / stages;
    int64_t left = layers;
    for (auto& c : counts) {
      c = std::min(per, left);
      left -= c;
    }
    return counts;
  }
  if (layers % stages != 0) {
    ThrowUserError(fmt::format(
        "num_layers={} is not divisible by pipeline_model_parallel_size={} x virtual stages={}; "
        "set decoder_first/last_pipeline_num_layers or pipeline_model_parallel_layout",
        layers, plan.pp, plan.vpp));
  }
  for (auto& c : counts) c = layers / stages;
  return counts;
}

}  // namespace

std::optional<FirstLastStageLayers> BalancedFirstLastStageLayers(int64_t layers, int pp) {
  if (pp < 2 || layers < pp) return std::nullopt;
  if (pp == 2) return FirstLastStageLayers{layers - layers / 2, layers / 2};
  const int64_t middle = (layers + pp - 1) / pp;
  const int64_t rest = layers - middle * (pp - 2);
  FirstLastStageLayers split{rest - rest / 2, rest / 2};
  if (split.last < 1 || split.first > middle) return std::nullopt;
  return split;
}

std::vector<VirtualStage> PlaceLayers(const ModelSpec& model, const ParallelPlan& plan,
                                      StageShape shape) {
  if (plan.pp < 1 || plan.vpp < 1) ThrowUserError("pipeline sizes must be at least 1");
  if (shape == StageShape::kVShape && plan.vpp != 2) {
    ThrowUserError(
        fmt::format("V-shape schedules need exactly 2 virtual stages per rank, got {}", plan.vpp));
  }
  const int stages = plan.pp * plan.vpp;
  std::vector<VirtualStage> out(stages);
  if (!plan.layout.empty()) {
    auto parsed = ParsePipelineLayout(plan.layout);
    if (static_cast<int>(parsed.size()) != stages) {
      ThrowUserError(SourceLocation{}, "pipeline_model_parallel_layout",
                     fmt::format("has {} stages but PP={} x VPP={} needs {}", parsed.size(),
                                 plan.pp, plan.vpp, stages));
    }
    int64_t next = 0, mtp = 0;
    for (int v = 0; v < stages; ++v) {
      VirtualStage& st = out[v];
      st.virtual_index = v;
      AssignRank(v, plan.pp, shape, st);
      st.first_layer = next;
      st.num_layers = parsed[v].decoder_layers;
      st.has_embedding = parsed[v].embedding;
      st.has_output = parsed[v].loss;
      st.mtp_layers = parsed[v].mtp_layers;
      next += st.num_layers;
      mtp += st.mtp_layers;
    }
    if (next != model.num_layers) {
      ThrowUserError(
          SourceLocation{}, "pipeline_model_parallel_layout",
          fmt::format("places {} decoder layers but num_layers={}", next, model.num_layers));
    }
    if (mtp == 0 && model.mtp_num_layers > 0) {
      // Layouts written before MTP existed (Primus's DeepSeek-V3 examples) leave out 'm':
      // Megatron then builds the MTP modules with the loss, on the last stage.
      for (auto& st : out) {
        if (st.has_output) st.mtp_layers = model.mtp_num_layers;
      }
      mtp = model.mtp_num_layers;
    }
    if (mtp != model.mtp_num_layers) {
      ThrowUserError(
          SourceLocation{}, "pipeline_model_parallel_layout",
          fmt::format("places {} MTP layers but mtp_num_layers={}", mtp, model.mtp_num_layers));
    }
    return out;
  }
  const auto counts = LayersPerStage(model, plan);
  int64_t next = 0;
  for (int v = 0; v < stages; ++v) {
    VirtualStage& st = out[v];
    st.virtual_index = v;
    AssignRank(v, plan.pp, shape, st);
    st.first_layer = next;
    st.num_layers = counts[v];
    next += counts[v];
  }
  out.front().has_embedding = true;
  out.back().has_output = true;
  // Megatron builds the MTP modules after the decoder on the last pipeline stage.
  out.back().mtp_layers = model.mtp_num_layers;
  return out;
}

std::vector<RankParams> ParamsPerRank(const ModelSpec& model, const ParallelPlan& plan,
                                      StageShape shape) {
  const int64_t tp = plan.tp;
  const int64_t expert_shards = static_cast<int64_t>(plan.ep) * plan.etp;
  const ModelParams counts = CountParameters(model, model.PaddedVocabSize(plan.tp));
  const auto stages = PlaceLayers(model, plan, shape);

  std::vector<RankParams> out(static_cast<size_t>(std::max(1, plan.pp)));
  std::vector<bool> holds_embedding(out.size(), false), holds_output(out.size(), false);
  for (const auto& st : stages) {
    RankParams& r = out[static_cast<size_t>(st.pp_rank)];
    auto add_layer = [&](const LayerParams& lp) {
      // TP shards the weight matrices; norms, routers and row-parallel biases are replicated.
      r.dense += (lp.attention + lp.dense_mlp + lp.shared_experts) / tp + lp.attention_bias +
                 lp.norms + lp.router;
      r.expert += lp.routed_experts / expert_shards;
    };
    for (int64_t i = 0; i < st.num_layers; ++i) add_layer(counts.layers[st.first_layer + i]);
    for (int64_t i = 0; i < st.mtp_layers && i < static_cast<int64_t>(counts.mtp_layers.size());
         ++i) {
      add_layer(counts.mtp_layers[i]);
    }
    if (st.mtp_layers > 0 && model.mtp_num_layers > 0) {
      r.dense += counts.mtp_extra * st.mtp_layers / model.mtp_num_layers / tp;
    }
    if (st.has_embedding) holds_embedding[static_cast<size_t>(st.pp_rank)] = true;
    if (st.has_output) holds_output[static_cast<size_t>(st.pp_rank)] = true;
  }
  for (size_t rank = 0; rank < out.size(); ++rank) {
    RankParams& r = out[rank];
    if (holds_embedding[rank]) {
      r.embedding += counts.embedding / tp;  // vocab-parallel embedding
    }
    if (holds_output[rank]) {
      r.dense += counts.final_norm;
      if (model.untie_embeddings_and_output_weights) {
        r.embedding += counts.output_layer / tp;
      } else if (!holds_embedding[rank]) {
        // Tied weights across stages: Megatron keeps a copy of the word embedding on the last
        // stage and all-reduces its gradient with the first stage.
        r.embedding += counts.embedding / tp;
      }
    }
    r.dense += r.embedding;
  }
  return out;
}

RankParams ParamsOnRank(const ModelSpec& model, const ParallelPlan& plan, int pp_rank,
                        StageShape shape) {
  return ParamsPerRank(model, plan, shape).at(static_cast<size_t>(pp_rank));
}

}  // namespace sextant
