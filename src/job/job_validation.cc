#include "job/job_validation.h"

#include <fmt/format.h>

#include "parallel/pipeline_layout.h"

namespace sextant {
namespace {

class Checker {
 public:
  explicit Checker(const Provenance& provenance) : provenance_(provenance) {}

  // "tensor_model_parallel_size=3 (exp.yaml:12)": the key as written, once.
  std::string Show(std::string_view canonical, int64_t value) const {
    return fmt::format("{}={}{}", provenance_.KeyOf(canonical), value,
                       provenance_.Location(canonical));
  }

  std::string Where(std::string_view canonical) const { return provenance_.Describe(canonical); }

  [[noreturn]] void Fail(const std::string& message) const { ThrowUserError(message); }

 private:
  const Provenance& provenance_;
};

void CheckLayerSplit(const Job& job, const Checker& check, bool allow_uneven,
                     std::vector<std::string>& notes) {
  const ParallelPlan& p = job.parallel;
  const int64_t layers = job.model.num_layers;
  const int64_t stages = static_cast<int64_t>(p.pp) * p.vpp;
  if (!p.layout.empty()) {
    std::vector<LayoutStage> parsed;
    try {
      parsed = ParsePipelineLayout(p.layout);
    } catch (const UserError& e) {
      check.Fail(fmt::format("pipeline_model_parallel_layout{}: {}",
                             check.Where("pipeline_model_parallel_layout"), e.what()));
    }
    int64_t decoder_layers = 0;
    for (const LayoutStage& stage : parsed) decoder_layers += stage.decoder_layers;
    if (static_cast<int64_t>(parsed.size()) != stages) {
      check.Fail(
          fmt::format("pipeline_model_parallel_layout \"{}\" has {} stages but {} x {} = {} "
                      "are needed",
                      p.layout, parsed.size(), check.Show("pipeline_model_parallel_size", p.pp),
                      check.Show("virtual_pipeline_model_parallel_size", p.vpp), stages));
    }
    if (decoder_layers != layers) {
      check.Fail(
          fmt::format("pipeline_model_parallel_layout \"{}\" places {} decoder layers but {}",
                      p.layout, decoder_layers, check.Show("num_layers", layers)));
    }
    int64_t mtp_layers = 0;
    for (const LayoutStage& stage : parsed) mtp_layers += stage.mtp_layers;
    if (mtp_layers != 0 && mtp_layers != job.model.mtp_num_layers) {
      check.Fail(fmt::format(
          "pipeline_model_parallel_layout \"{}\" places {} MTP layers but mtp_num_layers={}",
          p.layout, mtp_layers, job.model.mtp_num_layers));
    }
    if (mtp_layers == 0 && job.model.mtp_num_layers > 0) {
      // Megatron-Core asserts "Number of mtp layers in layout must match mtp_num_layers"
      // (PipelineParallelLayerLayout.validate_layer_layout); Primus's example launch scripts
      // pass mtp_num_layers 0 beside such layouts.
      notes.push_back(
          fmt::format("{} but pipeline_model_parallel_layout places no MTP layer (no m), which "
                      "Megatron-Core refuses; projected with the MTP layers on the last stage: add "
                      "--mtp_num_layers 0 to leave them out",
                      check.Show("mtp_num_layers", job.model.mtp_num_layers)));
    }
    return;
  }
  if (p.first_stage_layers >= 0 || p.last_stage_layers >= 0) {
    int64_t rest = layers;
    int64_t middle = p.pp;
    if (p.first_stage_layers >= 0) {
      rest -= p.first_stage_layers;
      --middle;
    }
    if (p.last_stage_layers >= 0) {
      rest -= p.last_stage_layers;
      --middle;
    }
    if (p.pp < 2 || rest < 0 || (middle <= 0 && rest != 0) ||
        (middle > 0 && rest % (middle * p.vpp) != 0)) {
      check.Fail(fmt::format(
          "{} layers cannot be split: {}, {}, and the remaining {} layers over {} middle stage(s) "
          "of {}",
          layers,
          check.Show("decoder_first_pipeline_num_layers",
                     std::max<int64_t>(p.first_stage_layers, 0)),
          check.Show("decoder_last_pipeline_num_layers", std::max<int64_t>(p.last_stage_layers, 0)),
          rest, std::max<int64_t>(middle, 0), check.Show("pipeline_model_parallel_size", p.pp)));
    }
    return;
  }
  if (!LayersSplitEvenly(layers, p.pp, p.vpp) && allow_uneven) {
    notes.push_back(fmt::format(
        "num_layers {} does not divide over {} pipeline stages: uneven split, as Primus "
        "pads the pipeline (allow_padding_num_layers)",
        layers, stages));
    return;
  }
  if (!LayersSplitEvenly(layers, p.pp, p.vpp)) {
    check.Fail(fmt::format(
        "{} is not divisible by {} x {} (set decoder_first/last_pipeline_num_layers or "
        "pipeline_model_parallel_layout for an uneven split)",
        check.Show("num_layers", layers), check.Show("pipeline_model_parallel_size", p.pp),
        check.Show("virtual_pipeline_model_parallel_size", p.vpp)));
  }
}

}  // namespace

std::string MegatronFsdp2Refusal(const ParallelPlan& plan) {
  if (plan.pp > 1) {
    return fmt::format("pipeline parallelism (pipeline_model_parallel_size {})", plan.pp);
  }
  if (plan.ep > 1) {
    return fmt::format("expert parallelism (expert_model_parallel_size {})", plan.ep);
  }
  if (plan.distributed_optimizer) {
    return "the distributed optimizer (use_distributed_optimizer true; FSDP2 already shards the "
           "optimizer state)";
  }
  return "";
}

bool LayersSplitEvenly(int64_t num_layers, int pp, int vpp) {
  const int64_t stages = static_cast<int64_t>(pp) * vpp;
  return stages > 0 && num_layers % stages == 0;
}

void ValidateJob(const Job& job, const Provenance& provenance, bool allow_uneven_layers,
                 std::vector<std::string>& notes) {
  const Checker check(provenance);
  const ModelSpec& m = job.model;
  const ParallelPlan& p = job.parallel;
  const TrainingSettings& t = job.training;
  const int64_t world = job.cluster.WorldSize();

  for (auto [name, value] :
       {std::pair<std::string_view, int64_t>{"tensor_model_parallel_size", p.tp},
        {"pipeline_model_parallel_size", p.pp},
        {"context_parallel_size", p.cp},
        {"expert_model_parallel_size", p.ep},
        {"expert_tensor_parallel_size", p.etp},
        {"virtual_pipeline_model_parallel_size", p.vpp},
        {"micro_batch_size", t.micro_batch_size},
        {"seq_length", t.seq_length}}) {
    if (value < 1) check.Fail(fmt::format("{} must be positive", check.Show(name, value)));
  }
  // A LoRA adapter's rank is split over the (expert) tensor-parallel group: A beside a
  // column-parallel layer is a ColumnParallelLinear with r outputs, and Megatron's divide()
  // asserts that the group size divides them (job/lora_adapter.h).
  if (t.lora.enabled && t.lora.rank % p.tp != 0) {
    check.Fail(fmt::format("{} does not divide {}", check.Show("tensor_model_parallel_size", p.tp),
                           check.Show("lora.dim", t.lora.rank)));
  }
  if (t.lora.enabled && m.IsMoe() && t.lora.rank % p.etp != 0 &&
      (t.lora.Targets("linear_fc1") || t.lora.Targets("linear_fc2"))) {
    check.Fail(fmt::format("{} does not divide {}",
                           check.Show("expert_tensor_parallel_size", p.etp),
                           check.Show("lora.dim", t.lora.rank)));
  }
  // Attention heads and key/value groups are split over the tensor-parallel group.
  if (m.num_attention_heads % p.tp != 0) {
    check.Fail(fmt::format("{} does not divide {}", check.Show("tensor_model_parallel_size", p.tp),
                           check.Show("num_attention_heads", m.num_attention_heads)));
  }
  if (m.attention == AttentionType::kStandard && m.num_query_groups % p.tp != 0) {
    check.Fail(fmt::format("{} does not divide {}", check.Show("tensor_model_parallel_size", p.tp),
                           check.Show("num_query_groups", m.num_query_groups)));
  }
  if (p.vpp > 1 && p.pp < 2) {
    check.Fail(fmt::format("{} needs pipeline parallelism, but {}",
                           check.Show("virtual_pipeline_model_parallel_size", p.vpp),
                           check.Show("pipeline_model_parallel_size", p.pp)));
  }
  CheckLayerSplit(job, check, allow_uneven_layers, notes);

  // World = TP x CP x PP x DP for the dense part and ETP x EP x PP x EDP for the experts.
  if (world % (static_cast<int64_t>(p.tp) * p.cp * p.pp) != 0) {
    check.Fail(fmt::format("{} x {} x {} does not divide the {} GPUs",
                           check.Show("tensor_model_parallel_size", p.tp),
                           check.Show("context_parallel_size", p.cp),
                           check.Show("pipeline_model_parallel_size", p.pp), world));
  }
  if (world % (static_cast<int64_t>(p.etp) * p.ep * p.pp) != 0) {
    check.Fail(fmt::format("{} x {} x {} does not divide the {} GPUs",
                           check.Show("expert_tensor_parallel_size", p.etp),
                           check.Show("expert_model_parallel_size", p.ep),
                           check.Show("pipeline_model_parallel_size", p.pp), world));
  }
  // HSDP: the replicas split the data-parallel GPUs into equal shard groups (torchtitan's
  // ParallelDims asserts dp_replicate x dp_shard = the data-parallel size).
  if (p.fsdp2 && p.fsdp_replicas > 1 && (int64_t{p.dp} * p.cp) % p.fsdp_replicas != 0) {
    check.Fail(fmt::format("{} does not divide the {} data-parallel GPUs (DP x CP)",
                           check.Show("data_parallel_replicate_degree", p.fsdp_replicas),
                           int64_t{p.dp} * p.cp));
  }
  if (m.IsMoe()) {
    if (m.moe.num_experts % p.ep != 0) {
      check.Fail(fmt::format("{} does not divide {}",
                             check.Show("expert_model_parallel_size", p.ep),
                             check.Show("num_experts", m.moe.num_experts)));
    }
    if (m.moe.router_topk > m.moe.num_experts) {
      check.Fail(fmt::format("{} exceeds {}", check.Show("moe_router_topk", m.moe.router_topk),
                             check.Show("num_experts", m.moe.num_experts)));
    }
  } else if (p.ep > 1) {
    check.Fail(fmt::format("{} but the model has no experts",
                           check.Show("expert_model_parallel_size", p.ep)));
  }
  // Megatron-Core's combined 1F1B all-to-all overlap (TransformerConfig.__post_init__): it
  // pairs another micro-batch's computation with each layer's all-to-all, which exists only
  // with expert parallelism, and only the interleaved pipeline schedule implements it.
  if (t.ep_a2a_combined_1f1b) {
    const std::string overlap =
        "overlap_moe_expert_parallel_comm" + check.Where("overlap_moe_expert_parallel_comm");
    if (p.ep < 2) {
      check.Fail(fmt::format("{} needs expert parallelism, but {}", overlap,
                             check.Show("expert_model_parallel_size", p.ep)));
    }
    if (p.pp > 1 && p.vpp < 2) {
      check.Fail(
          fmt::format("{} with {} needs virtual pipeline stages (Megatron-Core runs it only in the "
                      "interleaved schedule): set --num-virtual-stages-per-pipeline-rank 2 or more",
                      overlap, check.Show("pipeline_model_parallel_size", p.pp)));
    }
  }
  // Context parallelism splits each sequence into 2 x CP chunks (load-balanced causal mask).
  if (p.cp > 1 && t.seq_length % (2 * p.cp) != 0) {
    check.Fail(fmt::format("{} is not divisible by 2 x {}", check.Show("seq_length", t.seq_length),
                           check.Show("context_parallel_size", p.cp)));
  }
  if (p.sequence_parallel && p.tp < 2) {
    check.Fail(fmt::format("sequence_parallel requires {} > 1",
                           check.Show("tensor_model_parallel_size", p.tp)));
  }
  // Every data-parallel rank runs whole micro-batches: GBS = MBS x DP x micro-batches.
  const int64_t per_step = t.micro_batch_size * p.dp;
  if (t.global_batch_size <= 0 || t.global_batch_size % per_step != 0) {
    check.Fail(fmt::format(
        "{} is not divisible by {} x data-parallel size {} (= {} GPUs / (TP {} x PP {} x CP {}))",
        check.Show("global_batch_size", t.global_batch_size),
        check.Show("micro_batch_size", t.micro_batch_size), p.dp, world, p.tp, p.pp, p.cp));
  }
}

}  // namespace sextant
